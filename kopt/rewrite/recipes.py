"""Deterministic recipes: source-to-source rewrites of a task file with libcst (formatting kept).

Each recipe takes the task source and the pattern's params, checks its preconditions, and either
returns a Proposal (one or more full task files) or raises NotApplicable saying why it does not apply
and where. Launch-config recipes return several variants: on a GPU the loop benches them and keeps
the best; without one it validates the first (the middle of the search space) and records it untimed.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import libcst as cst
import libcst.matchers as m

from kopt.rewrite.cst import (Launch, NotApplicable, Source, calls, constexpr_params, expr, has_call, names_in,
                              runtime_params)

MAX_VARIANTS = 4  # each variant costs a validation and a bench child on the GPU
SMEM_LIMIT = 220 * 1024  # bytes of shared memory a config may use on sm_90 (228 KB minus Triton's reserve)
# The relative error a reduced-precision fp32 dot brings; the task's tolerance must already allow it.
DOT_PRECISION_RTOL = {"tf32": 1e-3, "tf32x3": 1e-5}
LAUNCH_DEFAULTS = {"num_warps": 4, "num_stages": 3}  # what Triton uses when the launch passes none
MIN_ELEMS_PER_THREAD = 4  # one 128-bit vector of fp32: with fewer, a thread cannot issue the widest load


@dataclass
class Variant:
    label: str  # e.g. "BLOCK_SIZE=2048 num_warps=8"
    source: str
    config: dict[str, int] = field(default_factory=dict)


@dataclass
class Proposal:
    recipe: str
    summary: str  # what the candidate changes, one line
    variants: list[Variant]  # variants[0] is the pick when nothing can be timed


@dataclass
class Context:
    """What a recipe may look at besides the source: the pattern params, the finding and the task."""

    params: dict[str, Any] = field(default_factory=dict)
    kernel_lines: list[int] = field(default_factory=list)
    tolerance: Callable[[str], tuple[float, float]] | None = None  # Task.tolerance
    cases: list[dict] = field(default_factory=list)  # CASES + HELD_OUT


def propose(recipe: str, source: str, ctx: Context | None = None) -> Proposal:
    """Apply a recipe by name; raises NotApplicable with the reason when its preconditions fail."""
    if recipe not in RECIPES:
        raise NotApplicable(f"no deterministic recipe named {recipe!r} (known: {', '.join(RECIPES)})")
    return RECIPES[recipe](Source(source), ctx or Context())


# --- launch configuration ------------------------------------------------------------------------

def _launch(src: Source) -> tuple[Launch, cst.FunctionDef]:
    kernels = src.kernels()
    if not kernels:
        raise NotApplicable("no @triton.jit kernel in the file")
    launches = src.launches()
    if not launches:
        raise NotApplicable(f"no launch `{next(iter(kernels))}[grid](...)` found in a host function")
    if _autotune_call(src, kernels[launches[0].kernel]) is not None:
        raise NotApplicable(f"{launches[0].kernel} is already @triton.autotune'd; its configs choose the launch")
    return launches[0], kernels[launches[0].kernel]


# --- autotuned kernels: the config list is the launch configuration ------------------------------------

MAX_NEW_CONFIGS = 8  # each one costs a benchmark run per shape key when the autotuner tunes


def _autotune_call(src: Source, kernel: cst.FunctionDef) -> cst.Call | None:
    """The kernel's `@triton.autotune(...)` (or a project's own `@x_autotune(...)`) decorator call."""
    for d in kernel.decorators:
        if isinstance(d.decorator, cst.Call) and src.code(d.decorator.func).split(".")[-1].endswith("autotune"):
            return d.decorator
    return None


def _launched_autotuned(src: Source) -> tuple[str, cst.FunctionDef, cst.Call] | None:
    """(name, kernel, its autotune call) of the first launched kernel that is autotuned, else None."""
    kernels = src.kernels()
    for launch in src.launches():
        call = _autotune_call(src, kernels[launch.kernel]) if launch.kernel in kernels else None
        if call is not None:
            return launch.kernel, kernels[launch.kernel], call
    return None


def _config_of(src: Source, node: cst.BaseExpression) -> dict[str, int] | None:
    """`triton.Config({'BM': 64}, num_warps=4, num_stages=3)` -> {'BM': 64, 'num_warps': 4, 'num_stages': 3};
    None when any part is not a literal."""
    if not isinstance(node, cst.Call) or not src.code(node.func).endswith("Config") or not node.args:
        return None
    first, config = node.args[0].value, {}
    if not isinstance(first, cst.Dict):
        return None
    for el in first.elements:
        if not (isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString) and isinstance(el.value, cst.Integer)):
            return None
        config[el.key.evaluated_value] = int(el.value.value)
    for arg in node.args[1:]:
        if arg.keyword is None or not isinstance(arg.value, cst.Integer):
            return None
        config[arg.keyword.value] = int(arg.value.value)
    return config


def _config_code(config: dict[str, int]) -> str:
    blocks = {k: v for k, v in config.items() if k not in LAUNCH_DEFAULTS}
    return ("triton.Config({" + ", ".join(f"{k!r}: {v}" for k, v in blocks.items()) + "}"
            + "".join(f", {k}={config[k]}" for k in LAUNCH_DEFAULTS if k in config) + ")")


def _neighbours(config: dict[str, int], has_loop: bool, only: tuple[str, ...]) -> list[dict[str, int]]:
    """Configs one step from `config`: warps and stages first (they never change results), then each block x2, /2."""
    out = []
    warps = config.get("num_warps", LAUNCH_DEFAULTS["num_warps"])
    out += [{**config, "num_warps": w} for w in (warps // 2, warps * 2) if 1 <= w <= 16]
    if has_loop:
        stages = config.get("num_stages", LAUNCH_DEFAULTS["num_stages"])
        out += [{**config, "num_stages": s} for s in (stages - 1, stages + 1) if 1 <= s <= 6]
    for key, value in config.items():
        if key not in LAUNCH_DEFAULTS and value >= 16:
            out += [{**config, key: v} for v in (value * 2, value // 2) if v >= 16]
    return [c for c in out if not only or set(k for k in c if c[k] != config.get(k)) <= set(only)]


def autotune_config_search(src: Source, ctx: Context, only: tuple[str, ...] = (),
                           recipe: str = "launch_config_search") -> Proposal:
    """An @triton.autotune'd kernel: widen its config list with neighbours of its configs (new ones first, so the
    interpreter, which takes the first config, validates one of them; on a GPU the autotuner picks among all)."""
    name, kernel, call = _launched_autotuned(src)
    arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == "configs"), None)
    if arg is None and call.args and call.args[0].keyword is None:
        arg = call.args[0]
    if arg is None or not isinstance(arg.value, cst.List):
        where = f"line {src.line(call)}"
        shown = src.code(arg.value)[:60] if arg is not None else "missing"
        raise NotApplicable(f"{name}'s autotune configs at {where} are not a literal list (`{shown}`); "
                            "add configs to it by hand or with the LLM proposer")
    configs = [_config_of(src, el.value) for el in arg.value.elements]
    if not configs or any(c is None for c in configs):
        raise NotApplicable(f"{name}'s autotune configs (line {src.line(call)}) are not all literal triton.Config(...)")
    has_loop = bool(m.findall(kernel, m.For() | m.While()))
    seen = [dict(sorted(c.items())) for c in configs]
    new: list[dict[str, int]] = []
    for config in configs:
        for candidate in _neighbours(config, has_loop, only):
            key = dict(sorted(candidate.items()))
            if key not in seen and _fits(candidate, src):
                seen.append(key)
                new.append(candidate)
    new = new[:MAX_NEW_CONFIGS]
    if not new:
        raise NotApplicable(f"{name}'s {len(configs)} autotune configs leave no untried neighbour"
                            + (f" in {', '.join(only)}" if only else ""))
    body = ",\n        ".join([_config_code(c) for c in new] + [src.code(el.value) for el in arg.value.elements])
    source = src.rewrite({id(arg.value): expr(f"[\n        {body},\n    ]")})
    summary = (f"{name}: {len(new)} autotune config(s) added to its {len(configs)} (line {src.line(call)}), "
               f"first {_config_code(new[0])}")
    return Proposal(recipe, summary, [Variant(f"autotune +{len(new)}", source, new[0])])


def _block_knobs(launch: Launch, kernel: cst.FunctionDef) -> list[str]:
    return [p for p in constexpr_params(kernel) if p in launch.kwargs and p.upper() == p]


def _map_key(key: str, blocks: list[str]) -> str | None:
    """A pattern's param name -> this launch's knob: exact, or the generic BLOCK for the one 1-D block."""
    if key in ("num_warps", "num_stages") or key in blocks:
        return key
    if key == "BLOCK":
        ones = [b for b in blocks if "BLOCK" in b or "TILE" in b]
        return ones[0] if len(ones) == 1 else None
    return None


def _default_space(current: dict[str, int], blocks: list[str], has_loop: bool) -> dict[str, list[int]]:
    space = {b: sorted({max(16, current[b] // 2), current[b], current[b] * 2}) for b in blocks if current.get(b)}
    space["num_warps"] = [4, 8]
    if has_loop:
        space["num_stages"] = [2, 3, 4]
    return space


def _search(src: Source, ctx: Context, only: tuple[str, ...] = ()) -> tuple[Launch, dict[str, Any], list[dict[str, int]], list[str]]:
    """(launch, knobs, configs, notes): the configs to try, middle-of-the-space first, current excluded."""
    launch, kernel = _launch(src)
    blocks = _block_knobs(launch, kernel)
    names = blocks + ["num_warps", "num_stages"]
    knobs = {n: src.knob(launch, n) for n in names}
    current = {**LAUNCH_DEFAULTS, **{n: k.value for n, k in knobs.items() if k.value is not None}}
    current.update({n: None for n, k in knobs.items() if k.computed})  # unknown until run time: never "current"
    has_loop = bool(m.findall(kernel, m.For() | m.While()))
    requested = {}
    for key, values in ctx.params.items():
        target = _map_key(key, blocks)
        if target and isinstance(values, list) and values and all(isinstance(v, int) for v in values):
            requested[target] = values
    space = requested or _default_space(current, blocks, has_loop)
    if only:
        space = {k: v for k, v in space.items() if k in only} or {k: v for k, v in
                                                                  _default_space(current, blocks, has_loop).items() if k in only}
    # a computed block may be what the kernel's correctness rests on (a whole row per program): left alone;
    # warps and stages never change results, so a computed one may be replaced by a literal
    computed = [n for n, k in knobs.items() if k.computed and n not in LAUNCH_DEFAULTS]
    notes = [f"{n} is not a literal ({knobs[n].where}); left as is" for n in computed]
    for name in computed:
        space.pop(name, None)
    if "num_stages" in space and not has_loop:
        notes.append("num_stages only matters for a loop, and the kernel has none")
        del space["num_stages"]
    if not space:
        raise NotApplicable("nothing to tune: " + ("; ".join(notes) or "no block constexpr passed at the launch"))
    keys = list(space)
    configs = []
    for combo in itertools.product(*(space[k] for k in keys)):
        config = {**current, **dict(zip(keys, combo))}
        if config != current and _fits(config, src) and _valid(config, blocks) and _feeds_its_warps(config, current, blocks):
            configs.append(config)
    if not configs:
        raise NotApplicable(f"every config in {space} equals the current one, exceeds shared memory, or adds warps "
                            "the tile cannot keep busy")
    configs = [{k: v for k, v in c.items() if v is not None} for c in configs]
    middle = {k: sorted(space[k])[len(space[k]) // 2] for k in keys}
    configs.sort(key=lambda c: sum(c[k] != middle[k] for k in keys))
    if len(configs) > MAX_VARIANTS:
        step = len(configs) / MAX_VARIANTS
        configs = [configs[0]] + [configs[int(i * step)] for i in range(1, MAX_VARIANTS)]
    return launch, knobs, configs, notes


def _valid(config: dict[str, int], blocks: list[str]) -> bool:
    return all(config[b] > 0 and config[b] & (config[b] - 1) == 0 for b in blocks if config.get(b) is not None)


def _feeds_its_warps(config: dict[str, int], current: dict[str, int], blocks: list[str]) -> bool:
    """More warps pay only when the tile keeps every thread busy: a config that raises num_warps may not leave each
    thread fewer tile elements than now and fewer than MIN_ELEMS_PER_THREAD. (On the H200, strided_scale's BLOCK 256
    at 8 warps, one element a thread, ran x0.73 against 4 warps, while BLOCK 1024 at 8 warps won.)"""
    if any(c.get(n) is None for c in (config, current) for n in blocks + ["num_warps"]) or not blocks:
        return True  # a computed block or warp count: the tile is unknown until run time
    if config["num_warps"] <= current["num_warps"]:
        return True
    return _elems_per_thread(config, blocks) >= min(_elems_per_thread(current, blocks), MIN_ELEMS_PER_THREAD)


def _elems_per_thread(config: dict[str, int], blocks: list[str]) -> float:
    return math.prod(config[b] for b in blocks) / (32 * config["num_warps"])


def _fits(config: dict[str, int], src: Source) -> bool:
    """A matmul config's pipelined operand buffers must fit in shared memory."""
    if not all(k in config for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K")):
        return True
    elem = 2 if ("float16" in src.module.code or "bfloat16" in src.module.code) else 4
    stages = max(1, (config.get("num_stages") or 3) - 1)
    return stages * (config["BLOCK_M"] + config["BLOCK_N"]) * config["BLOCK_K"] * elem <= SMEM_LIMIT


def _with_config(src: Source, launch: Launch, knobs: dict[str, Any], config: dict[str, int]) -> str:
    replacements: dict[int, Any] = {}
    added = []
    for name, value in config.items():
        knob = knobs.get(name)
        if knob is None or value is None or (not knob.computed and (knob.value or LAUNCH_DEFAULTS.get(name)) == value):
            continue
        if knob.node is not None:
            replacements[id(knob.node)] = cst.Integer(str(value))
        elif knob.absent:
            added.append(cst.Arg(keyword=cst.Name(name), value=cst.Integer(str(value)),
                                 equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
    if added:
        call = launch.call
        replacements[id(call)] = _AddArgs(added)
    return src.rewrite(replacements)


class _AddArgs:
    """A deferred replacement: append keyword arguments to the already-updated call."""

    def __init__(self, args: list[cst.Arg]):
        self.args = args

    def __call__(self, updated: cst.Call) -> cst.Call:
        existing = list(updated.args)
        if existing:
            existing[-1] = existing[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated.with_changes(args=existing + self.args)


def _label(config: dict[str, int], knobs: dict[str, Any]) -> str:
    def now(k: str) -> int | str | None:
        if k in knobs and knobs[k].computed:
            return "computed"
        return knobs[k].value if k in knobs and knobs[k].value is not None else LAUNCH_DEFAULTS.get(k)

    return " ".join(f"{k}={v}" for k, v in config.items() if now(k) != v) or "current"


def launch_config_search(src: Source, ctx: Context, only: tuple[str, ...] = (), recipe: str = "launch_config_search") -> Proposal:
    if _launched_autotuned(src):
        return autotune_config_search(src, ctx, only, recipe)
    launch, knobs, configs, notes = _search(src, ctx, only)
    variants = [Variant(_label(c, knobs), _with_config(src, launch, knobs, c), c) for c in configs]
    varied = [n for n in knobs if len({v.config.get(n) for v in variants}) > 1 or variants[0].label.count(n)]
    now = ", ".join(f"{n}={'computed' if knobs[n].computed else knobs[n].value or LAUNCH_DEFAULTS.get(n)}"
                    for n in varied)
    summary = f"{launch.kernel} launch at line {launch.line}: {len(variants)} config(s) of {', '.join(varied)} (now {now})"
    return Proposal(recipe, summary + (f" ({'; '.join(notes)})" if notes else ""), variants)


def num_stages_search(src: Source, ctx: Context) -> Proposal:
    if _launched_autotuned(src):
        return autotune_config_search(src, ctx, ("num_stages",), "num_stages_search")
    launch, kernel = _launch(src)
    if not any(has_call(loop, "load") for loop in m.findall(kernel, m.For() | m.While())):
        raise NotApplicable(f"{launch.kernel} has no loop that loads: software pipelining (num_stages) has nothing to overlap")
    return launch_config_search(src, ctx, only=("num_stages",), recipe="num_stages_search")


def split_block(src: Source, ctx: Context) -> Proposal:
    """Halve (by params.factor) the largest literal block so each thread holds fewer live values."""
    launch, kernel = _launch(src)
    factor = int(ctx.params.get("factor", 2))
    knobs = {b: src.knob(launch, b) for b in _block_knobs(launch, kernel)}
    literal = {b: k for b, k in knobs.items() if k.value is not None}
    if not literal:
        raise NotApplicable("no literal block size at the launch to split: " +
                            "; ".join(k.where for k in knobs.values()) if knobs else "no block constexpr passed")
    name, knob = max(literal.items(), key=lambda kv: kv[1].value)
    if knob.value // factor < 16:
        raise NotApplicable(f"{name}={knob.value} is already small ({knob.where}); splitting it by {factor} leaves < 16")
    config = {name: knob.value // factor}
    source = _with_config(src, launch, knobs, config)
    return Proposal("split_block", f"{name} {knob.value} -> {config[name]} ({knob.where})",
                    [Variant(f"{name}={config[name]}", source, config)])


def autotune(src: Source, ctx: Context) -> Proposal:
    """@triton.autotune over block sizes and warps with a key, the grid made a function of the config
    (an already autotuned kernel gets more configs instead)."""
    if _launched_autotuned(src):
        return autotune_config_search(src, ctx, recipe="autotune")
    launch, kernel = _launch(src)
    if has_call(kernel, "atomic_add") or any(c.func.attr.value.startswith("atomic_") for c in
                                             m.findall(kernel, m.Call(func=m.Attribute()))):
        raise NotApplicable(f"{launch.kernel} uses atomics: autotune's repeated benchmark runs would corrupt the output")
    blocks = _block_knobs(launch, kernel)
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
                    [Variant(_label(c, knobs), _with_config(src, launch, knobs, c), c) for c in configs])


def _autotune_configs(ctx: Context, src: Source, launch: Launch, knobs: dict, tuned: list[str],
                      kernel: cst.FunctionDef) -> list[dict[str, int]]:
    given = []
    for raw in ctx.params.get("configs", []) or []:
        config = {}
        for key, value in raw.items():
            target = _map_key(key, tuned)
            if target:
                config[target] = value
        if all(t in config for t in tuned):
            given.append(config)
    if given:
        return given
    current = {t: knobs[t].value for t in tuned}
    current["num_warps"] = knobs["num_warps"].value or 4
    _, _, configs, _ = _search(src, Context(params={}))
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


# --- kernel-body recipes -------------------------------------------------------------------------

def dot_precision(src: Source, ctx: Context) -> Proposal:
    """fp32 tl.dot at ieee precision -> tf32 (or tf32x3), only if the task's tolerance already allows it."""
    wanted = str(ctx.params.get("input_precision", "tf32"))
    if wanted not in DOT_PRECISION_RTOL:
        raise NotApplicable(f"unknown input_precision {wanted!r}; use tf32 or tf32x3")
    replacements, lines = {}, []
    for kernel in src.kernels().values():
        for call in calls(kernel, "dot"):
            kw = {a.keyword.value: a for a in call.args if a.keyword}
            ieee = ("input_precision" in kw and "ieee" in src.code(kw["input_precision"].value)) or \
                   ("allow_tf32" in kw and src.code(kw["allow_tf32"].value) == "False")
            if not ieee:
                continue
            args = [a for a in call.args if not (a.keyword and a.keyword.value in ("input_precision", "allow_tf32"))]
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            args.append(cst.Arg(keyword=cst.Name("input_precision"), value=cst.SimpleString(f'"{wanted}"'),
                                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
            replacements[id(call)] = call.with_changes(args=args)
            lines.append(src.line(call))
    if not replacements:
        raise NotApplicable("no tl.dot with input_precision='ieee' or allow_tf32=False (the fp32 default is already tf32)")
    atol, rtol = ctx.tolerance("float32") if ctx.tolerance else (0.0, 0.0)
    if max(atol, rtol) < DOT_PRECISION_RTOL[wanted]:
        raise NotApplicable(f"the task's float32 tolerance (atol={atol:g}, rtol={rtol:g}) is tighter than {wanted} "
                            f"allows (~{DOT_PRECISION_RTOL[wanted]:g}); tolerances are never loosened")
    return Proposal("dot_precision", f"tl.dot at line(s) {', '.join(map(str, lines))}: ieee -> {wanted}",
                    [Variant(wanted, src.rewrite(replacements))])


GROUPED = """num_pid_m = tl.cdiv({M}, {BM})
num_pid_in_group = {G} * {num_pid_n}
group_id = {pid} // num_pid_in_group
first_pid_m = group_id * {G}
group_size_m = min(num_pid_m - first_pid_m, {G})
{pid_m} = first_pid_m + (({pid} % num_pid_in_group) % group_size_m)
{pid_n} = ({pid} % num_pid_in_group) // group_size_m
"""


def grouped_order(src: Source, ctx: Context) -> Proposal:
    """Row-major program order (pid_m = pid // n, pid_n = pid % n) -> GROUP_SIZE_M-grouped order for L2 reuse."""
    group = int(ctx.params.get("GROUP_SIZE_M", 8))
    for name, kernel in src.kernels().items():
        if "group_id" in names_in(kernel):
            raise NotApplicable(f"{name} already uses a grouped program order")
        found = _row_major_split(src, kernel)
        if found is None:
            continue
        div_stmt, mod_stmt, pid, pid_m, pid_n, num_pid_n = found
        bm = _block_of(kernel, pid_m)
        big_m = _size_of(src, kernel, num_pid_n)
        if bm is None or big_m is None:
            raise NotApplicable(f"{name}: cannot tell the M size and block from `{pid_m}` (line {src.line(div_stmt)})")
        code = GROUPED.format(M=big_m, BM=bm, G=group, num_pid_n=num_pid_n, pid=pid, pid_m=pid_m, pid_n=pid_n)
        new = cst.parse_module(code).body
        indented = [s.with_changes(leading_lines=div_stmt.leading_lines) if i == 0 else s for i, s in enumerate(new)]
        source = src.rewrite({id(div_stmt): cst.FlattenSentinel(indented), id(mod_stmt): cst.RemoveFromParent()})
        return Proposal("grouped_order", f"{name} line {src.line(div_stmt)}: program order grouped by "
                        f"GROUP_SIZE_M={group} along M", [Variant(f"GROUP_SIZE_M={group}", source)])
    raise NotApplicable("no 1-D-grid kernel splitting its program id as pid // num_pid_n, pid % num_pid_n "
                        "(a 2-D grid would need the launch changed too)")


def _row_major_split(src: Source, kernel: cst.FunctionDef):
    stmts = {}
    for line in m.findall(kernel, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())])])):
        assign = line.body[0]
        stmts[assign.targets[0].target.value] = (line, assign.value)
    for target, (line, value) in stmts.items():
        if m.matches(value, m.BinaryOperation(left=m.Name(), operator=m.FloorDivide(), right=m.Name())):
            pid, n = value.left.value, value.right.value
            for other, (line2, value2) in stmts.items():
                if m.matches(value2, m.BinaryOperation(left=m.Name(pid), operator=m.Modulo(), right=m.Name(n))):
                    return line, line2, pid, target, other, n
    return None


def _block_of(kernel: cst.FunctionDef, pid_m: str) -> str | None:
    for op in m.findall(kernel, m.BinaryOperation(operator=m.Multiply())):
        if m.matches(op.left, m.Name(pid_m)) and isinstance(op.right, cst.Name):
            return op.right.value
    return None


def _size_of(src: Source, kernel: cst.FunctionDef, num_pid_n: str) -> str | None:
    """The M size: the N size's counterpart in the kernel's parameters (N -> M, n -> m)."""
    for line in m.findall(kernel, m.Assign(targets=[m.AssignTarget(target=m.Name(num_pid_n))])):
        args = getattr(line.value, "args", ())
        if len(args) == 2 and isinstance(args[0].value, cst.Name):
            n_name = args[0].value.value
            candidate = n_name.replace("N", "M").replace("n", "m")
            if candidate in runtime_params(kernel):
                return candidate
    return None


def alignment_hints(src: Source, ctx: Context) -> Proposal:
    """tl.multiple_of / tl.max_contiguous on `pid * B + tl.arange(0, B)` offsets, which hold by construction."""
    replacements, lines = {}, []
    for kernel in src.kernels().values():
        if has_call(kernel, "multiple_of") or has_call(kernel, "max_contiguous"):
            continue
        for assign in m.findall(kernel, m.Assign(targets=[m.AssignTarget(target=m.Name())])):
            block = _block_range(assign.value)
            if block is None:
                continue
            hinted = expr(f"tl.max_contiguous(tl.multiple_of({src.code(assign.value)}, {block}), {block})")
            replacements[id(assign.value)] = hinted
            lines.append(src.line(assign))
    if not replacements:
        raise NotApplicable("no offsets of the form `pid * B + tl.arange(0, B)` without a hint; a hint on anything "
                            "else (a view's pointer, a runtime stride) is not proven true for every input")
    return Proposal("alignment_hints", f"contiguity/divisibility hints on offsets at line(s) {', '.join(map(str, lines))}",
                    [Variant("hints", src.rewrite(replacements))])


def _block_range(value: cst.BaseExpression) -> str | None:
    """B when value is `X * B + tl.arange(0, B)` (either order)."""
    if not m.matches(value, m.BinaryOperation(operator=m.Add())):
        return None
    for mul, rng in ((value.left, value.right), (value.right, value.left)):
        if (m.matches(rng, m.Call(func=m.Attribute(attr=m.Name("arange")))) and len(rng.args) == 2
                and m.matches(mul, m.BinaryOperation(operator=m.Multiply(), right=m.Name()))
                and m.matches(rng.args[1].value, m.Name(mul.right.value)) and m.matches(rng.args[0].value, m.Integer("0"))):
            return mul.right.value
    return None


def eviction_policy(src: Source, ctx: Context) -> Proposal:
    """Streaming block loads (outside loops) evict_first; scalar loads reused across programs evict_last."""
    streaming = str(ctx.params.get("streaming", "evict_first"))
    reused = str(ctx.params.get("reused", "evict_last"))
    replacements, changed = {}, []
    for kernel in src.kernels().values():
        in_loop = {id(c) for loop in m.findall(kernel, m.For() | m.While()) for c in calls(loop, "load")}
        for call in calls(kernel, "load"):
            if id(call) in in_loop or any(a.keyword and a.keyword.value in ("eviction_policy", "cache_modifier")
                                          for a in call.args):
                continue
            policy = streaming if has_call(call, "arange") or _uses_vector(kernel, call) else reused
            args = list(call.args)
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            args.append(cst.Arg(keyword=cst.Name("eviction_policy"), value=cst.SimpleString(f'"{policy}"'),
                                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
            replacements[id(call)] = call.with_changes(args=args)
            changed.append(f"{src.line(call)}:{policy}")
    if not replacements:
        raise NotApplicable("every tl.load outside a loop already has an eviction policy or cache modifier "
                            "(loads inside loops are left alone: their reuse depends on the tile order)")
    return Proposal("eviction_policy", f"eviction policies on loads at {', '.join(changed)}",
                    [Variant("eviction", src.rewrite(replacements))])


def _uses_vector(kernel: cst.FunctionDef, call: cst.Call) -> bool:
    """Does the load's address use a name bound to an arange-derived value (a block, not a scalar)?"""
    vector = set()
    for assign in m.findall(kernel, m.Assign(targets=[m.AssignTarget(target=m.Name())])):
        if has_call(assign.value, "arange") or names_in(assign.value) & vector:
            vector.add(assign.targets[0].target.value)
    return bool(names_in(call.args[0].value) & vector) if call.args else False


def _sizes(case: Any) -> list[int]:
    """The positive integers anywhere in a case: a size dict's values, a tuple's items, nested lists."""
    if isinstance(case, bool):
        return []
    if isinstance(case, int):
        return [case] if case > 0 else []
    values = case.values() if isinstance(case, dict) else case if isinstance(case, (list, tuple)) else []
    return [n for v in values for n in _sizes(v)]


def int32_indexing(src: Source, ctx: Context) -> Proposal:
    """Drop `.to(tl.int64)` on offsets when no case can reach 2**31 elements (the product of every size in a case
    bounds its element count, whatever shape the case has)."""
    if any(not _sizes(c) for c in ctx.cases):
        raise NotApplicable("a case holds no integer sizes (a name?), so nothing bounds the offsets")
    biggest = max((math.prod(_sizes(c)) for c in ctx.cases), default=None)
    if biggest is None:
        raise NotApplicable("no cases to bound the offsets with")
    if biggest >= 2 ** 31:
        raise NotApplicable(f"cannot prove offsets stay below 2**31: a case's sizes multiply to {biggest:,}")
    replacements, lines = {}, []
    for kernel in src.kernels().values():
        for call in m.findall(kernel, m.Call(func=m.Attribute(attr=m.Name("to")))):
            if call.args and src.code(call.args[0].value) in ("tl.int64", "tl.uint64"):
                replacements[id(call)] = call.func.value
                lines.append(src.line(call))
    if not replacements:
        raise NotApplicable("no .to(tl.int64) cast in a kernel")
    return Proposal("int32_indexing", f"int64 casts dropped at line(s) {', '.join(map(str, lines))} "
                    f"(largest case product {biggest:,} < 2**31)", [Variant("int32", src.rewrite(replacements))])


def hoist_invariant(src: Source, ctx: Context) -> Proposal:
    """Move `x = tl.load(...)` whose operands no loop statement assigns to just before the loop."""
    replacements, moved = {}, []
    for kernel in src.kernels().values():
        for loop in m.findall(kernel, m.For()):
            assigned = names_in(loop.target) | {t.value for a in m.findall(loop.body, m.AssignTarget())
                                                for t in m.findall(a, m.Name())}
            assigned |= {a.target.value for a in m.findall(loop.body, m.AugAssign(target=m.Name()))}
            stored = {src.code(c.args[0].value).split("+")[0].strip() for c in calls(loop.body, "store") if c.args}
            hoist = []
            for stmt in loop.body.body:
                if not m.matches(stmt, m.SimpleStatementLine(body=[m.Assign(value=m.Call(func=m.Attribute(attr=m.Name("load"))))])):
                    continue
                load = stmt.body[0].value
                used = names_in(load)
                own = {t.target.value for t in stmt.body[0].targets if isinstance(t.target, cst.Name)}
                if used & (assigned - own) or any(s in used for s in stored) or own & names_in_others(loop, stmt):
                    continue
                hoist.append(stmt)
            if not hoist:
                continue
            body = [s for s in loop.body.body if s not in hoist]
            if not body:
                body = [cst.SimpleStatementLine([cst.Pass()])]
            new_loop = loop.with_changes(body=loop.body.with_changes(body=body))
            replacements[id(loop)] = cst.FlattenSentinel([*hoist, new_loop])
            moved += [src.line(s) for s in hoist]
    if not replacements:
        raise NotApplicable("no tl.load in a loop whose address and mask are loop-invariant (or the loop stores to it)")
    return Proposal("hoist_invariant", f"loop-invariant load(s) at line(s) {', '.join(map(str, moved))} hoisted",
                    [Variant("hoisted", src.rewrite(replacements))])


def names_in_others(loop: cst.For, stmt: cst.CSTNode) -> set[str]:
    """Names assigned by statements of the loop other than stmt (a hoisted name must not be reassigned)."""
    out = set()
    for other in loop.body.body:
        if other is stmt:
            continue
        for target in m.findall(other, m.AssignTarget()):
            out |= names_in(target)
    return out


def persistent_grid(src: Source, ctx: Context) -> Proposal:
    """A 1-D kernel that starts with `pid = tl.program_id(0)` becomes a grid-stride loop over its tiles,
    launched with a few programs per SM instead of one program per tile."""
    launch, kernel = _launch(src)
    first = kernel.body.body[0]
    if not m.matches(first, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())],
                                                                value=m.Call(func=m.Attribute(attr=m.Name("program_id"))))])):
        raise NotApplicable(f"{launch.kernel} does not start with `pid = tl.program_id(0)`")
    if len(calls(kernel, "program_id")) != 1 or calls(kernel, "num_programs"):
        raise NotApplicable(f"{launch.kernel} uses more than one grid axis; a multi-axis grid needs a hand-written tile loop")
    if m.findall(kernel, m.Return() | m.For() | m.While()):
        raise NotApplicable(f"{launch.kernel} has loops or early returns; wrapping it in a tile loop is not mechanical")
    where = launch.grid
    if isinstance(where, cst.Name):
        bound = src.assignments(launch.function, where.value)
        if len(bound) != 1:
            raise NotApplicable(f"line {launch.line}: the grid `{where.value}` is not assigned exactly once")
        where = bound[0][1]
    if not isinstance(where, cst.Tuple) or len(where.elements) != 1:
        raise NotApplicable(f"line {src.line(where)}: the grid `{src.code(where)}` is not a 1-D tuple (a lambda of the "
                            "config would need the tile count passed explicitly)")
    tiles = src.code(where.elements[0].value)
    pid = first.body[0].targets[0].target.value
    loop = cst.For(target=cst.Name(pid), iter=expr("tl.range(tl.program_id(0), num_tiles, tl.num_programs(0))"),
                   body=cst.IndentedBlock(body=list(kernel.body.body[1:])))
    params = kernel.params.with_changes(params=[*kernel.params.params, cst.Param(cst.Name("num_tiles"))])
    new_kernel = kernel.with_changes(params=params, body=kernel.body.with_changes(body=[loop]))
    helper = cst.parse_module(
        "def _num_programs():\n"
        "    \"\"\"A few resident programs per SM (the interpreter has no SMs: 4).\"\"\"\n"
        "    if torch.cuda.is_available():\n"
        "        return 4 * torch.cuda.get_device_properties(0).multi_processor_count\n"
        "    return 4\n").body[0]
    tiles_arg = cst.Arg(keyword=cst.Name("num_tiles"), value=expr(tiles),
                        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    source = src.rewrite({
        id(kernel): cst.FlattenSentinel([new_kernel, helper.with_changes(leading_lines=kernel.leading_lines)]),
        id(where): expr(f"(min({tiles}, _num_programs()),)"),
        id(launch.call): _AddArgs([tiles_arg]),
    })
    return Proposal("persistent_grid", f"{launch.kernel}: a grid-stride loop over {tiles} tiles, 4 programs per SM",
                    [Variant("persistent", source)])


def contiguous_reorder(src: Source, ctx: Context) -> Proposal:
    """Only the mechanical case: a 2-D tile whose runtime-strided axis is the fast (last) one is not it."""
    kernel_names = ", ".join(src.kernels())
    raise NotApplicable(f"{kernel_names}: reordering a strided traversal changes which axis each thread walks and "
                        "the launch grid; not a mechanical rewrite (the LLM proposer can try it with the pattern's guidance)")


RECIPES: dict[str, Callable[[Source, Context], Proposal]] = {
    "launch_config_search": launch_config_search, "autotune": autotune, "alignment_hints": alignment_hints,
    "dot_precision": dot_precision, "grouped_order": grouped_order, "eviction_policy": eviction_policy,
    "persistent_grid": persistent_grid, "hoist_invariant": hoist_invariant, "contiguous_reorder": contiguous_reorder,
    "split_block": split_block, "int32_indexing": int32_indexing, "num_stages_search": num_stages_search,
}
