"""Split one big block constexpr: smaller tiles, more programs in flight."""

from __future__ import annotations

from kopt.rewrite.cst import NotApplicable, Source
from kopt.rewrite.recipes.base import Context, Proposal, Variant
from kopt.rewrite.recipes.launch_space import block_knobs, only_launch, with_config


def split_block(src: Source, ctx: Context) -> Proposal:
    """Halve (by params.factor) the largest literal block so each thread holds fewer live values."""
    launch, kernel = only_launch(src)
    factor = int(ctx.params.get("factor", 2))
    knobs = {b: src.knob(launch, b) for b in block_knobs(launch, kernel)}
    literal = {b: k for b, k in knobs.items() if k.value is not None}
    if not literal:
        raise NotApplicable("no literal block size at the launch to split: " +
                            "; ".join(k.where for k in knobs.values()) if knobs else "no block constexpr passed")
    name, knob = max(literal.items(), key=lambda kv: kv[1].value)
    if knob.value // factor < 16:
        raise NotApplicable(f"{name}={knob.value} is already small ({knob.where}); splitting it by {factor} leaves < 16")
    config = {name: knob.value // factor}
    source = with_config(src, launch, knobs, config)
    return Proposal("split_block", f"{name} {knob.value} -> {config[name]} ({knob.where})",
                    [Variant(f"{name}={config[name]}", source, config)])
