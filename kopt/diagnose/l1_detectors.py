"""L1 detectors: one function per source signal, registered under the signal's name with `@detects`.

A detector reads one kernel (a KernelScan over the task's source, l1_source.py) and returns the Signals it
sees, with kernel lines and details. What a signal means, the finding it is evidence for, its prior
confidence and its condition are in the registry (kopt/signals.py); a detector may only register a name
the registry has, and tests/test_signals.py checks that every registered signal has its detector.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any, Callable

from kopt.diagnose.l1_source import (
    TRANSPOSE_OPS,
    KernelScan,
    TaskSource,
    assignments_in,
    const_value,
    expands_dims,
    loops_of,
    names_in,
    tl_name,
)
from kopt.signals import SIGNALS

TUNABLE_WORDS = ("BLOCK", "TILE", "GROUP", "SIZE")
SMALL_1D, SMALL_DOT_MN, SMALL_DOT_K = 128, 64, 16
INTERLEAVED_STREAMS = 16  # a digit `% R` with R at most this cycles through few streams (strided_access)
FEW_PROGRAMS = 108  # fewer programs than the SMs of any datacenter GPU Triton targets (A100: 108, H100/H200: 132)
BIG_TILE_1D, BIG_TILE_DOT = 4096, 128 * 256


@dataclass
class Signal:
    """One source signal: which kernel, which lines, and what was seen."""

    name: str
    kernel: str
    lines: list[int]
    detail: str
    data: dict[str, Any] = field(default_factory=dict)
    weight: float = 1.0  # scales the signal's prior confidence when a case is weaker than usual


Detector = Callable[[KernelScan], list[Signal]]
DETECTORS: dict[str, Detector] = {}  # signal name -> its detector, in registration (= run) order


def detects(name: str) -> Callable[[Detector], Detector]:
    """Register the decorated function as the detector of signal `name`, which kopt/signals.py must define."""
    if name not in SIGNALS:
        raise ValueError(f"no signal {name!r} in the registry (kopt/signals.py)")

    def register(detector: Detector) -> Detector:
        DETECTORS[name] = detector
        return detector

    return register


@detects("small_block")
def _small_block(s: KernelScan) -> list[Signal]:
    if s.k.autotuned:
        return []
    is_dot = "dot" in s.ops
    if not is_dot:
        tile = s.tile_elements()
        if tile is None or tile >= SMALL_1D or not s.sized():  # ROWS=1 beside a run-time BLOCK_N is no small tile
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


@detects("no_autotune")
def _no_autotune(s: KernelScan) -> list[Signal]:
    tunables = [p for p in s.k.constexprs if any(w in p.upper() for w in TUNABLE_WORDS)]
    if s.k.autotuned or not tunables:
        return []
    return [Signal("no_autotune", s.fn.name, [s.fn.lineno],
                   f"kernel {s.fn.name} has tunable constexprs ({', '.join(tunables)}) but no @triton.autotune",
                   {"tunables": tunables})]


@detects("default_num_warps")
def _default_num_warps(s: KernelScan) -> list[Signal]:
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


@detects("fp32_dot_ieee")
def _fp32_dot_ieee(s: KernelScan) -> list[Signal]:
    out = []
    for call in s.tl_calls("dot"):
        kw = {k.arg: k.value for k in call.keywords}
        precision = kw.get("input_precision")
        value = const_value(precision, s.m.constants)
        if isinstance(precision, ast.Name) and precision.id in s.k.constexprs:
            value = next((v for v, _ in s.k.constexprs[precision.id] if isinstance(v, str)), None)
        ieee = value == "ieee" or (isinstance(kw.get("allow_tf32"), ast.Constant) and kw["allow_tf32"].value is False)
        half = any(tl_name(op, s.m.aliases) is None and isinstance(op, ast.Call) and isinstance(op.func, ast.Attribute)
                   and op.func.attr == "to" and const_value(op.args[0] if op.args else None, {}) in ("float16", "bfloat16")
                   for op in call.args[:2])
        if ieee and not half:
            out.append(Signal("fp32_dot_ieee", s.fn.name, [call.lineno],
                              "tl.dot at ieee precision: an fp32 dot cannot use tensor cores",
                              {"input_precision": "ieee"}))
    return out


def _streams_inner_tiles(s: KernelScan, loop: ast.For | ast.While) -> bool:
    """Whether a for loop nested in this one streams tiles: each trip of this loop moves a slice, not a row."""
    return any(s.tile_loads(inner) for inner in ast.walk(loop) if inner is not loop and isinstance(inner, ast.For))


def _loop_var_names(loop: ast.For | ast.While) -> set[str]:
    """Names the loop changes: its target and everything assigned in its body."""
    names = names_in(loop.target) if isinstance(loop, ast.For) else set()
    for stmt in loop.body:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    names |= names_in(target)
            elif isinstance(node, ast.For):
                names |= names_in(node.target)
    return names


@detects("scalar_loop")
def _scalar_loop(s: KernelScan) -> list[Signal]:
    out = []
    for loop in loops_of(s.fn):
        if not isinstance(loop, ast.For):
            continue
        loop_var = _loop_var_names(loop)  # the target and what the body derives from it (t = T - 1 - i)
        loads = [c for stmt in loop.body for c in ast.walk(stmt)
                 if isinstance(c, ast.Call) and tl_name(c, s.m.aliases) == "load" and c.args]
        scalar = [c for c in loads if names_in(c.args[0]) & loop_var and not s.uses_arange(c.args[0])]
        block_work = any(s.uses_arange(c.args[0]) for c in loads) or any(
            tl_name(c, s.m.aliases) == "dot" for stmt in loop.body for c in ast.walk(stmt) if isinstance(c, ast.Call))
        if scalar and not block_work:  # a loop over work items that fetches scalar metadata is fine
            out.append(Signal("scalar_loop", s.fn.name, [loop.lineno] + [c.lineno for c in scalar],
                              f"loop over {ast.unparse(loop.target)} loads one scalar per iteration "
                              f"({ast.unparse(scalar[0].args[0])})", {"loads": len(scalar)}))
    return out


@detects("int64_offsets")
def _int64_offsets(s: KernelScan) -> list[Signal]:
    lines = []
    for call in s.calls:
        is_to = isinstance(call.func, ast.Attribute) and call.func.attr == "to" and tl_name(call, s.m.aliases) is None
        is_cast = tl_name(call, s.m.aliases) == "cast"
        target = call.args[-1] if call.args else None
        receiver = call.func.value if is_to else (call.args[0] if is_cast and call.args else None)
        if (is_to or is_cast) and target is not None and const_value(target, {}) == "int64" \
                and id(call) in s.pointer_ids and s.uses_arange(receiver):
            lines.append(call.lineno)
    if not lines:
        return []
    return [Signal("int64_offsets", s.fn.name, sorted(set(lines)), "per-element address math cast to tl.int64",
                   {"casts": len(lines)})]


def _hinted(s: KernelScan) -> tuple[set[str], set[int]]:
    """Names and expression ids wrapped in tl.multiple_of / tl.max_contiguous."""
    names, ids = set(), set()
    for call in s.tl_calls("multiple_of", "max_contiguous"):
        if call.args:
            names |= names_in(call.args[0])
            ids |= {id(n) for n in ast.walk(call.args[0])}
    return names, ids


@detects("modulo_offsets")
def _modulo_offsets(s: KernelScan) -> list[Signal]:
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


@detects("transpose_before_dot")
def _transpose_before_dot(s: KernelScan) -> list[Signal]:
    def transpose_line(node: ast.AST) -> int | None:
        if isinstance(node, ast.Name) and node.id in s.assigned:
            node = s.assigned[node.id]
        if isinstance(node, ast.Attribute) and node.attr == "T":
            return node.lineno
        if isinstance(node, ast.Call) and (tl_name(node, s.m.aliases) in TRANSPOSE_OPS or (
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


@detects("loop_invariant_load")
def _loop_invariant_load(s: KernelScan) -> list[Signal]:
    """A load whose address does not change across a loop's trips, re-issued every trip. A scalar read once per
    trip of an outer loop whose inner loop streams tiles (a descriptor field per work item) costs nothing beside
    those tiles, so it is no finding."""
    out = []
    for loop in loops_of(s.fn):
        variant = _loop_var_names(loop)
        streams = _streams_inner_tiles(s, loop)
        for stmt in loop.body:
            for call in ast.walk(stmt):
                if isinstance(call, ast.Call) and tl_name(call, s.m.aliases) == "load" and call.args \
                        and not (streams and not s.uses_arange(call.args[0])):
                    used = names_in(call.args[0]) | set().union(*(names_in(k.value) for k in call.keywords), set())
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


@detects("axis_invariant_tile")
def _axis_invariant_tile(s: KernelScan) -> list[Signal]:
    """A kernel on a 2-D (or 3-D) grid, without tl.dot, that streams a tile in a loop at an address ignoring one
    grid axis's program id: every program along that axis reads the same bytes again (a GEMV launched per batch row
    re-reads the whole weight B times). A dot kernel re-reads tiles by design (its tiling trades them for reuse in
    L2: poor_l2_reuse's concern); a load outside loops, or a vector streamed beside a 2-D tile, is a small broadcast
    operand (a norm's weight, a GEMV's x); a vector that is the kernel's only stream (a whole row re-read by each
    of the row's column-block programs) is the redundancy itself."""
    if "dot" in s.ops or _broadcast_matmul(s):  # a matmul, on tensor cores or not, re-reads its tiles by design
        return []
    def pid_axis(c: ast.Call) -> Any:
        return const_value(c.args[0] if c.args else next((k.value for k in c.keywords if k.arg == "axis"), None), {})

    axes = {a for c in s.tl_calls("program_id") if isinstance(a := pid_axis(c), int)}
    if not axes:
        return []

    def values_of(name: str, local: list[tuple[str, ast.AST]]) -> list[ast.AST]:
        """A name the load's loop assigns resolves to the loop's own assignments (a `cols` reused after the loop
        for the program's block is another value)."""
        return [v for n, v in local if n == name] or [v for n, v in s.assignments if n == name]

    def loop_locals(call: ast.Call) -> list[tuple[str, ast.AST]]:
        loop = min((l for l in loops_of(s.fn) if any(n is call for n in ast.walk(l))),
                   key=lambda l: sum(1 for _ in ast.walk(l)))
        return assignments_in(loop.body)

    def exprs_of(call: ast.Call, local: list[tuple[str, ast.AST]]) -> list[ast.AST]:
        """The load's address and every value it is computed from."""
        out, stack, seen = [call.args[0]], list(names_in(call.args[0])), set()
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            values = values_of(name, local)
            out += values
            stack += [m for v in values for m in names_in(v)]
        return out

    def pid_axes(node: ast.AST, local: list, seen: frozenset = frozenset()) -> dict[int, str | None]:
        """Grid axes the value depends on -> the floor division every path to that axis's program id passes
        through (`h // GROUP`: that many programs in a row get the same value), or None where one path does not."""
        if isinstance(node, ast.Call) and tl_name(node, s.m.aliases) == "program_id":
            return {a: None} if isinstance(a := pid_axis(node), int) else {}
        if isinstance(node, ast.Name):
            if node.id in seen:
                return {}
            parts = [pid_axes(v, local, seen | {node.id}) for v in values_of(node.id, local)]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv) and const_value(node.right, {}) != 1:
            parts = [{a: g or ast.unparse(node) for a, g in pid_axes(node.left, local, seen).items()},
                     pid_axes(node.right, local, seen)]
        else:
            parts = [pid_axes(c, local, seen) for c in ast.iter_child_nodes(node)]
        out: dict[int, str | None] = {}
        for part in parts:
            for a, g in part.items():
                out[a] = g if out.get(a, g) is not None else None
        return out

    local = {c: loop_locals(c) for c in s.tl_calls("load") if c.args and id(c) in s.in_loop and s.uses_arange(c.args[0])}
    looped = {c: exprs_of(c, local[c]) for c in local}
    matrix_stream = any(expands_dims(x) for exprs in looped.values() for x in exprs)
    deps = {c: pid_axes(c.args[0], local[c]) for c in looped}
    # an axis some streamed load follows program by program: a load seeing it only in groups is the broadcast operand
    # beside that stream (a mask row per batch beside each channel's column), not the kernel's redundant stream
    followed = {a for d in deps.values() for a, division in d.items() if division is None}
    out = []
    for call, exprs in looped.items():
        if matrix_stream and not any(expands_dims(x) for x in exprs):
            continue  # a vector (a GEMV's x, a bias) re-read beside a matrix stream is the ordinary broadcast operand
        depends = deps[call]
        ignored = sorted(axes - set(depends))
        grouped = sorted(a for a, division in depends.items() if division and a not in followed)
        if depends and ignored:
            out.append(Signal("axis_invariant_tile", s.fn.name, [call.lineno],
                              f"tl.load({ast.unparse(call.args[0])}) in a loop ignores program_id({ignored[0]}): every "
                              f"program along grid axis {ignored[0]} streams the same tile again", {"axis": ignored[0]}))
        elif grouped:
            a = grouped[0]
            out.append(Signal("axis_invariant_tile", s.fn.name, [call.lineno],
                              f"tl.load({ast.unparse(call.args[0])}) in a loop sees program_id({a}) only through "
                              f"`{depends[a]}`: the programs of one such group along grid axis {a} stream the same "
                              "tile again", {"axis": a, "grouped": depends[a]}))
    return out


@detects("strided_access")
def _strided_access(s: KernelScan) -> list[Signal]:
    """A runtime stride on the tile's fast axis, in an address with no unstrided (contiguous) tl.arange term.

    The coalesce pass orders the layout along whichever axis AxisInfo proves contiguous, so an address
    with any unstrided arange term is fine; `x + offs * stride` (1-D) is strided for any stride but 1. A flat index
    split into digits: those taken after a `//` (offs // C, (offs // C) % HW) change once every C lanes, and a digit
    `% R` by a constexpr or a small literal cycles through R values lane after lane (R interleaved streams, each
    contiguous: a pixel shuffle's sub-pixel planes), so a stride on them alone is no strided lane axis; the digit
    `offs % C` by a runtime C changes every lane. A name an address only uses as a column (`row[:, None]`) is no
    lane axis either."""
    runtime = {p for p in s.k.params if p not in s.k.constexprs}
    slow = s.derived({n for n, v in s.assignments if any(
        isinstance(b, ast.BinOp) and isinstance(b.op, ast.FloorDiv) and s.uses_arange(b.left) for b in ast.walk(v))})

    def few(modulus: ast.AST) -> bool:
        if isinstance(modulus, ast.Constant):
            return isinstance(modulus.value, int) and modulus.value <= INTERLEAVED_STREAMS
        return isinstance(modulus, ast.Name) and modulus.id in s.k.constexprs and all(
            not isinstance(v, int) or v <= INTERLEAVED_STREAMS for v, _ in s.k.constexprs[modulus.id])

    cycles = {n for n, v in s.assignments if isinstance(v, ast.BinOp) and isinstance(v.op, ast.Mod) and few(v.right)}
    lane = s.arange_names - slow - cycles

    def fast_axis(node: ast.AST) -> bool:
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            return isinstance(node.slice.elts[-1], ast.Slice) and s.uses_arange(node.value)
        if isinstance(node, ast.Name):
            return node.id in s.linear_names
        return isinstance(node, ast.BinOp) and s.uses_arange(node) and (
            names_in(node) & lane or any(isinstance(c, ast.Call) and tl_name(c, s.m.aliases) == "arange"
                                         for c in ast.walk(node))) and not any(
            isinstance(n, ast.Subscript) or isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mod, ast.FloorDiv))
            for n in ast.walk(node))

    def column_only(name: str) -> bool:
        """Every use of `name` expands it along a leading axis (`name[:, None]`)."""
        uses = [n for n in ast.walk(s.fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
        columns = [n for n in ast.walk(s.fn) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
                   and n.value.id == name and isinstance(n.slice, ast.Tuple) and n.slice.elts
                   and isinstance(n.slice.elts[-1], ast.Constant) and n.slice.elts[-1].value is None]
        return bool(uses) and len(columns) == len(uses)

    def strided(term: ast.AST) -> str | None:
        """The runtime stride of `fast-axis offsets * stride` (either order), else None."""
        if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
            for offs, stride in ((term.left, term.right), (term.right, term.left)):
                names = names_in(stride)
                if fast_axis(offs) and names and names <= runtime and not s.uses_arange(stride):
                    return ast.unparse(stride)
        return None

    def lane_contiguous(term: ast.AST) -> bool:
        return not (isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult)) and not (
            isinstance(term, ast.Name) and term.id in slow)

    addresses = [v for n, v in s.assignments if id(v) in s.pointer_ids and not column_only(n)] + [
        c.args[0] for c in s.tl_calls("load", "store") if c.args]
    out, seen = [], set()
    for address in addresses:
        terms = _add_terms(address)
        arange_terms = [t for t in terms if s.uses_arange(t)]
        hits = [(t, strided(t)) for t in arange_terms if strided(t)]
        contiguous = [t for t in arange_terms if lane_contiguous(t)]
        for term, stride in hits:
            if contiguous or term.lineno in seen:
                continue
            seen.add(term.lineno)
            # every axis strided: the generic idiom, fine when the fast stride is 1 (a digit term is no axis)
            generic = sum(isinstance(t, ast.BinOp) and isinstance(t.op, ast.Mult) for t in arange_terms) > 1
            out.append(Signal("strided_access", s.fn.name, [term.lineno],
                              f"runtime stride {stride} multiplies the contiguous axis ({ast.unparse(term)})",
                              {"stride": stride, "generic_strides": generic}, weight=0.5 if generic else 1.0))
    return out


@detects("no_grouped_order")
def _no_grouped_order(s: KernelScan) -> list[Signal]:
    if "dot" not in s.ops or "swizzle2d" in s.ops:
        return []
    if any("group" in name.lower() for name in set(s.assigned) | set(s.k.params)):
        return []
    pids = s.tl_calls("program_id")
    pid_names = {name for name, value in s.assignments if isinstance(value, ast.Call) and value in pids}
    tile_values = [v for _, v in s.assignments if s.uses_arange(v)]
    positions_tile = {id(n) for v in tile_values for n in ast.walk(v)} | {
        id(value) for name, value in s.assignments if value in pids and any(name in names_in(v) for v in tile_values)}
    # program_id(1) that positions an output tile (not a batch or head index) means a 2-D tile grid
    axis1 = [c for c in pids if id(c) in positions_tile and (
        (c.args and const_value(c.args[0], {}) == 1) or any(k.arg == "axis" and const_value(k.value, {}) == 1 for k in c.keywords))]
    split = [n for n in ast.walk(s.fn) if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.FloorDiv, ast.Mod))
             and names_in(n.left) & pid_names]
    lines = [c.lineno for c in axis1] or [n.lineno for n in split]
    if not lines:
        return []
    return [Signal("no_grouped_order", s.fn.name, sorted(set(lines)),
                   "matmul tiles run in plain row-major program order (no GROUP_SIZE_M swizzle)", {})]


@detects("tiny_programs")
def _tiny_programs(s: KernelScan) -> list[Signal]:
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
            value = const_value(divisor, launch.env)
            if value is None and isinstance(divisor, ast.Name) and divisor.id in launch.kwargs:
                value = launch.kwargs[divisor.id][0]
            if isinstance(value, int) and value < SMALL_1D and value in per_program and "dot" not in s.ops:
                out.append(Signal("tiny_programs", s.fn.name, sorted({call.lineno, launch.node.lineno}),
                                  f"grid of cdiv({ast.unparse(call.args[0])}, {value}): one program per {value} elements",
                                  {"per_program": value}))
    return out


@detects("atomic_in_loop")
def _atomic_in_loop(s: KernelScan) -> list[Signal]:
    calls = [c for c in s.calls if (tl_name(c, s.m.aliases) or "").startswith("atomic_") and id(c) in s.in_loop]
    if not calls:
        return []
    return [Signal("atomic_in_loop", s.fn.name, sorted({c.lineno for c in calls}),
                   f"{tl_name(calls[0], s.m.aliases)} inside a loop: one contended atomic per iteration", {})]


@detects("constant_grid")
def _constant_grid(s: KernelScan) -> list[Signal]:
    """A grid of literals, e.g. kernel[(1,)]: the parallelism does not grow with the problem, so a few programs loop
    over all of it while most SMs idle. A persistent grid sized from the device is not literal and stays silent."""
    out = []
    for launch in s.k.launches:
        dims = launch.grid.elts if isinstance(launch.grid, (ast.Tuple, ast.List)) else []
        values = [const_value(d, launch.env) for d in dims]
        if not dims or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            continue
        programs = math.prod(values)
        if programs < FEW_PROGRAMS:
            out.append(Signal("constant_grid", s.fn.name, [launch.node.lineno],
                              f"launch grid {ast.unparse(launch.grid)} is a constant {programs} program(s) whatever the "
                              f"problem size: at most {programs} SM(s) work", {"programs": programs}))
    return out


@detects("scattered_atomic")
def _scattered_atomic(s: KernelScan) -> list[Signal]:
    """An atomic outside any loop whose address comes from loaded values: every program updates data-chosen
    targets, so programs that pick the same hot bin or row serialize on it (a loop's atomics: atomic_in_loop)."""
    loaded = s.derived(set(), lambda value: any(tl_name(c, s.m.aliases) == "load" for c in ast.walk(value)
                                                if isinstance(c, ast.Call)))
    calls = [c for c in s.calls if (tl_name(c, s.m.aliases) or "").startswith("atomic_") and id(c) not in s.in_loop
             and c.args and names_in(c.args[0]) & loaded]
    if not calls:
        return []
    return [Signal("scattered_atomic", s.fn.name, sorted({c.lineno for c in calls}),
                   f"{tl_name(calls[0], s.m.aliases)} at addresses loaded from memory ({ast.unparse(calls[0].args[0])}): "
                   "programs that pick the same target serialize on it", {})]


ACCUMULATING_ATOMICS = {f"atomic_{op}" for op in ("add", "max", "min", "and", "or", "xor")}  # not cas/xchg (locks)


@detects("shared_atomic")
def _shared_atomic(s: KernelScan) -> list[Signal]:
    """An accumulating atomic outside any loop whose address depends neither on program_id nor on loaded values:
    every program of the grid updates the same addresses (a dW/dB row, a global sum), so they serialize on them,
    grid-size deep (a loop's atomics: atomic_in_loop; data-chosen targets: scattered_atomic)."""
    def calls_of(value: ast.AST, *names: str) -> bool:
        return any(tl_name(c, s.m.aliases) in names for c in ast.walk(value) if isinstance(c, ast.Call))

    moved = s.derived(set(), lambda value: calls_of(value, "program_id", "load"))
    grown = True
    while grown:  # pointers advanced in place: X_ptr += row * stride
        before = len(moved)
        moved |= {n.target.id for n in ast.walk(s.fn) if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)
                  and (names_in(n.value) & moved or calls_of(n.value, "program_id", "load"))}
        moved = s.derived(moved)
        grown = len(moved) > before
    calls = [c for c in s.calls if tl_name(c, s.m.aliases) in ACCUMULATING_ATOMICS and id(c) not in s.in_loop
             and c.args and not names_in(c.args[0]) & moved and not calls_of(c.args[0], "program_id", "load")]
    if not calls:
        return []
    return [Signal("shared_atomic", s.fn.name, sorted({c.lineno for c in calls}),
                   f"{tl_name(calls[0], s.m.aliases)}({ast.unparse(calls[0].args[0])}) does not depend on the program: "
                   "every program of the grid updates the same addresses and they serialize on them", {})]


@detects("spin_lock")
def _spin_lock(s: KernelScan) -> list[Signal]:
    """A while loop spinning on tl.atomic_cas: a lock (the idiom of Triton's layer-norm backward tutorial). Every
    program that takes it waits for the programs holding it, so the section it guards runs one program at a time per
    lock address, however many programs share it."""
    lines = sorted({c.lineno for loop in ast.walk(s.fn) if isinstance(loop, ast.While)
                    for c in ast.walk(loop) if isinstance(c, ast.Call) and tl_name(c, s.m.aliases) == "atomic_cas"})
    if not lines:
        return []
    return [Signal("spin_lock", s.fn.name, lines, "a while loop spins on tl.atomic_cas: a lock, so the programs that "
                   "share it run the section it guards one at a time", {})]


@detects("spin_wait")
def _spin_wait(s: KernelScan) -> list[Signal]:
    """A while loop that polls memory with an atomic read (not atomic_cas: that is a lock, spin_lock's) or a volatile
    load: the program waits for a value another program writes, such as its predecessor's running total in a
    chained scan. Program i waits for i - 1, which waited for i - 2: the grid runs as one chain, and the atomics
    are its links, not contention."""
    polls = []
    for loop in ast.walk(s.fn):
        if not isinstance(loop, ast.While):
            continue
        for c in ast.walk(loop):
            name = tl_name(c, s.m.aliases) if isinstance(c, ast.Call) else None
            if (name or "").startswith("atomic_") and name != "atomic_cas" or name == "load" and any(
                    k.arg == "volatile" and const_value(k.value, {}) is True for k in c.keywords):
                polls.append(c.lineno)
    if not polls:
        return []
    return [Signal("spin_wait", s.fn.name, sorted(set(polls)), "a while loop polls memory that another program "
                   "writes: programs wait on one another, so the grid runs as a chain",
                   _explains(s, "atomic_contention", "low_occupancy", *WIDTH_FINDINGS))]  # the chain sets the time


@detects("while_tile_loop")
def _while_tile_loop(s: KernelScan) -> list[Signal]:
    """A while loop that streams tiles (loads over tl.arange) into tl.dot or a carried accumulator: Triton's software
    pipeliner only rewrites counted for loops (scf.for), so these loads are issued one trip at a time and wait in
    full, whatever num_stages says. A polling loop (atomics, volatile loads) is spin_wait's, a lock spin_lock's; a
    while loop over work items whose tiles stream through an inner for loop (a persistent GEMM's K loop) pipelines."""
    out = []
    for loop in ast.walk(s.fn):
        if not isinstance(loop, ast.While):
            continue
        calls = [tl_name(c, s.m.aliases) for c in ast.walk(loop) if isinstance(c, ast.Call)]
        if any((n or "").startswith("atomic_") for n in calls):
            continue
        counted = {id(n) for inner in ast.walk(loop) if isinstance(inner, ast.For) for n in ast.walk(inner)}
        tiles = [c for c in s.tile_loads(loop) if id(c) not in counted
                 and not any(k.arg == "volatile" and const_value(k.value, {}) is True for k in c.keywords)]
        before = {n for n, v in s.assignments if v.lineno < loop.lineno} | set(s.k.params)
        if tiles and ("dot" in calls or [n for n in _carried(loop, before) if _updated_from_data(s, loop, n)]):
            out.append(Signal("while_tile_loop", s.fn.name, [loop.lineno, *sorted({c.lineno for c in tiles})],
                              f"a while loop ({ast.unparse(loop.test)}) streams {len(tiles)} tile load(s)"
                              f"{' into tl.dot' if 'dot' in calls else ''}: the pipeliner only takes counted for loops",
                              {"loads": len(tiles), "dot": "dot" in calls}))
    return out


@detects("nested_dot_loop")
def _nested_dot_loop(s: KernelScan) -> list[Signal]:
    """A counted loop streaming tiles into tl.dot nested in another loop of the kernel (an implicit-GEMM conv's channel
    loop inside its filter taps): the software pipeliner works on that inner loop alone, so its prologue and drain
    repeat on every outer trip, and an inner loop of few trips barely overlaps its loads. Its trip count is the
    launches' to tell (launch_facts.dot_loop_trips)."""
    def dot_loop(loop: ast.AST) -> bool:
        return isinstance(loop, ast.For) and bool(s.tile_loads(loop)) and any(
            isinstance(c, ast.Call) and tl_name(c, s.m.aliases) == "dot" for c in ast.walk(loop))

    out, seen = [], set()
    for outer in loops_of(s.fn):
        for inner in ast.walk(outer):
            if inner is outer or id(inner) in seen or not dot_loop(inner) \
                    or not (isinstance(inner.iter, ast.Call) and inner.iter.args) \
                    or any(n is not inner and dot_loop(n) for n in ast.walk(inner)):  # the innermost dot loop only
                continue
            seen.add(id(inner))
            args = inner.iter.args
            start, stop, step = (args + [ast.Constant(1)])[:3] if len(args) > 1 else (ast.Constant(0), args[0], ast.Constant(1))
            out.append(Signal("nested_dot_loop", s.fn.name, [inner.lineno, outer.lineno],
                              f"the dot loop at line {inner.lineno} ({ast.unparse(inner.iter)}) runs inside the loop at "
                              f"line {outer.lineno}: its pipeline fills and drains on every outer trip",
                              {"start": ast.unparse(start), "stop": ast.unparse(stop), "step": ast.unparse(step)}))
    return out


@detects("idle_programs")
def _idle_programs(s: KernelScan) -> list[Signal]:
    """A kernel whose tile is masked against a bound it loads from memory (a group's end offset, a sequence length:
    the grid was sized for the worst case because the real sizes live on the device), that streams tiles in a loop
    and never returns early: programs whose tile lies wholly past the bound still run the whole loop with every lane
    masked off. Each of them costs what a working program costs."""
    scalar_loads = {n for n, v in s.assignments if isinstance(v, ast.Call) and tl_name(v, s.m.aliases) == "load"
                    and v.args and not s.uses_arange(v.args[0])}
    bounds = s.derived(scalar_loads) - s.arange_names
    masks = [c for c in ast.walk(s.fn) if isinstance(c, ast.Compare) and len(c.ops) == 1
             and isinstance(c.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE))
             and any(s.uses_arange(side) for side in (c.left, c.comparators[0]))
             and any(names_in(side) & bounds and not s.uses_arange(side) for side in (c.left, c.comparators[0]))]
    loops = [l for l in loops_of(s.fn) if isinstance(l, ast.For) and any(s.tile_loads(st) for st in l.body)]
    if not masks or not loops or any(isinstance(n, ast.Return) for n in ast.walk(s.fn)):
        return []
    bound = sorted(set().union(*(names_in(side) & bounds for m in masks for side in (m.left, m.comparators[0]))))
    return [Signal("idle_programs", s.fn.name, sorted({masks[0].lineno, loops[0].lineno}),
                   f"tiles are masked against {', '.join(bound)}, loaded from memory, and no program returns early: "
                   f"programs past it run the loop at line {loops[0].lineno} with every lane masked off",
                   _explains(s, "no_software_pipelining", "untuned_config", "poor_l2_reuse", bound=bound))]


@detects("two_pass_loads")
def _two_pass_loads(s: KernelScan) -> list[Signal]:
    """A pointer argument loaded in two loops that are not nested: the kernel streams the same data from memory
    twice (statistics, then apply), where one pass that keeps the tile in registers or shared memory would do."""
    runtime = {p for p in s.k.params if p not in s.k.constexprs}
    loops = [l for l in loops_of(s.fn) if isinstance(l, ast.For)]
    nested = {id(inner) for outer in loops for stmt in outer.body for inner in ast.walk(stmt) if inner in loops}
    passes: dict[str, list[int]] = {}
    for loop in [l for l in loops if id(l) not in nested]:
        loads = [c for stmt in loop.body for c in ast.walk(stmt)
                 if isinstance(c, ast.Call) and tl_name(c, s.m.aliases) == "load" and c.args and s.uses_arange(c.args[0])]
        bases = {c.lineno: s.upstream(names_in(c.args[0]), through_loads=False) & runtime for c in loads}  # through `base = x_ptr + row * s`
        for ptr in sorted({p for names in bases.values() for p in names if p.endswith("ptr")}):
            passes.setdefault(ptr, []).append(min(line for line, names in bases.items() if ptr in names))
    return [Signal("two_pass_loads", s.fn.name, lines,
                   f"`{ptr}` is streamed by {len(lines)} separate loops (lines {', '.join(map(str, lines))}): every "
                   "element crosses the memory bus more than once", {"pointer": ptr, "passes": len(lines)})
            for ptr, lines in passes.items() if len(lines) >= 2]


WIDTH_FINDINGS = ("misaligned_access", "masked_access", "non_vectorized_load")  # secondary in an ALU-bound kernel


def _explains(s: KernelScan, *ids: str, **more: Any) -> dict[str, Any]:
    """Signal data saying which findings about this kernel the signal's mechanism explains (escalate.causes_first)."""
    return {"explains": list(ids), "others": sorted(set(s.m.kernels) - {s.fn.name}), **more}


def _expanded_axes(node: ast.AST) -> tuple[int, set[int]] | None:
    """(rank, axes inserted with None) of `t[:, None, :]`-style indexing (also cast: `t[:, None, :].to(...)`);
    None for anything else."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to":
        node = node.func.value
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple)):
        return None
    elts = node.slice.elts
    if not all(isinstance(e, ast.Slice) or (isinstance(e, ast.Constant) and e.value is None) for e in elts):
        return None
    return len(elts), {i for i, e in enumerate(elts) if isinstance(e, ast.Constant)}


def _axis(call: ast.Call, env: dict[str, Any]) -> Any:
    arg = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "axis"), None)
    return const_value(arg, env)


@detects("broadcast_matmul")
def _broadcast_matmul(s: KernelScan) -> list[Signal]:
    """tl.sum(a[:, None, :] * b[None, :, :], axis=2): two tiles broadcast against each other on different axes and
    reduced over an axis both keep is a matrix product. Written this way it runs on FMA units and holds the whole
    M x N x K product in registers (hence small K slices, layout conversions, spills); tl.dot would use tensor
    cores. FMA-bound, the kernel's access widths are secondary. (A matrix-vector product keeps rank 2 and is left
    alone: it is bandwidth bound either way.)"""
    out = []
    for call in s.tl_calls("sum"):
        product = call.args[0] if call.args else None
        if isinstance(product, ast.Name):
            product = s.assigned.get(product.id)
        if not (isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult)):
            continue
        left, right = _expanded_axes(product.left), _expanded_axes(product.right)
        axis = _axis(call, s.m.constants)
        if left is None or right is None or left[0] != right[0] or left[0] < 3 or not isinstance(axis, int):
            continue
        axis %= left[0]
        if left[1] and right[1] and not left[1] & right[1] and axis not in left[1] | right[1]:
            # with no tl.dot the pipeliner has no dot to feed: unpipelined loads follow from it too
            out.append(Signal("broadcast_matmul", s.fn.name, [call.lineno],
                              f"tl.sum({ast.unparse(product)}, axis={axis}) is a matrix product done as a broadcast "
                              "multiply and a reduction: FMA units, no tensor cores", _explains(
                                  s, "small_block", "layout_conversion", "register_spill", "no_software_pipelining",
                                  *WIDTH_FINDINGS)))
    out += _outer_product_loops(s)
    return out


def _outer_product_loops(s: KernelScan) -> list[Signal]:
    """acc += u[:, None] * v[None, :] in a loop, u and v loaded in that loop: rank-1 updates summed over the loop's
    axis, a matrix product one column at a time on FMA units (a direct convolution over input channels); loading
    [.., BLOCK_K] tiles and tl.dot would use tensor cores."""
    def loaded_in(loop: ast.AST, node: ast.AST) -> bool:
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to":
            node = node.func.value
        name = node.value.id if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) else None
        return any(isinstance(a, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in a.targets)
                   and any(isinstance(c, ast.Call) and tl_name(c, s.m.aliases) == "load" for c in ast.walk(a.value))
                   for a in ast.walk(loop))

    out, seen = [], set()
    for loop in (l for l in loops_of(s.fn) if isinstance(l, ast.For)):
        for node in ast.walk(loop):
            product = node.value if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) else None
            if id(node) in seen or not (isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult)):
                continue
            left, right = _expanded_axes(product.left), _expanded_axes(product.right)
            if left and right and left[0] == right[0] == 2 and left[1] and right[1] and not left[1] & right[1] \
                    and loaded_in(loop, product.left) and loaded_in(loop, product.right):
                seen.add(id(node))
                out.append(Signal("broadcast_matmul", s.fn.name, [node.lineno, loop.lineno],
                                  f"{ast.unparse(node)} in the loop at line {loop.lineno} sums rank-1 outer products: "
                                  "a matrix product over the loop's axis, one column at a time on FMA units, no tensor "
                                  "cores", _explains(s, "small_block", "layout_conversion", "register_spill",
                                                     "scalar_loop", "serial_reduction", *WIDTH_FINDINGS)))
    return out


TRANSCENDENTALS = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "div_rn", "fdiv", "sigmoid", "erf"}


@detects("fp64_math")
def _fp64_math(s: KernelScan) -> list[Signal]:
    """Values the kernel itself makes tl.float64 (a cast or an fp64 buffer). fp64 has no special-function units:
    exp, log, sqrt and division become software sequences of tens of DP instructions, at half the fp32 FMA rate on
    H100/H200 and 1/64 of it on most other parts, so such math is ALU bound long before it is memory bound, and the
    width of its memory accesses is secondary. Its 8-byte values also take their own register layout, converted
    before a narrower store (layout_conversion)."""
    lines = sorted({n.lineno for n in ast.walk(s.fn) if isinstance(n, ast.Attribute) and n.attr == "float64"
                    and tl_name(n, s.m.aliases) == "float64"})
    if not lines:
        return []
    heavy = sorted(s.ops & TRANSCENDENTALS) + (["/"] if any(
        isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) for n in ast.walk(s.fn)) else [])
    if not heavy:  # fp64 adds and multiplies alone (an fp64 accumulator) cost little beside the memory traffic:
        # a weak claim even with its catalog pattern matched (0.8 x 0.45 = 0.36)
        return [Signal("fp64_math", s.fn.name, lines, "the kernel computes in tl.float64", {}, weight=0.45)]
    return [Signal("fp64_math", s.fn.name, lines, f"the kernel computes in tl.float64; fp64 {', '.join(heavy)} run "
                   "as software sequences", _explains(s, "layout_conversion", *WIDTH_FINDINGS, heavy_ops=heavy))]


DIVMOD_INSTRUCTIONS = 20  # SASS instructions of one 32-bit integer division or modulo by a runtime value
ELEMENT_INSTRUCTION_BUDGET = 50  # integer work per element a bandwidth-bound kernel hides (H200: ~30 T/s, ~600 G elem/s)


@detects("runtime_divmod")
def _runtime_divmod(s: KernelScan) -> list[Signal]:
    """Per-element % and // by runtime integers, counted: a division by a value unknown at compile time is a
    ~20-instruction sequence, so a handful per element costs more integer work than the element's bytes take to
    move. (One or two are the modulo_offsets signal's business: their cost is the lost vector width.) Divisions made
    once before a loop that streams the tiles (an implicit GEMM's row decode) are paid once per program, not per
    element moved."""
    runtime = s.derived({p for p in s.k.params if p not in s.k.constexprs})  # values unknown at compile time
    hits = [n for n in ast.walk(s.fn) if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mod, ast.FloorDiv))
            and s.uses_arange(n.left) and names_in(n.right) & runtime]
    streamed = any(id(c) in s.in_loop for c in s.tile_loads(s.fn))
    if len(hits) * DIVMOD_INSTRUCTIONS <= ELEMENT_INSTRUCTION_BUDGET or (
            streamed and not any(id(n) in s.in_loop for n in hits)):
        return []
    divisors = sorted({name for n in hits for name in names_in(n.right)})
    return [Signal("runtime_divmod", s.fn.name, sorted({n.lineno for n in hits}),
                   f"{len(hits)} integer %/// by runtime values ({', '.join(divisors)}) per element: ~"
                   f"{len(hits) * DIVMOD_INSTRUCTIONS} integer instructions each element pays",
                   _explains(s, "misaligned_access", "masked_access", count=len(hits), via=divisors, cost="alu"),
                   weight=min(1.0, len(hits) / 8))]


def _carried(loop: ast.For, before: set[str]) -> list[str]:
    """Names the loop updates from their own previous value (acc += x, acc = f(acc, x)) that exist before it."""
    out = []
    for stmt in loop.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                out.append(node.target.id)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id in names_in(node.value):
                out.append(node.targets[0].id)
    return [n for n in dict.fromkeys(out) if n in before]


def _updated_from_data(s: KernelScan, loop: ast.For, name: str) -> bool:
    """Whether the loop updates `name` from loaded tiles (acc += x, h = a * h + x), not only from integers such as a
    tile counter or a running offset computed from scalar metadata (a persistent loop's bookkeeping is no chain of
    data)."""
    def loads(node: ast.AST) -> bool:
        return bool(s.tile_loads(node)) or any(isinstance(c, ast.Call) and tl_name(c, s.m.aliases) == "dot"
                                               for c in ast.walk(node))

    data = s.derived(set(), source=loads)
    for stmt in loop.body:
        for node in ast.walk(stmt):
            target = node.target if isinstance(node, ast.AugAssign) else (
                node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
            if isinstance(target, ast.Name) and target.id == name and (loads(node.value) or names_in(node.value) & data):
                return True
    return False


def serial_loops(s: KernelScan) -> list[tuple[ast.For, list[str]]]:
    """(loop, carried names) of each loop over a runtime-length axis that every program walks whole (its range does
    not depend on program_id), loading tiles into an accumulator carried across iterations: a reduction or scan the
    grid does not split."""
    runtime = {p for p in s.k.params if p not in s.k.constexprs}
    pids = {n for n, v in s.assignments if any(tl_name(c, s.m.aliases) == "program_id" for c in ast.walk(v)
                                                if isinstance(c, ast.Call))}
    out = []
    for loop in loops_of(s.fn):
        call = loop.iter if isinstance(loop, ast.For) else None
        if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "range" and call.args):
            continue
        bounds = set().union(*(names_in(a) for a in call.args))
        if not bounds & runtime or bounds & pids or any(tl_name(c, s.m.aliases) == "program_id" for a in call.args
                                                         for c in ast.walk(a) if isinstance(c, ast.Call)):
            continue
        tiles = [c for st in loop.body for c in ast.walk(st) if isinstance(c, ast.Call)
                 and tl_name(c, s.m.aliases) == "load" and c.args and s.uses_arange(c.args[0])]
        before = {n for n, v in s.assignments if v.lineno < loop.lineno} | set(s.k.params)
        carried = [n for n in _carried(loop, before) if _updated_from_data(s, loop, n)]
        if tiles and carried:
            out.append((loop, carried))
    return out


def _blocked(loop: ast.For, stop: ast.AST, blocks: set[str]) -> bool:
    """Whether each iteration takes a block of the axis: range(cdiv(M, BLOCK_M)), or the loop variable times a
    block constexpr (it * BLOCK_M) in the body."""
    var = names_in(loop.target)

    def scales(a: ast.AST, b: ast.AST) -> bool:
        return bool(names_in(a) & var and names_in(b) & blocks)

    return bool(names_in(stop) & blocks) or any(
        isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and (scales(n.left, n.right) or scales(n.right, n.left))
        for st in loop.body for n in ast.walk(st))


def _stepped_loops(s: KernelScan) -> list[tuple[ast.For, list[str], ast.AST]]:
    """(loop, carried names, stop) of the serial loops that take one position of their axis per iteration."""
    out = []
    for loop, carried in serial_loops(s):
        call = loop.iter
        stop = call.args[1] if len(call.args) > 1 else call.args[0]
        step = call.args[2] if len(call.args) > 2 else None
        if (step is None or const_value(step, s.m.constants) == 1) and not _blocked(loop, stop, set(s.k.constexprs)):
            out.append((loop, carried, stop))
    return out


def _stored_each_step(s: KernelScan, loop: ast.For, carried: list[str]) -> list[str]:
    """The carried names a tl.store inside the loop writes out every iteration: the loop emits a running state per
    position (a scan or recurrence), not one result at the end (a reduction)."""
    stores = [c for st in loop.body for c in ast.walk(st) if isinstance(c, ast.Call) and tl_name(c, s.m.aliases) == "store"]
    values = [c.args[1] if len(c.args) > 1 else next((k.value for k in c.keywords if k.arg == "value"), None)
              for c in stores]
    return [n for n in carried if any(v is not None and n in names_in(v) for v in values)]


@detects("stepped_scan")
def _stepped_scan(s: KernelScan) -> list[Signal]:
    """A loop over a runtime-length axis that takes one position per iteration, updates a carried state from it and
    stores the state every iteration (h = a * h + x; tl.store(h_ptr + t * stride, h)): a scan done one position
    at a time, as long a dependent chain as the axis, with one small access per trip. A chunk of positions scanned
    at once (tl.associative_scan, tl.cumsum) with the last state carried is the fix; the tiny grid or small tile
    this leaves, and the serial chain itself, follow from it."""
    out = []
    for loop, carried, stop in _stepped_loops(s):
        states = _stored_each_step(s, loop, carried)
        if states:
            out.append(Signal("stepped_scan", s.fn.name, [loop.lineno],
                              f"loop over {ast.unparse(loop.target)} in range({ast.unparse(stop)}) steps one position "
                              f"per iteration and stores the running {', '.join(states)} each time: a scan done one "
                              f"position at a time",
                              _explains(s, "serial_reduction", "low_occupancy", "small_block", "too_many_programs",
                                        axis=ast.unparse(stop), carried=states)))
    return out


@detects("serial_chain")
def _serial_chain(s: KernelScan) -> list[Signal]:
    """`for t in range(0, T)` over a runtime length, one row (a tile of the other axis) per iteration into a carried
    accumulator: each iteration waits on the last, so a long axis becomes a long dependent chain of tiny loads, and
    the axis cannot spread over programs. Scalar loads per iteration are scalar_loop's; a loop taking a block of
    rows per iteration (range(0, M, BLOCK_M), it * BLOCK_M) is an ordinary blocked reduction."""
    out = []
    for loop, carried, stop in _stepped_loops(s):
        if _stored_each_step(s, loop, carried):
            continue  # a scan stepped one position per trip: stepped_scan's
        # a position an inner loop streams in tiles (a plane of an NCHW channel) is no small row, however few
        streams = _streams_inner_tiles(s, loop)
        moves = "streams one slice (an inner tile loop) per iteration" if streams else "moves one row per iteration"
        out.append(Signal("serial_chain", s.fn.name, [loop.lineno],
                          f"loop over {ast.unparse(loop.target)} in range({ast.unparse(stop)}) {moves} into "
                          f"{', '.join(carried)}: a dependent chain as long as the axis",
                          _explains(s, "low_occupancy", axis=ast.unparse(stop), carried=carried, streams=streams)))
    return out


def detect_signals(source: str, path: str = "<source>") -> tuple[list[Signal], dict[str, set[str]]]:
    """All L1 signals in a task file's source, plus each kernel's kinds (dot, reduce, ...).

    Raises SyntaxError for source that does not parse (triage turns it into a finding)."""
    module = TaskSource(ast.parse(source, filename=path))
    signals: list[Signal] = []
    kinds: dict[str, set[str]] = {}
    for kernel in module.kernels.values():
        scan = KernelScan(module, kernel)
        kinds[kernel.node.name] = scan.kinds()
        for detector in DETECTORS.values():
            signals.extend(detector(scan))
    return signals, kinds


def l1_view(source: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(kernel kinds, signal names) of a source as L1 sees it, over all its kernels; empty if it does not parse."""
    try:
        signals, kinds = detect_signals(source)
    except SyntaxError:
        return (), ()
    return tuple(sorted(set().union(*kinds.values()))), tuple(sorted({sig.name for sig in signals}))
