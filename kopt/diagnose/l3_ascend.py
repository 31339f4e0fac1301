"""L3 for Ascend: read the adapter's linalg-level IR ("ttadapter") and say, per kernel source line, how
each memory access was lowered.

triton-ascend's adapter turns a tl.load/tl.store whose offsets it can describe as base + strides x
arange into one block copy between global memory and the on-chip Unified Buffer (`memref.copy` from a
`memref.reinterpret_cast` for loads, `bufferization.materialize_in_destination` for stores). A mask it can
bound (offs < n) becomes a `memref.subview` of that copy. Anything else - offsets from a loaded index,
`%` or `//` on the vector index, shapes the pointer analysis cannot follow - is rewritten by
TritonToUnstructure into an `scf.for {ExtractedLoadOrStore}` of one-element accesses: a scalar loop.
A mask it cannot bound (offs % 2 == 0) reads the whole block and applies `arith.select`.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kopt.diagnose.ir_loc import LocTable
from kopt.harness.compiled import CompiledKernel
from kopt.vocabulary import Evidence, Finding

# 910B (Atlas A2) Unified Buffer: 192 KB per vector core. triton-ascend states it in
# third_party/ascend/backend/runtime/utils.py (ub_size_in_kbytes = 192) and docs/zh/programming_guide.md;
# docs/sources/python-api/outline.md: all tensors of a kernel together must stay under 96 KB with
# double buffering on (the default), 192 KB with it off.
UB_BYTES = 192 * 1024
UB_DOUBLE_BUFFERED_BYTES = UB_BYTES // 2
ASCEND_REV = "eeb030e7b"  # the triton-ascend commit the compiler references below were read at
SCALARIZER_REF = f"third_party/ascend/lib/TritonToUnstructure/UnstructureConversionPass.cpp:237@{ASCEND_REV}"

DTYPE_BYTES = {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "f16": 2, "bf16": 2, "i16": 2, "i8": 1, "i1": 1,
               "f8E4M3FN": 1, "f8E5M2": 1, "index": 8}

_SSA = r"%[\w#.]+"
_CONST = re.compile(rf"^\s*({_SSA}) = arith\.constant (-?\d+) : (?:index|i\d+)")
_REINTERPRET = re.compile(
    rf"^\s*({_SSA}) = memref\.reinterpret_cast ({_SSA}) to offset: \[[^\]]*\], sizes: \[([^\]]*)\], "
    rf"strides: \[([^\]]*)\] : memref<\?x(\w+)>")
_SUBVIEW = re.compile(rf"^\s*({_SSA}) = memref\.subview ({_SSA})\[")
_COPY = re.compile(rf"^\s*memref\.copy ({_SSA}), ({_SSA}) ")
_TO_TENSOR = re.compile(rf"^\s*({_SSA}) = bufferization\.to_tensor ({_SSA}) ")
_MATERIALIZE = re.compile(rf"^\s*bufferization\.materialize_in_destination ({_SSA}) in writable ({_SSA}) ")
_FOR = re.compile(rf"scf\.for ({_SSA}) = ({_SSA}) to ({_SSA}) step ({_SSA})")
_EXTRACT = re.compile(rf"tensor\.extract ({_SSA})\[[^\]]*\] {{DiscreteMemAccess}} : tensor<[\dx]+x(i\d+)>")
_SCALAR_LOAD = re.compile(r"\bmemref\.load\b")
_DIVMOD = re.compile(r"\barith\.(remsi|remui|divsi|divui|floordivsi|ceildivsi)\b")
_SELECT = re.compile(rf"^\s*({_SSA}) = arith\.select ({_SSA}), ({_SSA}), ")
_ALLOC = re.compile(r"(?:memref\.alloc\(\) : memref|tensor\.empty\(\) : tensor)<([\dx]+)x(\w+)>")
_MATMUL = re.compile(r"\blinalg\.(?:matmul|batch_matmul)\b")
_MIX_MODE = re.compile(r'mix_mode = "(\w+)"')


@dataclass
class Access:
    """One tl.load / tl.store as the adapter lowered it."""

    line: int
    op: str  # load | store
    lowering: str  # block_copy | scalar_loop
    mask: str  # bounded (subview) | select (whole block read, then select) | none
    shape: list[int] = field(default_factory=list)  # the block, for a block copy
    strides: list[str] = field(default_factory=list)  # element strides of the block ('?' dynamic)
    dtype: str = ""
    cause: str | None = None  # scalar loops: indirect | modulo | unstructured
    elements: int | None = None  # scalar loops: iterations per program
    piece: list[int] = field(default_factory=list)  # scalar loops: what one iteration moves ([1] or e.g. [1, 128])


@dataclass
class AscendFacts:
    """What L3 saw in one kernel's ttadapter IR, keyed to its source lines."""

    kernel: str
    source_file: str
    mix_mode: str  # aiv (vector cores) | aic (cube) | mix (both)
    accesses: list[Access] = field(default_factory=list)
    cube_lines: list[int] = field(default_factory=list)  # dots lowered to linalg.matmul (cube unit)
    buffers: list[dict] = field(default_factory=list)  # {line, shape, dtype, bytes}: on-chip buffers
    scalarized_by: str | None = None  # the adapter pass that introduced the scalar loops (from the trajectory)

    @property
    def buffer_bytes(self) -> int:
        """A lower bound of the on-chip footprint: explicit buffers only, not elementwise temporaries."""
        return sum(b["bytes"] for b in self.buffers)

    def to_dict(self) -> dict:
        return {**asdict(self), "buffer_bytes": self.buffer_bytes}


def _trailing_loc(line: str) -> str | None:
    """The `loc(...)` an op line ends with, without the wrapper."""
    text = line.rstrip()
    start = text.rfind("loc(")
    while start >= 0:
        depth = 0
        for i in range(start + 3, len(text)):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                if i == len(text) - 1:
                    return text[start + 4:i]
                break
        start = text.rfind("loc(", 0, start)
    return None


class _Frame:
    def __init__(self, is_for: bool, header: str):
        self.is_for = is_for
        self.header = header
        self.text: list[str] = []
        self.id = id(self)


def ascend_facts(kernel: CompiledKernel) -> AscendFacts:
    """Walk the ttadapter IR once, tracking SSA names of block copies and the scalar loops around accesses."""
    ir = kernel.asm.get("ttadapter", "")
    locs = LocTable(ir)
    source = str(Path(kernel.source_file).resolve())
    mix = _MIX_MODE.search(ir)
    facts = AscendFacts(kernel.name, kernel.source_file, mix.group(1) if mix else "aiv")

    def line_of(text: str) -> int | None:
        expr = _trailing_loc(text)
        loc = locs.resolve(expr) if expr else None
        if loc is None or str(Path(loc.file).resolve()) != source:
            return None
        return loc.line

    consts: dict[str, int] = {}
    casts: dict[str, tuple[list[str], list[str], str]] = {}  # name -> (sizes, strides, dtype)
    subviews: dict[str, str] = {}  # subview -> its base
    loaded: set[str] = set()  # tensors read from global memory
    selects: dict[int, bool] = {}  # line -> an arith.select applies a mask there
    stack: list[_Frame] = []
    # The {ExtractedLoadOrStore} mark is printed on a loop's closing brace, so accesses are kept with the
    # ids of their enclosing loops and those inside a scalar loop are dropped at the end.
    found: list[tuple[Access, set[int]]] = []
    scalar_loops: set[int] = set()

    def enclosing() -> set[int]:
        return {f.id for f in stack if f.is_for}

    def base(name: str) -> str:
        while name in subviews:
            name = subviews[name]
        return name

    for raw in ir.splitlines():
        stripped = raw.strip()
        if stripped.startswith("}"):
            frame = stack.pop() if stack else None
            if frame and frame.is_for and "ExtractedLoadOrStore" in stripped:
                scalar_loops.add(frame.id)
                if access := _scalar_loop(frame, line_of(stripped), consts, loaded):
                    found.append((access, enclosing()))  # an inner dimension of an outer one is dropped below
            if stack and frame:
                stack[-1].text.extend(frame.text)  # the parent sees its nested regions' ops
            if stripped.endswith("{"):
                stack.append(_Frame(False, stripped))
            continue
        if stripped.endswith("{"):
            stack.append(_Frame("scf.for" in stripped, stripped))
            continue
        if stack:
            stack[-1].text.append(stripped)
        if m := _CONST.match(raw):
            consts[m.group(1)] = int(m.group(2))
        elif m := _REINTERPRET.match(raw):
            sizes = [s.strip() for s in m.group(3).split(",")]
            strides = [s.strip() for s in m.group(4).split(",")]
            casts[m.group(1)] = (sizes, strides, m.group(5))
        elif m := _SUBVIEW.match(raw):
            subviews[m.group(1)] = m.group(2)
        elif m := _TO_TENSOR.match(raw):
            loaded.add(m.group(1))
        elif m := _SELECT.match(raw):
            if (line := line_of(raw)) is not None:
                selects[line] = True
        elif m := _COPY.match(raw):
            src = base(m.group(1))
            if src in casts and (line := line_of(raw)) is not None:
                found.append((_block_access("load", line, casts[src], m.group(1) != src, consts), enclosing()))
        elif m := _MATERIALIZE.match(raw):
            dst = base(m.group(2))
            if dst in casts and (line := line_of(raw)) is not None:
                found.append((_block_access("store", line, casts[dst], m.group(2) != dst, consts), enclosing()))
        if (m := _ALLOC.search(raw)) and (line := line_of(raw)) is not None:
            shape = [int(d) for d in m.group(1).split("x")]
            count = 1
            for d in shape:
                count *= d
            facts.buffers.append({"line": line, "shape": shape, "dtype": m.group(2), "alloc": "memref.alloc" in raw,
                                  "bytes": count * DTYPE_BYTES.get(m.group(2), 4)})
        if _MATMUL.search(raw) and (line := line_of(raw)) is not None:
            facts.cube_lines.append(line)
    facts.accesses = [access for access, loops in found if not loops & scalar_loops]
    for access in facts.accesses:
        if access.op == "load" and access.mask == "none" and selects.get(access.line):
            access.mask = "select"
    facts.accesses.sort(key=lambda a: (a.line, a.op))
    facts.scalarized_by = _introducing_pass(kernel.trajectory, "ExtractedLoadOrStore")
    return facts


def _block_access(op: str, line: int, cast: tuple[list[str], list[str], str], bounded: bool,
                  consts: dict[str, int]) -> Access:
    sizes, strides, dtype = cast
    resolved = [s if s.isdigit() else str(consts[s]) if s in consts else "?" for s in strides]
    return Access(line=line, op=op, lowering="block_copy", mask="bounded" if bounded else "none",
                  shape=[int(s) for s in sizes if s.isdigit()], strides=resolved, dtype=dtype)


def _scalar_loop(frame: _Frame, line: int | None, consts: dict[str, int], loaded: set[str]) -> Access | None:
    """A TritonToUnstructure loop: which access it replaces, how many elements, and why."""
    if line is None:
        return None
    body = "\n".join(frame.text)
    op = "load" if _SCALAR_LOAD.search(body) or any(_COPY.match(t) for t in frame.text) else "store"
    pieces = [m.group(3) for m in map(_REINTERPRET.match, frame.text) if m]
    piece = [int(s) for s in pieces[0].split(",") if s.strip().isdigit()] if pieces else [1]
    extracted = [m.group(1) for m in _EXTRACT.finditer(body)]
    if any(name in loaded for name in extracted):
        cause = "indirect"  # offsets read from memory: a gather/scatter
    elif _DIVMOD.search(body):
        cause = "modulo"
    else:
        cause = "unstructured"
    elements = None
    if m := _FOR.search(frame.header):
        lo, hi = consts.get(m.group(2)), consts.get(m.group(3))
        if lo is not None and hi is not None:
            elements = hi - lo
    return Access(line=line, op=op, lowering="scalar_loop", mask="none", cause=cause, elements=elements, piece=piece)


def _kebab(name: str) -> str:
    """TritonToUnstructure -> triton-to-unstructure (the pass notes' and flags' spelling)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()


def _introducing_pass(trajectory: list, marker: str) -> str | None:
    """The first pass after which `marker` appears (the trajectory holds the IR *before* each pass)."""
    for i, (_, ir) in enumerate(trajectory):
        if marker in ir:
            return trajectory[i - 1][0] if i > 0 else None
    return None


_CAUSES = {
    "indirect": ("its offsets come from a loaded index (a gather/scatter)",
                 ["a block copy needs offsets = base + strides x tl.arange, known without reading memory",
                  "if the indexed range is small, load it as one contiguous block and select/gather on chip",
                  "if indices are sorted or grouped, load contiguous runs per program instead of per element"]),
    "modulo": ("its offsets use % or // on the vector index, which the pointer analysis cannot express as strides",
               ["offsets must be affine in tl.arange: no % or // applied to the arange-derived vector",
                "reshape the block so the period becomes a dimension: a 2-D block [rows, m] with offsets "
                "row*m + col loads the periodic operand once per column block",
                "or move the % onto the scalar program offset (pid-based), where it costs nothing"]),
    "unstructured": ("the adapter's pointer analysis could not describe its offsets as base + strides",
                     ["offsets must be base + sum(stride_i x tl.arange_i) with loop-invariant strides"]),
}


def analyze_ascend(compiled: list[CompiledKernel], task_path: str | Path) -> list[Finding]:
    """L3 findings for Ascend kernels: scalar-loop accesses, masks read as whole blocks, UB overflow."""
    findings: list[Finding] = []
    for kernel in compiled:
        if "ttadapter" not in kernel.asm:
            continue
        facts = ascend_facts(kernel)
        where = lambda line: f"{task_path}:{line}"
        for a in facts.accesses:
            if a.lowering == "scalar_loop":
                why, conditions = _CAUSES[a.cause]
                n = f"{a.elements} " if a.elements else ""
                scalar = all(d == 1 for d in a.piece)
                shape = "one-element" if scalar else f"{'x'.join(map(str, a.piece))}-element"
                kind = "scalar loop" if scalar else "loop"
                findings.append(Finding(
                    id="unstructured_access", level="L3", confidence=0.9 if scalar else 0.75, kernel_lines=[a.line],
                    message=(f"{kernel.name}: the {a.op} at line {a.line} is a {kind} of {n}separate {shape} {a.op}s per "
                             f"program instead of one block copy: {why}"),
                    conditions=conditions,
                    evidence=[Evidence("L3", "ttadapter", f"scf.for {{ExtractedLoadOrStore}} at line {a.line} "
                                       f"({a.cause}); introduced by {facts.scalarized_by or 'TritonToUnstructure'}",
                                       data={**asdict(a), "kernel": kernel.name, "target": kernel.target,
                                             "compiler_ref": SCALARIZER_REF,
                                             "pass_name": _kebab(facts.scalarized_by or "TritonToUnstructure")},
                                       location=where(a.line))]))
            elif a.mask == "select" and a.op == "load":
                findings.append(Finding(
                    id="masked_access", level="L3", confidence=0.7, kernel_lines=[a.line],
                    message=(f"{kernel.name}: the mask of the load at line {a.line} could not be bounded: the whole "
                             f"{'x'.join(map(str, a.shape))} block is copied, then arith.select applies the mask"),
                    conditions=["masks that bound the offset range (offs < n, per dimension) become bounded copies",
                                "element-wise conditions (offs % 2 == 0) do not: load the bounded range, then filter"],
                    evidence=[Evidence("L3", "ttadapter", f"memref.copy without subview + arith.select at line {a.line}",
                                       data={**asdict(a), "kernel": kernel.name}, location=where(a.line))]))
        total = facts.buffer_bytes
        if facts.mix_mode == "aiv" and total > UB_DOUBLE_BUFFERED_BYTES:  # cube operands live in L1/L0, not UB
            big = max(facts.buffers, key=lambda b: (b["bytes"], b["alloc"]))
            findings.append(Finding(
                id="ub_overflow", level="L3", confidence=0.8 if total > UB_BYTES else 0.6,
                kernel_lines=sorted({b["line"] for b in facts.buffers}),
                message=(f"{kernel.name}: its on-chip buffers need at least {total // 1024} KB; the 910B Unified Buffer "
                         f"holds {UB_BYTES // 1024} KB ({UB_DOUBLE_BUFFERED_BYTES // 1024} KB per buffer set with "
                         f"double buffering); the largest is {'x'.join(map(str, big['shape']))} {big['dtype']} "
                         f"at line {big['line']}"),
                conditions=[f"keep the block's live tensors under {UB_DOUBLE_BUFFERED_BYTES // 1024} KB: a smaller "
                            "BLOCK, or a loop over sub-blocks inside the program"],
                evidence=[Evidence("L3", "ttadapter", f"memref.alloc/tensor.empty total {total} bytes",
                                   data={"buffers": facts.buffers, "ub_bytes": UB_BYTES,
                                         "ub_source": f"third_party/ascend/backend/runtime/utils.py:41@{ASCEND_REV}"},
                                   location=where(big["line"]))]))
    return findings


def _access_summary(a: Access) -> str:
    if a.lowering == "scalar_loop":
        n = f"{a.elements} " if a.elements else ""
        piece = "one-element" if all(d == 1 for d in a.piece) else f"{'x'.join(map(str, a.piece))}-element"
        return (f"{a.op}: lowered to a scalar loop (scf.for {{ExtractedLoadOrStore}}) of {n}{piece} {a.op}s "
                f"per program; cause: {_CAUSES[a.cause][0]}")
    mask = {"bounded": "mask bounded to a subview", "select": "mask not bounded: whole block read, then arith.select",
            "none": "no mask"}[a.mask]
    return (f"{a.op}: one block copy of {'x'.join(map(str, a.shape))} {a.dtype} (strides {', '.join(a.strides)}) "
            f"between global memory and the Unified Buffer; {mask}")


def attribute_ascend(compiled: list[CompiledKernel], task_path: str | Path):
    """The Ascend L3 as the shared L3Report: per-line access facts, per-kernel buffers, the findings."""
    from kopt.diagnose.l3 import L3Report

    report = L3Report()
    for kernel in compiled:
        if "ttadapter" not in kernel.asm:
            report.notes.append(f"{kernel.name}: no ttadapter IR in the compiled record; Ascend L3 needs it")
            continue
        facts = ascend_facts(kernel)
        report.kernels.append({"kernel": kernel.name, "target": kernel.target, "mix_mode": facts.mix_mode,
                               "buffer_bytes": facts.buffer_bytes, "ub_bytes": UB_BYTES,
                               "scalarized_by": facts.scalarized_by, "cube_lines": facts.cube_lines})
        for a in facts.accesses:
            report.lines.setdefault(f"{task_path}:{a.line}", []).append(
                {"kind": a.op, "kernel": kernel.name, "summary": _access_summary(a), **asdict(a)})
    report.findings = analyze_ascend(compiled, task_path)
    return report
