"""Wrap the kernel in @triton.autotune over the launch space, the grid following the chosen config."""

from __future__ import annotations

from typing import Any

import libcst as cst
import libcst.matchers as m

from kopt.rewrite.cst import Launch, NotApplicable, Source, expr, has_call, names_in, runtime_params
from kopt.rewrite.recipes.base import Context, Proposal, Variant
from kopt.rewrite.recipes.launch_space import (
    autotune_config_search,
    block_knobs,
    config_label,
    launched_autotuned,
    map_key,
    only_launch,
    search_configs,
    with_config,
)


def autotune(src: Source, ctx: Context) -> Proposal:
    """@triton.autotune over block sizes and warps with a key, the grid made a function of the config
    (an already autotuned kernel gets more configs instead)."""
    if launched_autotuned(src):
        return autotune_config_search(src, ctx, recipe="autotune")
    launch, kernel = only_launch(src)
    if has_call(kernel, "atomic_add") or any(c.func.attr.value.startswith("atomic_") for c in
                                             m.findall(kernel, m.Call(func=m.Attribute()))):
        raise NotApplicable(f"{launch.kernel} uses atomics: autotune's repeated benchmark runs would corrupt the output")
    blocks = block_knobs(launch, kernel)
    knobs = {n: src.knob(launch, n) for n in blocks + ["num_warps", "num_stages"]}
    tuned = [b for b in blocks if knobs[b].value is not None]
    if not tuned:
        raise NotApplicable("no literal block size at the launch: " + "; ".join(knobs[b].where for b in blocks)
                            if blocks else "no block constexpr passed at the launch")
    configs = _autotune_configs(ctx, src, launch, knobs, tuned, kernel)
    grid = _grid_following(src, launch, knobs, tuned)
    key = [k for k in ctx.params.get("key", []) if k in runtime_params(kernel)] or \
          [p for p in runtime_params(kernel) if not p.endswith("_ptr") and not p.startswith("stride")][:4]
    if not key:
        raise NotApplicable(f"{launch.kernel} has no integer size argument to key the autotune cache on")
    lines = ",\n        ".join(
        "triton.Config({" + ", ".join(f"{k!r}: {c[k]}" for k in tuned) + "}"
        + "".join(f", {k}={c[k]}" for k in ("num_warps", "num_stages") if k in c) + ")" for c in configs)
    decorator = cst.Decorator(expr(f"triton.autotune(\n    configs=[\n        {lines},\n    ],\n    key={key!r},\n)"))
    drop = set(tuned) | {k for k in ("num_warps", "num_stages") if not knobs[k].absent or any(k in c for c in configs)}
    replacements: dict[int, Any] = {
        id(kernel): kernel.with_changes(decorators=[decorator, *kernel.decorators]),
        id(launch.call): _DropArgs(drop),
        **grid,
    }
    source = src.rewrite(replacements)
    return Proposal("autotune", f"@triton.autotune on {launch.kernel}: {len(configs)} configs of {', '.join(tuned)}, "
                    f"num_warps, key={key}", [Variant(f"autotune x{len(configs)}", source, {})] +
                    [Variant(config_label(c, knobs), with_config(src, launch, knobs, c), c) for c in configs])


def _autotune_configs(ctx: Context, src: Source, launch: Launch, knobs: dict, tuned: list[str],
                      kernel: cst.FunctionDef) -> list[dict[str, int]]:
    given = []
    for raw in ctx.params.get("configs", []) or []:
        config = {}
        for key, value in raw.items():
            target = map_key(key, tuned)
            if target:
                config[target] = value
        if all(t in config for t in tuned):
            given.append(config)
    if given:
        return given
    current = {t: knobs[t].value for t in tuned}
    current["num_warps"] = knobs["num_warps"].value or 4
    _, _, configs, _ = search_configs(src, Context(params={}))
    picked = [current] + [c for c in configs if c != current][:3]
    return [{k: c[k] for k in tuned + ["num_warps"] + (["num_stages"] if "num_stages" in c and
                                                          m.findall(kernel, m.For()) else [])} for c in picked]


class _DropArgs:
    def __init__(self, names: set[str]):
        self.names = names

    def __call__(self, updated: cst.Call) -> cst.Call:
        kept = [a for a in updated.args if a.keyword is None or a.keyword.value not in self.names]
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(args=kept)


def _grid_following(src: Source, launch: Launch, knobs: dict, tuned: list[str]) -> dict[int, Any]:
    """Replacements that make the grid a lambda of the autotuned config."""
    by_var = {}
    for name in tuned:
        value = launch.kwargs[name].value
        if isinstance(value, cst.Name):
            by_var[value.value] = name
    grid, where = launch.grid, launch.grid
    if isinstance(grid, cst.Name):
        bound = src.assignments(launch.function, grid.value)
        if len(bound) != 1:
            raise NotApplicable(f"line {launch.line}: the grid `{grid.value}` is not assigned exactly once")
        where = bound[0][1]
    if isinstance(where, cst.Lambda):
        if not names_in(where.body) & {"meta", where.params.params[0].name.value if where.params.params else "meta"}:
            raise NotApplicable(f"line {src.line(where)}: the grid lambda ignores its config argument")
        return {}
    used = names_in(where) & set(by_var)
    if not used:
        raise NotApplicable(f"line {src.line(where)}: the grid `{src.code(where)}` does not use the block variable, "
                            "so it cannot follow an autotuned block")
    body = where.visit(_ToMeta(by_var))
    return {id(where): cst.Lambda(params=cst.Parameters(params=[cst.Param(cst.Name("meta"))]), body=body)}


class _ToMeta(cst.CSTTransformer):
    def __init__(self, by_var: dict[str, str]):
        self.by_var = by_var

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if original.value in self.by_var:
            return expr(f'meta["{self.by_var[original.value]}"]')
        return updated
