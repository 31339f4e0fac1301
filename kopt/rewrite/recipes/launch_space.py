"""The launch-config search space the launch recipes share: which constexprs are knobs, which
configs to try (middle of the space first, within shared memory and the threads' work), and writing one."""

from __future__ import annotations

import itertools
import math
from typing import Any

import libcst as cst
import libcst.matchers as m

from kopt.rewrite.cst import Launch, NotApplicable, Source, constexpr_params, expr
from kopt.rewrite.recipes.base import Context, Proposal, Variant

MAX_VARIANTS = 4  # each variant costs a validation and a bench child on the GPU


SMEM_LIMIT = 220 * 1024  # bytes of shared memory a config may use on sm_90 (228 KB minus Triton's reserve)


LAUNCH_DEFAULTS = {"num_warps": 4, "num_stages": 3}  # what Triton uses when the launch passes none


MIN_ELEMS_PER_THREAD = 4  # one 128-bit vector of fp32: with fewer, a thread cannot issue the widest load


def only_launch(src: Source) -> tuple[Launch, cst.FunctionDef]:
    kernels = src.kernels()
    if not kernels:
        raise NotApplicable("no @triton.jit kernel in the file")
    launches = src.launches()
    if not launches:
        raise NotApplicable(f"no launch `{next(iter(kernels))}[grid](...)` found in a host function")
    if _autotune_call(src, kernels[launches[0].kernel]) is not None:
        raise NotApplicable(f"{launches[0].kernel} is already @triton.autotune'd; its configs choose the launch")
    return launches[0], kernels[launches[0].kernel]


def block_knobs(launch: Launch, kernel: cst.FunctionDef) -> list[str]:
    return [p for p in constexpr_params(kernel) if p in launch.kwargs and p.upper() == p]


def map_key(key: str, blocks: list[str]) -> str | None:
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


def search_configs(src: Source, ctx: Context, only: tuple[str, ...] = ()) -> tuple[Launch, dict[str, Any], list[dict[str, int]], list[str]]:
    """(launch, knobs, configs, notes): the configs to try, middle-of-the-space first, current excluded."""
    launch, kernel = only_launch(src)
    blocks = block_knobs(launch, kernel)
    names = blocks + ["num_warps", "num_stages"]
    knobs = {n: src.knob(launch, n) for n in names}
    current = {**LAUNCH_DEFAULTS, **{n: k.value for n, k in knobs.items() if k.value is not None}}
    current.update({n: None for n, k in knobs.items() if k.computed})  # unknown until run time: never "current"
    has_loop = bool(m.findall(kernel, m.For() | m.While()))
    requested = {}
    for key, values in ctx.params.items():
        target = map_key(key, blocks)
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


def with_config(src: Source, launch: Launch, knobs: dict[str, Any], config: dict[str, int]) -> str:
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
        replacements[id(call)] = AddArgs(added)
    return src.rewrite(replacements)


class AddArgs:
    """A deferred replacement: append keyword arguments to the already-updated call."""

    def __init__(self, args: list[cst.Arg]):
        self.args = args

    def __call__(self, updated: cst.Call) -> cst.Call:
        existing = list(updated.args)
        if existing:
            existing[-1] = existing[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated.with_changes(args=existing + self.args)


def config_label(config: dict[str, int], knobs: dict[str, Any]) -> str:
    def now(k: str) -> int | str | None:
        if k in knobs and knobs[k].computed:
            return "computed"
        return knobs[k].value if k in knobs and knobs[k].value is not None else LAUNCH_DEFAULTS.get(k)

    return " ".join(f"{k}={v}" for k, v in config.items() if now(k) != v) or "current"


MAX_NEW_CONFIGS = 8  # each one costs a benchmark run per shape key when the autotuner tunes


def _autotune_call(src: Source, kernel: cst.FunctionDef) -> cst.Call | None:
    """The kernel's `@triton.autotune(...)` (or a project's own `@x_autotune(...)`) decorator call."""
    for d in kernel.decorators:
        if isinstance(d.decorator, cst.Call) and src.code(d.decorator.func).split(".")[-1].endswith("autotune"):
            return d.decorator
    return None


def launched_autotuned(src: Source) -> tuple[str, cst.FunctionDef, cst.Call] | None:
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
    name, kernel, call = launched_autotuned(src)
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
