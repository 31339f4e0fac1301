"""Try other block sizes, num_warps and num_stages at the launch (several variants: timed on a GPU)."""

from __future__ import annotations

from kopt.rewrite.cst import Source
from kopt.rewrite.recipes.base import Context, Proposal, Variant
from kopt.rewrite.recipes.launch_space import (
    LAUNCH_DEFAULTS,
    autotune_config_search,
    config_label,
    launched_autotuned,
    search_configs,
    with_config,
)


def launch_config_search(src: Source, ctx: Context, only: tuple[str, ...] = (), recipe: str = "launch_config_search") -> Proposal:
    if launched_autotuned(src):
        return autotune_config_search(src, ctx, only, recipe)
    launch, knobs, configs, notes = search_configs(src, ctx, only)
    variants = [Variant(config_label(c, knobs), with_config(src, launch, knobs, c), c) for c in configs]
    varied = [n for n in knobs if len({v.config.get(n) for v in variants}) > 1 or variants[0].label.count(n)]
    now = ", ".join(f"{n}={'computed' if knobs[n].computed else knobs[n].value or LAUNCH_DEFAULTS.get(n)}"
                    for n in varied)
    summary = f"{launch.kernel} launch at line {launch.line}: {len(variants)} config(s) of {', '.join(varied)} (now {now})"
    return Proposal(recipe, summary + (f" ({'; '.join(notes)})" if notes else ""), variants)
