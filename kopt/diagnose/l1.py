"""L1 pattern triage: cheap source and launch-config signals matched against the pattern catalog.

L1 reads only the task file's Python source (no compile, no GPU), so it runs first and in
milliseconds. Each signal points at kernel lines; signals become Findings whose `patterns` are the
catalog entries that list the signal (or the finding) as a symptom, ranked by how well the whole
kernel matches them and by their recorded win rate. An index, when given, adds similar patterns.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kopt.vocabulary import Evidence, Finding
from kopt.errors import KoptError
from kopt.patterns import SOURCE_SIGNALS, Pattern, load_patterns

# Each signal is evidence for one root cause (a FINDING_IDS label) ...
SIGNAL_FINDING: dict[str, str] = {
    "small_block": "small_block",
    "no_autotune": "untuned_config",
    "default_num_warps": "untuned_config",
    "fp32_dot_ieee": "fp32_dot_ieee",
    "scalar_loop": "scalar_loop",
    "int64_offsets": "int64_indexing",
    "modulo_offsets": "modulo_indexing",
    "transpose_before_dot": "transpose_before_dot",
    "loop_invariant_load": "redundant_loads",
    "strided_access": "uncoalesced_access",
    "no_grouped_order": "poor_l2_reuse",
    "tiny_programs": "too_many_programs",
    "atomic_in_loop": "atomic_contention",
    "scattered_atomic": "atomic_contention",
    "two_pass_loads": "unfused_ops",
    "constant_grid": "low_occupancy",
}
# ... with a prior for how often the signal alone means a real slowdown ...
SIGNAL_CONFIDENCE: dict[str, float] = {
    "fp32_dot_ieee": 0.9, "scalar_loop": 0.85, "small_block": 0.8, "atomic_in_loop": 0.75,
    "loop_invariant_load": 0.7, "tiny_programs": 0.7, "modulo_offsets": 0.6, "transpose_before_dot": 0.55,
    "no_grouped_order": 0.55, "int64_offsets": 0.5, "default_num_warps": 0.5, "strided_access": 0.45,
    "no_autotune": 0.35, "constant_grid": 0.8, "scattered_atomic": 0.7,
    "two_pass_loads": 0.55,
}
# ... and what must hold before acting on it.
SIGNAL_CONDITIONS: dict[str, str] = {
    "strided_access": "the stride is not 1 at run time (the JIT turns an integer argument equal to 1 into a constant, which is contiguous)",
    "int64_offsets": "every offset stays below 2**31 for all cases",
    "fp32_dot_ieee": "the operands are fp32 and the tolerance allows tf32 (or tf32x3)",
    "modulo_offsets": "the modulo/division is an index decomposition, not needed for wrap-around semantics",
}
assert set(SIGNAL_FINDING) == set(SOURCE_SIGNALS) == set(SIGNAL_CONFIDENCE)

# Kernel kinds (from the ops a kernel uses) -> the catalog's applies_to words they match.
KIND_WORDS: dict[str, set[str]] = {
    "dot": {"matmul", "batched_matmul", "attention", "linear", "conv", "small_matmul", "grouped_gemm",
            "split_k_matmul", "matmul_epilogue", "reduction_over_k", "fused_kernels"},
    "reduce": {"reduction", "norm", "softmax", "layernorm", "rmsnorm", "logsumexp", "cross_entropy", "loss",
               "norm_statistics", "dot_product", "rowwise", "fused_kernels"},
    "scan": {"scan"},
    "atomic": {"histogram", "scatter_add", "scatter", "reduction", "split_k_matmul"},
    "trans": {"transpose", "permute", "conv_layout_change"},
    "elementwise": {"elementwise", "activation", "copy", "broadcast", "gather", "elementwise_with_reuse",
                    "embedding", "large_tensors", "fused_kernels"},
}
REDUCE_OPS = {"sum", "max", "min", "reduce", "argmax", "argmin", "xor_sum"}
SCAN_OPS = {"cumsum", "cumprod", "associative_scan"}
TRANSPOSE_OPS = {"trans", "permute"}
TUNABLE_WORDS = ("BLOCK", "TILE", "GROUP", "SIZE")
SMALL_1D, SMALL_DOT_MN, SMALL_DOT_K = 128, 64, 16
FEW_PROGRAMS = 108  # fewer programs than the SMs of any datacenter GPU Triton targets (A100: 108, H100/H200: 132)
BIG_TILE_1D, BIG_TILE_DOT = 4096, 128 * 256
PROVEN_CONFIDENCE = 0.7  # a proven pattern (won >= 2 and half its tries) on this kind of kernel: grounded at L1


@dataclass
class Signal:
    """One source signal: which kernel, which lines, and what was seen."""

    name: str
    kernel: str
    lines: list[int]
    detail: str
    data: dict[str, Any] = field(default_factory=dict)
    weight: float = 1.0  # scales the signal's prior confidence when a case is weaker than usual


@dataclass
class _Kernel:
    node: ast.FunctionDef
    autotuned: bool
    params: list[str]
    constexprs: dict[str, list[tuple[Any, int]]]  # param -> (value, line) seen at launches or as default
    launches: list["_Launch"] = field(default_factory=list)


@dataclass
class _Launch:
    node: ast.Call
    grid: ast.AST | None
    kwargs: dict[str, tuple[Any, int]]
    env: dict[str, Any]


# ---------------------------------------------------------------- small AST helpers

def _tl_name(node: ast.AST, aliases: set[str]) -> str | None:
    """`tl.arange` -> "arange" (for any alias of triton.language); None otherwise."""
    if isinstance(node, ast.Call):
        node = node.func
    if not isinstance(node, ast.Attribute):
        return None
    base = node.value
    if isinstance(base, ast.Name) and base.id in aliases:
        return node.attr
    if isinstance(base, ast.Attribute) and base.attr == "language" and isinstance(base.value, ast.Name) \
            and base.value.id == "triton":
        return node.attr
    return None


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _const(node: ast.AST | None, env: dict[str, Any]) -> Any:
    """The literal value of a constant or a name bound to one; None when not known statically."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Attribute) and node.attr in {"float16", "bfloat16", "float32", "int64", "int32"}:
        return node.attr
    return None


def _decorator_names(fn: ast.FunctionDef) -> list[str]:
    out = []
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Attribute):
            out.append(target.attr)
        elif isinstance(target, ast.Name):
            out.append(target.id)
    return out


def _assignments(body: list[ast.stmt]) -> list[tuple[str, ast.AST]]:
    """(name, value) of every plain or tuple-unpacking assignment, in source order."""
    out: list[tuple[str, ast.AST]] = []
    for stmt in body:
        for node in ast.walk(stmt):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                continue
            target = node.targets[0]
            if isinstance(target, ast.Name):
                out.append((target.id, node.value))
            elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) \
                    and len(target.elts) == len(node.value.elts):
                out.extend((t.id, v) for t, v in zip(target.elts, node.value.elts) if isinstance(t, ast.Name))
    return out


def _simple_assignments(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The last value assigned to each name."""
    return dict(_assignments(body))


def _loops(fn: ast.FunctionDef) -> list[ast.For | ast.While]:
    return [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))]


def _inside_loop(fn: ast.FunctionDef) -> set[int]:
    """ids of every node nested in a loop body of `fn`."""
    inside: set[int] = set()
    for loop in _loops(fn):
        for stmt in loop.body:
            inside.update(id(n) for n in ast.walk(stmt))
    return inside


# ---------------------------------------------------------------- module model

class _Module:
    """The task file seen as kernels, their launches, and module-level constants."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.aliases = {"tl"}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                self.aliases |= {a.asname for a in node.names if a.name == "triton.language" and a.asname}
            elif isinstance(node, ast.ImportFrom) and node.module == "triton":
                self.aliases |= {a.asname or a.name for a in node.names if a.name == "language"}
        self.constants = {name: value.value for name, value in _simple_assignments(
            [s for s in tree.body if isinstance(s, ast.Assign)]).items() if isinstance(value, ast.Constant)}
        self.kernels: dict[str, _Kernel] = {}
        self._launch_ids: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and {"jit", "autotune", "heuristics"} & set(_decorator_names(node)):
                self.kernels[node.name] = self._kernel(node)
        for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name not in self.kernels] + [tree]:
            self._collect_launches(fn)

    def _kernel(self, fn: ast.FunctionDef) -> _Kernel:
        args = fn.args.args
        params = [a.arg for a in args]
        constexprs: dict[str, list[tuple[Any, int]]] = {
            a.arg: [] for a in args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}
        defaults = dict(zip(params[len(params) - len(fn.args.defaults):], fn.args.defaults))
        for name, default in defaults.items():
            value = _const(default, self.constants)
            if name in constexprs and value is not None:
                constexprs[name].append((value, default.lineno))
        return _Kernel(fn, "autotune" in _decorator_names(fn), params, constexprs)

    def _collect_launches(self, scope: ast.AST) -> None:
        body = scope.body if isinstance(scope, (ast.FunctionDef, ast.Module)) else []
        stmts = body if isinstance(scope, ast.FunctionDef) else [s for s in body if not isinstance(s, (ast.FunctionDef, ast.ClassDef))]
        assigned = _simple_assignments(stmts)
        env = dict(self.constants)
        env.update({k: v.value for k, v in assigned.items() if isinstance(v, ast.Constant)})
        for stmt in stmts:
            for node in ast.walk(stmt):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
                        and isinstance(node.func.value, ast.Name) and node.func.value.id in self.kernels):
                    continue
                if id(node) in self._launch_ids:  # a nested function's launch is seen from its parent too
                    continue
                self._launch_ids.add(id(node))
                kernel = self.kernels[node.func.value.id]
                grid = node.func.slice
                if isinstance(grid, ast.Name) and grid.id in assigned:
                    grid = assigned[grid.id]
                kwargs = {kw.arg: (_const(kw.value, env), kw.value.lineno) for kw in node.keywords if kw.arg}
                for name, arg in zip(kernel.params, node.args):
                    kwargs.setdefault(name, (_const(arg, env), arg.lineno))
                for name, (value, line) in kwargs.items():
                    if name in kernel.constexprs and value is not None:
                        kernel.constexprs[name].append((value, line))
                kernel.launches.append(_Launch(node, grid, kwargs, env))


# ---------------------------------------------------------------- per-kernel analysis

class _KernelScan:
    """Facts about one kernel's body that several detectors share."""

    def __init__(self, module: _Module, kernel: _Kernel):
        self.m, self.k, self.fn = module, kernel, kernel.node
        self.calls = [n for n in ast.walk(self.fn) if isinstance(n, ast.Call)]
        self.ops = {_tl_name(c, module.aliases) for c in self.calls} - {None}
        self.assignments = _assignments(self.fn.body)
        self.assigned = dict(self.assignments)
        self.arange_names = self._arange_derived()
        self.linear_names = self._arange_derived(linear=True)
        self.pointer_ids = self._pointer_ids()
        self.in_loop = _inside_loop(self.fn)

    def tl_calls(self, *names: str) -> list[ast.Call]:
        return [c for c in self.calls if _tl_name(c, self.m.aliases) in names]

    def _arange_derived(self, linear: bool = False) -> set[str]:
        """Names computed from tl.arange; with `linear`, only through + - * (no % or //, which break contiguity)."""
        derived: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, value in self.assignments:
                if name in derived:
                    continue
                if linear and any(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mod, ast.FloorDiv))
                                  for n in ast.walk(value)):
                    continue
                if any(_tl_name(c, self.m.aliases) == "arange" for c in ast.walk(value) if isinstance(c, ast.Call)) \
                        or _names(value) & derived:
                    derived.add(name)
                    changed = True
        return derived

    def _pointer_ids(self) -> set[int]:
        """ids of the AST nodes that compute a load/store/atomic address, directly or through assignments."""
        roots = [c.args[0] for c in self.calls if c.args and (_tl_name(c, self.m.aliases) or "") in
                 {"load", "store"} | {f"atomic_{op}" for op in ("add", "max", "min", "and", "or", "xor", "xchg", "cas")}]
        names: set[str] = set()
        frontier = set().union(*(_names(r) for r in roots), set())
        while frontier - names:
            names |= frontier
            frontier = set().union(*(_names(v) for n, v in self.assignments if n in names), set())
        nodes = roots + [v for n, v in self.assignments if n in names]
        return {id(x) for node in nodes for x in ast.walk(node)}

    def uses_arange(self, node: ast.AST) -> bool:
        return bool(_names(node) & self.arange_names) or any(
            isinstance(c, ast.Call) and _tl_name(c, self.m.aliases) == "arange" for c in ast.walk(node))

    @property
    def is_2d(self) -> bool:
        return any(isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Tuple)
                   and any(isinstance(e, ast.Constant) and e.value is None for e in n.slice.elts)
                   for n in ast.walk(self.fn))

    def kinds(self) -> set[str]:
        kinds = set()
        if "dot" in self.ops:
            kinds.add("dot")
        loop_accumulates = any(isinstance(n, ast.AugAssign) and id(n) in self.in_loop and any(
            _tl_name(c, self.m.aliases) == "load" for c in ast.walk(n.value) if isinstance(c, ast.Call))
            for n in ast.walk(self.fn))
        if self.ops & REDUCE_OPS or loop_accumulates:  # `acc += tl.load(...)` in a loop is a reduction too
            kinds.add("reduce")
        if self.ops & SCAN_OPS:
            kinds.add("scan")
        if any(op.startswith("atomic_") for op in self.ops):
            kinds.add("atomic")
        if self.ops & TRANSPOSE_OPS:
            kinds.add("trans")
        return kinds or {"elementwise"}

    def aranges(self) -> list[tuple[int, str | None, int]]:
        """(size, constexpr name or None, line) of each tl.arange whose bounds are known."""
        out = []
        for call in self.tl_calls("arange"):
            if len(call.args) != 2:
                continue
            start = _const(call.args[0], self.m.constants)
            end_node = call.args[1]
            if isinstance(end_node, ast.Name) and end_node.id in self.k.constexprs:
                values = [v for v, _ in self.k.constexprs[end_node.id] if isinstance(v, int)]
                end = min(values) if values else None
                name = end_node.id
            else:
                end, name = _const(end_node, self.m.constants), None
            if isinstance(start, int) and isinstance(end, int):
                out.append((end - start, name, call.lineno))
        return out

    def tile_elements(self) -> int | None:
        sizes = {}
        for size, name, line in self.aranges():
            sizes[name or line] = size
        if not sizes:
            return None
        if "dot" in self.ops:
            mn = sorted((s for n, s in sizes.items() if not (isinstance(n, str) and n.upper().endswith("K"))), reverse=True)
            return mn[0] * mn[1] if len(mn) >= 2 else None
        values = sorted(sizes.values(), reverse=True)
        return values[0] * values[1] if self.is_2d and len(values) >= 2 else values[0]


# ---------------------------------------------------------------- detectors (one per signal)

def _small_block(s: _KernelScan) -> list[Signal]:
    if s.k.autotuned:
        return []
    is_dot = "dot" in s.ops
    if not is_dot:
        tile = s.tile_elements()
        if tile is None or tile >= SMALL_1D:
            return []
    out = []
    for size, name, line in s.aranges():
        if is_dot:
            limit = SMALL_DOT_K if name is None or name.upper().endswith("K") else SMALL_DOT_MN
            if size >= limit:
                continue
            what = f"{size} per dot tile dimension (< {limit})"
        else:
            limit = SMALL_1D
            what = f"{tile} elements per program (< {limit})"
        where = [ln for v, ln in s.k.constexprs.get(name, []) if v == size] if name else []
        label = f"{name}={size}" if name else f"tl.arange(0, {size})"
        out.append(Signal("small_block", s.fn.name, sorted({line, *where}), f"{label} is hard-coded: {what}",
                          {"param": name, "value": size, "limit": limit}))
    return out


def _no_autotune(s: _KernelScan) -> list[Signal]:
    tunables = [p for p in s.k.constexprs if any(w in p.upper() for w in TUNABLE_WORDS)]
    if s.k.autotuned or not tunables:
        return []
    return [Signal("no_autotune", s.fn.name, [s.fn.lineno],
                   f"kernel {s.fn.name} has tunable constexprs ({', '.join(tunables)}) but no @triton.autotune",
                   {"tunables": tunables})]


def _default_num_warps(s: _KernelScan) -> list[Signal]:
    tile = s.tile_elements()
    big = BIG_TILE_DOT if "dot" in s.ops else BIG_TILE_1D
    if s.k.autotuned or not s.k.launches or tile is None or tile < big:
        return []
    if any("num_warps" in launch.kwargs for launch in s.k.launches):
        return []
    lines = [launch.node.lineno for launch in s.k.launches]
    return [Signal("default_num_warps", s.fn.name, lines,
                   f"a {tile}-element tile is launched with the default num_warps=4 ({tile // 128} elements per thread)",
                   {"tile_elements": tile})]


def _fp32_dot_ieee(s: _KernelScan) -> list[Signal]:
    out = []
    for call in s.tl_calls("dot"):
        kw = {k.arg: k.value for k in call.keywords}
        precision = kw.get("input_precision")
        value = _const(precision, s.m.constants)
        if isinstance(precision, ast.Name) and precision.id in s.k.constexprs:
            value = next((v for v, _ in s.k.constexprs[precision.id] if isinstance(v, str)), None)
        ieee = value == "ieee" or (isinstance(kw.get("allow_tf32"), ast.Constant) and kw["allow_tf32"].value is False)
        half = any(_tl_name(op, s.m.aliases) is None and isinstance(op, ast.Call) and isinstance(op.func, ast.Attribute)
                   and op.func.attr == "to" and _const(op.args[0] if op.args else None, {}) in ("float16", "bfloat16")
                   for op in call.args[:2])
        if ieee and not half:
            out.append(Signal("fp32_dot_ieee", s.fn.name, [call.lineno],
                              "tl.dot at ieee precision: an fp32 dot cannot use tensor cores",
                              {"input_precision": "ieee"}))
    return out


def _loop_var_names(loop: ast.For | ast.While) -> set[str]:
    """Names the loop changes: its target and everything assigned in its body."""
    names = _names(loop.target) if isinstance(loop, ast.For) else set()
    for stmt in loop.body:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    names |= _names(target)
            elif isinstance(node, ast.For):
                names |= _names(node.target)
    return names


def _scalar_loop(s: _KernelScan) -> list[Signal]:
    out = []
    for loop in _loops(s.fn):
        if not isinstance(loop, ast.For):
            continue
        loop_var = _names(loop.target)
        loads = [c for stmt in loop.body for c in ast.walk(stmt)
                 if isinstance(c, ast.Call) and _tl_name(c, s.m.aliases) == "load" and c.args]
        scalar = [c for c in loads if _names(c.args[0]) & loop_var and not s.uses_arange(c.args[0])]
        block_work = any(s.uses_arange(c.args[0]) for c in loads) or any(
            _tl_name(c, s.m.aliases) == "dot" for stmt in loop.body for c in ast.walk(stmt) if isinstance(c, ast.Call))
        if scalar and not block_work:  # a loop over work items that fetches scalar metadata is fine
            out.append(Signal("scalar_loop", s.fn.name, [loop.lineno] + [c.lineno for c in scalar],
                              f"loop over {ast.unparse(loop.target)} loads one scalar per iteration "
                              f"({ast.unparse(scalar[0].args[0])})", {"loads": len(scalar)}))
    return out


def _int64_offsets(s: _KernelScan) -> list[Signal]:
    lines = []
    for call in s.calls:
        is_to = isinstance(call.func, ast.Attribute) and call.func.attr == "to" and _tl_name(call, s.m.aliases) is None
        is_cast = _tl_name(call, s.m.aliases) == "cast"
        target = call.args[-1] if call.args else None
        receiver = call.func.value if is_to else (call.args[0] if is_cast and call.args else None)
        if (is_to or is_cast) and target is not None and _const(target, {}) == "int64" \
                and id(call) in s.pointer_ids and s.uses_arange(receiver):
            lines.append(call.lineno)
    if not lines:
        return []
    return [Signal("int64_offsets", s.fn.name, sorted(set(lines)), "per-element address math cast to tl.int64",
                   {"casts": len(lines)})]


def _hinted(s: _KernelScan) -> tuple[set[str], set[int]]:
    """Names and expression ids wrapped in tl.multiple_of / tl.max_contiguous."""
    names, ids = set(), set()
    for call in s.tl_calls("multiple_of", "max_contiguous"):
        if call.args:
            names |= _names(call.args[0])
            ids |= {id(n) for n in ast.walk(call.args[0])}
    return names, ids


def _modulo_offsets(s: _KernelScan) -> list[Signal]:
    wrapped, hinted_ids = _hinted(s)
    lines = []
    for name, value in s.assignments + [("", c) for c in s.tl_calls("load", "store")]:
        if name in wrapped:
            continue
        for node in ast.walk(value):
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.FloorDiv)) \
                    and id(node) not in hinted_ids and id(node) in s.pointer_ids and s.uses_arange(node):
                lines.append(node.lineno)
    if not lines:
        return []
    return [Signal("modulo_offsets", s.fn.name, sorted(set(lines)),
                   "offsets computed with % or // on tl.arange values (contiguity is lost)", {})]


def _transpose_before_dot(s: _KernelScan) -> list[Signal]:
    def transpose_line(node: ast.AST) -> int | None:
        if isinstance(node, ast.Name) and node.id in s.assigned:
            node = s.assigned[node.id]
        if isinstance(node, ast.Attribute) and node.attr == "T":
            return node.lineno
        if isinstance(node, ast.Call) and (_tl_name(node, s.m.aliases) in TRANSPOSE_OPS or (
                isinstance(node.func, ast.Attribute) and node.func.attr in TRANSPOSE_OPS)):
            return node.lineno
        return None

    out = []
    for call in s.tl_calls("dot"):
        lines = [ln for ln in (transpose_line(a) for a in call.args[:2]) if ln]
        if lines:
            out.append(Signal("transpose_before_dot", s.fn.name, sorted({call.lineno, *lines}),
                              "a dot operand is transposed in registers (tl.trans / .T) right before tl.dot", {}))
    return out


def _loop_invariant_load(s: _KernelScan) -> list[Signal]:
    out = []
    for loop in _loops(s.fn):
        variant = _loop_var_names(loop)
        for stmt in loop.body:
            for call in ast.walk(stmt):
                if isinstance(call, ast.Call) and _tl_name(call, s.m.aliases) == "load" and call.args:
                    used = _names(call.args[0]) | set().union(*(_names(k.value) for k in call.keywords), set())
                    if not used & variant:
                        out.append(Signal("loop_invariant_load", s.fn.name, [call.lineno, loop.lineno],
                                          f"tl.load({ast.unparse(call.args[0])}) does not depend on the loop "
                                          f"at line {loop.lineno} but runs every iteration", {}))
    return out


def _add_terms(node: ast.AST) -> list[ast.AST]:
    """The terms of an a + b - c chain."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _add_terms(node.left) + _add_terms(node.right)
    return [node]


def _strided_access(s: _KernelScan) -> list[Signal]:
    """A runtime stride on the tile's fast axis, in an address with no unstrided (contiguous) tl.arange term.

    The coalesce pass orders the layout along whichever axis AxisInfo proves contiguous, so an address
    with any unstrided arange term is fine; `x + offs * stride` (1-D) is strided for any stride but 1."""
    runtime = {p for p in s.k.params if p not in s.k.constexprs}

    def fast_axis(node: ast.AST) -> bool:
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            return isinstance(node.slice.elts[-1], ast.Slice) and s.uses_arange(node.value)
        if isinstance(node, ast.Name):
            return node.id in s.linear_names
        return isinstance(node, ast.BinOp) and s.uses_arange(node) and not any(
            isinstance(n, ast.Subscript) or isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mod, ast.FloorDiv))
            for n in ast.walk(node))

    def strided(term: ast.AST) -> str | None:
        """The runtime stride of `fast-axis offsets * stride` (either order), else None."""
        if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
            for offs, stride in ((term.left, term.right), (term.right, term.left)):
                names = _names(stride)
                if fast_axis(offs) and names and names <= runtime and not s.uses_arange(stride):
                    return ast.unparse(stride)
        return None

    addresses = [v for n, v in s.assignments if id(v) in s.pointer_ids] + [
        c.args[0] for c in s.tl_calls("load", "store") if c.args]
    out, seen = [], set()
    for address in addresses:
        terms = _add_terms(address)
        arange_terms = [t for t in terms if s.uses_arange(t)]
        hits = [(t, strided(t)) for t in arange_terms if strided(t)]
        contiguous = [t for t in arange_terms if not (isinstance(t, ast.BinOp) and isinstance(t.op, ast.Mult))]
        for term, stride in hits:
            if contiguous or term.lineno in seen:
                continue
            seen.add(term.lineno)
            generic = len(arange_terms) > 1  # every axis strided: the generic idiom, fine when the fast stride is 1
            out.append(Signal("strided_access", s.fn.name, [term.lineno],
                              f"runtime stride {stride} multiplies the contiguous axis ({ast.unparse(term)})",
                              {"stride": stride, "generic_strides": generic}, weight=0.5 if generic else 1.0))
    return out


def _no_grouped_order(s: _KernelScan) -> list[Signal]:
    if "dot" not in s.ops or "swizzle2d" in s.ops:
        return []
    if any("group" in name.lower() for name in set(s.assigned) | set(s.k.params)):
        return []
    pids = s.tl_calls("program_id")
    pid_names = {name for name, value in s.assignments if isinstance(value, ast.Call) and value in pids}
    tile_values = [v for _, v in s.assignments if s.uses_arange(v)]
    positions_tile = {id(n) for v in tile_values for n in ast.walk(v)} | {
        id(value) for name, value in s.assignments if value in pids and any(name in _names(v) for v in tile_values)}
    # program_id(1) that positions an output tile (not a batch or head index) means a 2-D tile grid
    axis1 = [c for c in pids if id(c) in positions_tile and (
        (c.args and _const(c.args[0], {}) == 1) or any(k.arg == "axis" and _const(k.value, {}) == 1 for k in c.keywords))]
    split = [n for n in ast.walk(s.fn) if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.FloorDiv, ast.Mod))
             and _names(n.left) & pid_names]
    lines = [c.lineno for c in axis1] or [n.lineno for n in split]
    if not lines:
        return []
    return [Signal("no_grouped_order", s.fn.name, sorted(set(lines)),
                   "matmul tiles run in plain row-major program order (no GROUP_SIZE_M swizzle)", {})]


def _tiny_programs(s: _KernelScan) -> list[Signal]:
    """A grid of cdiv(n, b) where b is small and is what one program covers (its tl.arange size)."""
    tile = s.tile_elements()
    per_program = {size for size, _, _ in s.aranges()} if tile is not None and tile < SMALL_1D else set()
    out = []
    for launch in s.k.launches:
        if launch.grid is None:
            continue
        for call in ast.walk(launch.grid):
            if not (isinstance(call, ast.Call) and len(call.args) == 2):
                continue
            fname = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
            if fname != "cdiv":
                continue
            divisor = call.args[1]
            value = _const(divisor, launch.env)
            if value is None and isinstance(divisor, ast.Name) and divisor.id in launch.kwargs:
                value = launch.kwargs[divisor.id][0]
            if isinstance(value, int) and value < SMALL_1D and value in per_program and "dot" not in s.ops:
                out.append(Signal("tiny_programs", s.fn.name, sorted({call.lineno, launch.node.lineno}),
                                  f"grid of cdiv({ast.unparse(call.args[0])}, {value}): one program per {value} elements",
                                  {"per_program": value}))
    return out


def _constant_grid(s: _KernelScan) -> list[Signal]:
    """A grid of literals, e.g. kernel[(1,)]: the parallelism does not grow with the problem, so a few programs loop
    over all of it while most SMs idle. A persistent grid sized from the device is not literal and stays silent."""
    out = []
    for launch in s.k.launches:
        dims = launch.grid.elts if isinstance(launch.grid, (ast.Tuple, ast.List)) else []
        values = [_const(d, launch.env) for d in dims]
        if not dims or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            continue
        programs = math.prod(values)
        if programs < FEW_PROGRAMS:
            out.append(Signal("constant_grid", s.fn.name, [launch.node.lineno],
                              f"launch grid {ast.unparse(launch.grid)} is a constant {programs} program(s) whatever the "
                              f"problem size: at most {programs} SM(s) work", {"programs": programs}))
    return out


def _atomic_in_loop(s: _KernelScan) -> list[Signal]:
    calls = [c for c in s.calls if (_tl_name(c, s.m.aliases) or "").startswith("atomic_") and id(c) in s.in_loop]
    if not calls:
        return []
    return [Signal("atomic_in_loop", s.fn.name, sorted({c.lineno for c in calls}),
                   f"{_tl_name(calls[0], s.m.aliases)} inside a loop: one contended atomic per iteration", {})]


def _scattered_atomic(s: _KernelScan) -> list[Signal]:
    """An atomic outside any loop whose address comes from loaded values: every program updates data-chosen
    targets, so programs that pick the same hot bin or row serialize on it (a loop's atomics: atomic_in_loop)."""
    loaded: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, value in s.assignments:
            if name not in loaded and (_names(value) & loaded or any(
                    _tl_name(c, s.m.aliases) == "load" for c in ast.walk(value) if isinstance(c, ast.Call))):
                loaded.add(name)
                changed = True
    calls = [c for c in s.calls if (_tl_name(c, s.m.aliases) or "").startswith("atomic_") and id(c) not in s.in_loop
             and c.args and _names(c.args[0]) & loaded]
    if not calls:
        return []
    return [Signal("scattered_atomic", s.fn.name, sorted({c.lineno for c in calls}),
                   f"{_tl_name(calls[0], s.m.aliases)} at addresses loaded from memory ({ast.unparse(calls[0].args[0])}): "
                   "programs that pick the same target serialize on it", {})]


def _two_pass_loads(s: _KernelScan) -> list[Signal]:
    """A pointer argument loaded in two loops that are not nested: the kernel streams the same data from memory
    twice (statistics, then apply), where one pass that keeps the tile in registers or shared memory would do."""
    runtime = {p for p in s.k.params if p not in s.k.constexprs}
    loops = [l for l in _loops(s.fn) if isinstance(l, ast.For)]
    nested = {id(inner) for outer in loops for stmt in outer.body for inner in ast.walk(stmt) if inner in loops}
    passes: dict[str, list[int]] = {}
    for loop in [l for l in loops if id(l) not in nested]:
        loads = [c for stmt in loop.body for c in ast.walk(stmt)
                 if isinstance(c, ast.Call) and _tl_name(c, s.m.aliases) == "load" and c.args and s.uses_arange(c.args[0])]
        for ptr in sorted({p for c in loads for p in _names(c.args[0]) & runtime if p.endswith("ptr")}):
            passes.setdefault(ptr, []).append(next(c.lineno for c in loads if ptr in _names(c.args[0])))
    return [Signal("two_pass_loads", s.fn.name, lines,
                   f"`{ptr}` is streamed by {len(lines)} separate loops (lines {', '.join(map(str, lines))}): every "
                   "element crosses the memory bus more than once", {"pointer": ptr, "passes": len(lines)})
            for ptr, lines in passes.items() if len(lines) >= 2]


DETECTORS = (_small_block, _no_autotune, _default_num_warps, _fp32_dot_ieee, _scalar_loop, _int64_offsets,
             _modulo_offsets, _transpose_before_dot, _loop_invariant_load, _strided_access, _no_grouped_order,
             _tiny_programs, _atomic_in_loop, _constant_grid, _scattered_atomic,
             _two_pass_loads)


def detect_signals(source: str, path: str = "<source>") -> tuple[list[Signal], dict[str, set[str]]]:
    """All L1 signals in a task file's source, plus each kernel's kinds (dot, reduce, ...).

    Raises SyntaxError for source that does not parse (triage turns it into a finding)."""
    module = _Module(ast.parse(source, filename=path))
    signals: list[Signal] = []
    kinds: dict[str, set[str]] = {}
    for kernel in module.kernels.values():
        scan = _KernelScan(module, kernel)
        kinds[kernel.node.name] = scan.kinds()
        for detector in DETECTORS:
            signals.extend(detector(scan))
    return signals, kinds


def l1_view(source: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(kernel kinds, signal names) of a source as L1 sees it, over all its kernels; empty if it does not parse."""
    try:
        signals, kinds = detect_signals(source)
    except SyntaxError:
        return (), ()
    return tuple(sorted(set().union(*kinds.values()))), tuple(sorted({sig.name for sig in signals}))


# ---------------------------------------------------------------- matching against the catalog

def fits(pattern: Pattern, kinds: set[str]) -> bool:
    """Whether a pattern speaks about a kernel of these kinds: an applies_to word of theirs, a kind's own name (what
    synthesized L1 shortcuts name: the kinds they were validated on), or `any`."""
    words = set(kinds).union(*(KIND_WORDS[k] for k in kinds))
    return "any" in pattern.applies_to or bool(words & set(pattern.applies_to))


def _rank(patterns: list[Pattern], finding_id: str, own: set[str], present: set[str], kinds: set[str]
          ) -> list[tuple[float, float, Pattern]]:
    """(score, strength, pattern) best first.

    Strength: the finding's own signals are the pattern's symptoms (0.5), how many of the pattern's source
    symptoms the kernel shows (0.3), the finding id is the pattern's (0.2), scaled down when the pattern is
    for another kind of kernel. The score weighs strength by the recorded win rate and prefers patterns
    with a deterministic recipe (low risk) over guidance-only ones."""
    ranked = []
    for p in patterns:
        sources = set(p.source_signals)
        if not (own & sources or finding_id in p.finding_ids):
            continue
        coverage = len(sources & present) / len(sources) if sources else 0.0
        strength = (1.0 if fits(p, kinds) else 0.25) * (
            0.5 * bool(own & sources) + 0.3 * coverage + 0.2 * (finding_id in p.finding_ids))
        if strength >= 0.3:
            ranked.append((strength * (0.5 + p.win_rate) * (1.1 if p.recipe_name else 1.0), strength, p))
    ranked.sort(key=lambda t: (-t[0], t[2].id))
    return ranked


def _where(pattern: Pattern) -> str:
    """Where a pattern's file is: the shipped catalog's, or the synthesized one under KOPT_HOME."""
    synthesized = pattern.provenance["kind"] == "synthesized" and pattern.path
    return str(pattern.path) if synthesized else f"corpora/patterns/{pattern.id}.yaml"


def _findings_for_kernel(kernel: str, signals: list[Signal], kinds: set[str], patterns: list[Pattern],
                         path: str) -> list[Finding]:
    present = {s.name for s in signals}
    by_finding: dict[str, list[Signal]] = {}
    for signal in signals:
        by_finding.setdefault(SIGNAL_FINDING[signal.name], []).append(signal)
    findings = []
    for finding_id, group in by_finding.items():
        own = {s.name for s in group}
        ranked = _rank(patterns, finding_id, own, present, kinds)
        best = ranked[0][1] if ranked else 0.0
        base = max(SIGNAL_CONFIDENCE[s.name] * s.weight for s in group)
        evidence = [Evidence("L1", "source", sig.detail, {"signal": sig.name, "kernel": kernel, **sig.data},
                             f"{path}:{sig.lines[0]}") for sig in group]
        conditions = [SIGNAL_CONDITIONS[n] for n in sorted(own) if n in SIGNAL_CONDITIONS]
        confidence = base * (0.6 + 0.4 * best)
        if ranked:
            top = ranked[0][2]
            evidence.append(Evidence("L1", "pattern", f"matches pattern {top.id} ({top.title}), strength {best:.2f}",
                                     {"pattern": top.id, "strength": round(best, 2), "win_rate": round(top.win_rate, 2)},
                                     _where(top)))
            conditions += [c for c in top.preconditions if c not in conditions]
            if top.proven and fits(top, kinds):  # validated rounds vouch for acting without a profile
                confidence = max(confidence, PROVEN_CONFIDENCE)
                evidence.append(Evidence("L1", "pattern", f"{top.id} won {top.stats['wins']} of {top.stats['tries']} "
                                         f"validated tries on {'/'.join(sorted(kinds))} kernels",
                                         {"pattern": top.id, "wins": top.stats["wins"], "tries": top.stats["tries"]},
                                         _where(top)))
        findings.append(Finding(
            id=finding_id, level="L1",
            message=f"{kernel}: " + "; ".join(dict.fromkeys(s.detail for s in group)),
            confidence=round(confidence, 2), evidence=evidence,
            kernel_lines=sorted({ln for s in group for ln in s.lines}), conditions=conditions,
            patterns=[p.id for _, _, p in ranked[:5]],
        ))
    return findings


def _retrieved(index: Any, kernel: str, kinds: set[str], signals: list[Signal], description: str,
               patterns: dict[str, Pattern], findings: list[Finding], line: int | None) -> None:
    """Add index hits over the pattern corpus: to a matching finding's patterns, or as a weak new finding."""
    seen = "; ".join(dict.fromkeys(SOURCE_SIGNALS[s.name] for s in signals))
    query = f"{description} Triton {' '.join(sorted(kinds))} kernel {kernel}. {seen}".strip()
    try:
        hits = index.search(query, corpus="patterns", k=5)
    except KoptError:
        return  # no pattern corpus ingested: L1 stands on the catalog alone
    for rank, hit in enumerate(hits):
        pattern = patterns.get(hit.meta.get("symbol"))
        if pattern is None or not pattern.finding_ids or not fits(pattern, kinds):
            continue
        mine = [f for f in findings if f.id in pattern.finding_ids]
        if mine:
            if pattern.id not in mine[0].patterns:
                mine[0].patterns.append(pattern.id)
            continue
        findings.append(Finding(
            id=pattern.finding_ids[0], level="L1",
            message=f"{kernel}: similar to pattern {pattern.id} ({pattern.title})",
            confidence=round(0.3 - 0.04 * rank, 2),
            evidence=[Evidence("L1", "pattern", f"retrieved for the kernel's description (rank {rank + 1})",
                               {"pattern": pattern.id, "score": float(getattr(hit, "score", 0.0)), "query": query},
                               _where(pattern))],
            kernel_lines=[line] if line else [], conditions=list(pattern.preconditions), patterns=[pattern.id]))


def triage(task: Any, *, index: Any = None, patterns: list[Pattern] | None = None) -> list[Finding]:
    """L1 findings for a task (an object with `.path`, or a path to the task file), best first."""
    from kopt.task import read_source

    path = Path(getattr(task, "path", task))
    source = read_source(path)  # unreadable, empty, binary or not UTF-8: one TaskError line
    try:
        signals, kinds = detect_signals(source, str(path))
    except SyntaxError as exc:
        return [Finding("compile_failure", "L1", f"{path}:{exc.lineno}: {exc.msg}", 1.0,
                        [Evidence("L1", "source", f"SyntaxError: {exc.msg}", {"text": (exc.text or "").strip()},
                                  f"{path}:{exc.lineno}")], [exc.lineno or 0])]
    catalog = load_patterns() if patterns is None else patterns
    description = (ast.get_docstring(ast.parse(source)) or "").split("\n")[0]
    findings: list[Finding] = []
    for kernel, kernel_kinds in kinds.items():
        mine = [s for s in signals if s.kernel == kernel]
        found = _findings_for_kernel(kernel, mine, kernel_kinds, catalog, str(path))
        if index is not None:
            first_line = min((ln for s in mine for ln in s.lines), default=None)
            _retrieved(index, kernel, kernel_kinds, mine, description, {p.id: p for p in catalog}, found, first_line)
        findings.extend(found)
    findings.sort(key=lambda f: -f.confidence)
    return findings
