"""A small reader for TTGIR (and TTIR) text: ops with their source locations, layouts,
kernel arguments and enclosing loops, plus a backward walk that explains a memory op's
address: which arguments it rests on, which dims are contiguous, which runtime values
scale it, and what its mask compares against.

This is not an MLIR parser; it reads the one-op-per-line form Triton prints, which is
enough to recover what Triton's own AxisInfo analysis sees (divisibility hints on
arguments, unit-stride ranges, runtime strides, modulo/division, indirect offsets).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kopt.diagnose.ir_loc import LocTable, SourceLoc

_LAYOUT_DEF = re.compile(r"^#(\w+) = #ttg\.(\w+)<\{(.*)\}>\s*$", re.M)
_LIST_FIELD = re.compile(r"(\w+) = \[([^\]]*)\]")
_OP = re.compile(r"^\s*(?:(?P<res>%[\w#:, %]+?) = )?(?P<op>[a-z_]+\.[\w.]+)\b(?P<body>.*)$")
_TRAILING_LOC = re.compile(r"\s+loc\((.*)\)\s*$")
_VALUE = re.compile(r"%[\w#]+")
_TENSOR = re.compile(r"tensor<([0-9x]+)x(!tt\.ptr<(\w+)>|\w+)(?:,\s*#?([^>]+?))?>")
_FUNC = re.compile(r"tt\.func (?:public |private )?@(\w+)\((.*)\)( attributes \{.*\})? \{$")
_ARG = re.compile(r"%(\w+): ([^{]+?)(?: \{([^}]*)\})? loc\(")
_ITER_ARGS = re.compile(r"iter_args\(([^)]*)\)")
_FOR_IV = re.compile(r"scf\.for (%[\w#]+) = (%[\w#]+) to")
_INT_ATTR = re.compile(r"([\w.]+) = (-?\d+) : i\d+")
_CONST = re.compile(r"arith\.constant (?:dense<)?(-?\d+)>?")

ELEM_BYTES = {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "tf32": 4, "f16": 2, "bf16": 2, "i16": 2,
              "i8": 1, "i1": 1, "f8E4M3FN": 1, "f8E5M2": 1, "f8E4M3FNUZ": 1, "f8E5M2FNUZ": 1}


@dataclass
class Layout:
    name: str
    kind: str  # blocked | nvidia_mma | shared ...
    fields: dict[str, list[int]]
    text: str

    @property
    def order(self) -> list[int]:
        return self.fields.get("order", [])

    @property
    def size_per_thread(self) -> list[int]:
        return self.fields.get("sizePerThread", [])

    def describe(self) -> str:
        keys = ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order")
        parts = [f"{k}={self.fields[k]}" for k in keys if k in self.fields]
        return f"#{self.name} ({self.kind}: {', '.join(parts)})" if parts else f"#{self.name} ({self.kind})"


@dataclass
class Arg:
    name: str
    type: str
    attrs: dict[str, int]

    @property
    def divisibility(self) -> int:
        return self.attrs.get("tt.divisibility", 1)

    @property
    def is_pointer(self) -> bool:
        return self.type.startswith("!tt.ptr")


@dataclass
class Op:
    index: int
    name: str  # e.g. tt.load
    results: list[str]
    operands: list[str]
    text: str  # the op line without its loc
    loc: SourceLoc | None
    loops: tuple[int, ...]  # indices of enclosing scf.for ops, outermost first
    shape: list[int] = field(default_factory=list)  # first tensor type in the line
    elem: str = ""
    layout: str = ""
    attrs: dict[str, int] = field(default_factory=dict)


@dataclass
class Module:
    kernel: str
    args: dict[str, Arg]
    layouts: dict[str, Layout]
    ops: list[Op]
    defs: dict[str, Op]  # value name -> defining op
    aliases: dict[str, str]  # loop-carried block arg -> its initial value

    def ops_named(self, *names: str) -> list[Op]:
        return [op for op in self.ops if op.name in names]


def parse_module(ir: str) -> Module:
    """Parse Triton's printed TTGIR/TTIR (with `#loc` debug info) into ops and facts."""
    locs = LocTable(ir)
    layouts = {}
    for name, kind, body in _LAYOUT_DEF.findall(ir):
        fields = {k: [int(x) for x in v.split(",") if x.strip().lstrip("-").isdigit()]
                  for k, v in _LIST_FIELD.findall(body)}
        layouts[name] = Layout(name, kind, fields, body)
    kernel, args = "", {}
    ops: list[Op] = []
    defs: dict[str, Op] = {}
    aliases: dict[str, str] = {}
    stack: list[int | None] = []  # open regions: the op that opened each, None for the function
    for raw in ir.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("//"):
            continue
        if m := _FUNC.search(stripped):
            kernel = m.group(1)
            for aname, atype, aattrs in _ARG.findall(m.group(2)):
                args[aname] = Arg(aname, atype.strip(), {k: int(v) for k, v in _INT_ATTR.findall(aattrs or "")})
            stack.append(None)
            continue
        if stripped.startswith("}"):
            if stripped.endswith("{"):
                continue  # `} else {`: the same op's next region
            opened = stack.pop() if stack else None
            lm = _TRAILING_LOC.search(stripped)
            if opened is not None and lm and ops[opened].loc is None:
                ops[opened].loc = locs.resolve(lm.group(1))  # a region op's loc follows its closing brace
            continue
        m = _OP.match(line)
        if not m:
            continue
        body = m.group("body")
        loc = None
        if lm := _TRAILING_LOC.search(body):
            loc = locs.resolve(lm.group(1))
            body = body[: lm.start()]
        results = _VALUE.findall(m.group("res") or "")
        results = [r.split(":")[0].split("#")[0] for r in results]
        type_part = body.rsplit(" : ", 1)[-1] if " : " in body else ""
        operand_part = body.rsplit(" : ", 1)[0] if " : " in body else body
        op = Op(
            index=len(ops), name=m.group("op"), results=results, operands=_VALUE.findall(operand_part),
            text=f"{m.group('res') + ' = ' if m.group('res') else ''}{m.group('op')}{body}".strip(),
            loc=loc, loops=tuple(i for i in stack if i is not None and ops[i].name == "scf.for"),
            attrs={k: int(v) for k, v in _INT_ATTR.findall(operand_part)},
        )
        if t := _TENSOR.search(type_part or body):
            op.shape = [int(x) for x in t.group(1).split("x") if x]
            op.elem = t.group(3) or t.group(2)
            op.layout = (t.group(4) or "").strip()
        ops.append(op)
        for r in results:
            defs[r] = op
        if op.name == "scf.for":
            if iv := _FOR_IV.search(stripped):
                aliases[iv.group(1)] = iv.group(2)
            if ia := _ITER_ARGS.search(stripped):
                for pair in ia.group(1).split(","):
                    if " = " in pair:
                        block_arg, init = (p.strip() for p in pair.split(" = ", 1))
                        aliases[block_arg] = init
        if stripped.endswith("{"):
            stack.append(op.index)
    return Module(kernel, args, layouts, ops, defs, aliases)


@dataclass
class Access:
    """What the IR says about one memory op's address and mask."""

    base_args: dict[str, int] = field(default_factory=dict)  # pointer arg -> tt.divisibility
    contiguous_dims: set[int] = field(default_factory=set)  # dims with a unit-stride tl.arange
    strided_dims: dict[int, list[str]] = field(default_factory=dict)  # dim -> runtime/const scales
    scale_args: dict[str, tuple[int, set[int]]] = field(default_factory=dict)  # arg -> (divisibility, dims)
    mask_args: dict[str, int] = field(default_factory=dict)  # scalar args the mask compares to
    mask_ranges: bool = False  # the mask compares two index ranges (a triangular/causal mask): per element, not per tile
    has_mask: bool = False
    modulo: list[str] = field(default_factory=list)  # remsi/divsi ops on per-element offsets (not scalars)
    modulo_dims: set[int] = field(default_factory=set)  # dims of the access those per-element ops vary along
    indirect: bool = False  # offsets come from another load (a gather)
    loaded_scalars: list[int] = field(default_factory=list)  # lines of scalar bases/offsets/strides read from memory
    hints: dict[str, int] = field(default_factory=dict)  # tt.divisibility/contiguity on offset ops


_PASS_THROUGH = {"tt.broadcast", "tt.splat", "tt.int_to_ptr", "arith.addi", "arith.subi", "tt.addptr", "ttg.convert_layout",
                 "arith.extsi", "arith.extui", "arith.trunci", "arith.select", "arith.muli", "tt.make_range",
                 "arith.remsi", "arith.remui", "arith.divsi", "arith.divui", "tt.expand_dims", "tt.trans",
                 "tt.reshape", "arith.andi", "arith.ori", "arith.shli", "arith.minsi", "arith.maxsi"}


def analyze_access(module: Module, op: Op) -> Access:
    """Walk back from a memory op's pointer (and mask) to the kernel arguments they rest on."""
    acc = Access()
    ptr = op.operands[0] if op.operands else None
    mask = _mask_operand(op)
    acc.has_mask = mask is not None
    rank = len(op.shape)
    if ptr:
        _walk_address(module, ptr, list(range(rank)), frozenset(), acc, set())
    if mask:
        for name in _scalar_args_compared(module, mask):
            acc.mask_args[name] = module.args[name].divisibility
        acc.mask_ranges = _compares_ranges(module, mask)
    return acc


def _from_range(module: Module, value: str) -> bool:
    """Whether a value is computed from a tt.make_range (an index that varies per element)."""
    stack, seen = [value], set()
    while stack:
        v = _resolve(module, stack.pop())
        if v in seen or len(seen) > 500:
            continue
        seen.add(v)
        op = module.defs.get(v)
        if op is None or op.name == "tt.load":
            continue
        if op.name == "tt.make_range":
            return True
        if op.name in _PASS_THROUGH:
            stack.extend(op.operands)
    return False


def _compares_ranges(module: Module, mask: str) -> bool:
    """Whether the mask holds a comparison of two per-element indices (`offs_n[None, :] <= offs_m[:, None]`): it can
    change between any two neighbouring elements, so no vector can be proved whole."""
    stack, seen = [mask], set()
    while stack:
        v = _resolve(module, stack.pop())
        if v in seen:
            continue
        seen.add(v)
        op = module.defs.get(v)
        if op is None:
            continue
        if op.name == "arith.cmpi" and len(op.operands) == 2 and all(_from_range(module, x) for x in op.operands):
            return True
        if op.name in ("arith.andi", "arith.ori", "tt.broadcast", "ttg.convert_layout", "tt.expand_dims"):
            stack.extend(op.operands)
    return False


def _mask_operand(op: Op) -> str | None:
    if op.name == "ttg.async_copy_global_to_local":
        m = re.search(r" mask (%[\w#]+)", op.text)
        return m.group(1) if m else None
    if op.name == "tt.load" and len(op.operands) >= 2:
        return op.operands[1]
    if op.name in ("tt.store", "tt.atomic_rmw") and len(op.operands) >= 3:  # (ptr, value, mask)
        return op.operands[2]
    return None


def _resolve(module: Module, value: str) -> str:
    seen = set()
    while value in module.aliases and value not in seen:
        seen.add(value)
        value = module.aliases[value]
    return value


def _scale_of(module: Module, value: str) -> str | None:
    """The name of the runtime argument (or the constant) a multiplicand reduces to."""
    value = _resolve(module, value)
    seen = set()
    while value not in seen:
        seen.add(value)
        arg = value.lstrip("%")
        if arg in module.args:
            return arg
        op = module.defs.get(value)
        if op is None:
            return None
        if op.name == "arith.constant":
            c = _CONST.search(op.text)
            return c.group(1) if c else None
        if op.name in ("tt.splat", "tt.broadcast", "arith.extsi", "ttg.convert_layout", "tt.expand_dims") and op.operands:
            value = _resolve(module, op.operands[0])
            continue
        return "expr"
    return None


def _walk_address(module: Module, value: str, dims: list[int], scales: frozenset, acc: Access, seen: set) -> None:
    value = _resolve(module, value)
    key = (value, tuple(dims), scales)
    if key in seen or len(seen) > 4000:
        return
    seen.add(key)
    arg = value.lstrip("%")
    if arg in module.args:
        a = module.args[arg]
        if a.is_pointer:
            acc.base_args[arg] = a.divisibility
        return
    op = module.defs.get(value)
    if op is None:
        return
    for hint in ("tt.divisibility", "tt.contiguity", "tt.constancy"):
        if hint in op.attrs:
            acc.hints[hint] = op.attrs[hint]
    if op.name in ("tt.load", "ttg.local_load"):
        if dims:  # per-element offsets from memory: a gather
            acc.indirect = True
        elif op.loc:  # one value for the whole tile (a base pointer or stride from a descriptor): unknown alignment
            acc.loaded_scalars.append(op.loc.line)
        return
    if op.name in ("arith.remsi", "arith.remui", "arith.divsi", "arith.divui") and op.shape and dims and op.operands:
        acc.modulo.append(f"{op.name} at line {op.loc.line if op.loc else '?'}")  # a program-id scalar is not one
        acc.modulo_dims |= set(dims)
        # a per-element divisor is indexing arithmetic, not a stride: `offs // (H * W)` makes neither H nor W a scale
        # arg (launch_facts.indexing_names draws the same line)
        return _walk_address(module, op.operands[0], dims, scales, acc, seen)
    if op.name == "tt.make_range":
        for d in dims[:1]:
            real = [s for s in scales if s != "1"]
            if real:
                acc.strided_dims.setdefault(d, []).extend(sorted(real))
            else:
                acc.contiguous_dims.add(d)
        return
    if op.name not in _PASS_THROUGH:
        return
    if op.name == "tt.splat":
        dims = []
    elif op.name == "tt.expand_dims" and "axis" in op.attrs:
        axis = op.attrs["axis"]
        dims = [d for i, d in enumerate(dims) if i != axis]
    elif op.name == "tt.trans":
        order = [int(x) for x in re.findall(r"-?\d+", (re.search(r"order = array<i32: ([^>]*)>", op.text) or [None, ""])[1])]
        if order and len(order) == len(dims):
            src = [0] * len(dims)
            for j, i in enumerate(order):
                src[i] = dims[j]
            dims = src
    elif op.name == "tt.reshape":
        dims = []
    if op.name == "arith.muli" and len(op.operands) == 2:
        varying = {d for d, size in zip(dims, op.shape) if size > 1} if len(op.shape) == len(dims) else set(dims)
        for mine, other in ((op.operands[0], op.operands[1]), (op.operands[1], op.operands[0])):
            scale = _scale_of(module, other)
            if scale and scale in module.args:
                d, ds = acc.scale_args.get(scale, (module.args[scale].divisibility, set()))
                acc.scale_args[scale] = (d, ds | varying)
            _walk_address(module, mine, dims, scales | {scale or "expr"}, acc, seen)
        return
    for operand in op.operands:
        _walk_address(module, operand, dims, scales, acc, seen)


def _scalar_args_compared(module: Module, mask: str) -> list[str]:
    """Scalar kernel args that a mask compares against (their divisibility bounds vector width)."""
    found, stack, seen = [], [mask], set()
    while stack:
        v = _resolve(module, stack.pop())
        if v in seen:
            continue
        seen.add(v)
        arg = v.lstrip("%")
        if arg in module.args and not module.args[arg].is_pointer:
            found.append(arg)
            continue
        op = module.defs.get(v)
        if op is None or op.name in ("tt.load", "tt.make_range"):
            continue
        if op.name in ("arith.cmpi", "arith.andi", "arith.ori", "tt.splat", "tt.broadcast", "ttg.convert_layout",
                       "tt.expand_dims", "arith.subi", "arith.addi", "arith.muli", "arith.extsi"):
            stack.extend(op.operands)
    return sorted(set(found))
