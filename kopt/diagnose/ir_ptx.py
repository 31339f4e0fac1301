"""What the machine code does, per source line (PTX) and per kernel (SASS).

PTX keeps `.loc` line info, so global load/store widths, async copies and MMA
instructions can be pinned to kernel lines. SASS (as `get_sass` prints it) has no
line info; it gives the final truth in counts: LDG.E.128 vs LDG.E, LDL/STL spills,
LDGSTS (cp.async), UTMALDG (TMA), HGMMA/HMMA vs FFMA.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from kopt.diagnose.ir_loc import SourceLoc, ptx_lines

_GLOBAL_MEM = re.compile(r"^(?:@!?%p\w+\s+)?(ld|st)\.global((?:\.[\w:]+)*)")
_VEC = re.compile(r"\.v(\d)\b")
_BITS = re.compile(r"\.[bfsu](8|16|32|64|128)\b")
_CP_ASYNC = re.compile(r"^(?:@!?%p\w+\s+)?cp\.async\.(?:ca|cg)\.shared(?:::cta)?\.global[^,]*,[^,]*,\s*(0x[0-9a-f]+|\d+)")
_TMA = re.compile(r"\bcp\.async\.bulk\.tensor\b")
_LOCAL = re.compile(r"\b(ld|st)\.local\b")
_SHARED = re.compile(r"\b(?:(?:ld|st)\.shared|ldmatrix|stmatrix)\b")


@dataclass
class LineCode:
    """Machine facts of one source line (line, col) from PTX."""

    loads: list[int] = field(default_factory=list)  # bytes per thread per global load instruction
    stores: list[int] = field(default_factory=list)
    cp_async: list[int] = field(default_factory=list)  # bytes per cp.async
    tma: int = 0
    wgmma: int = 0
    mma_sync: int = 0
    fma: int = 0
    local: int = 0
    shared: int = 0  # ld/st.shared, ldmatrix/stmatrix: what a layout conversion costs
    excerpt: list[str] = field(default_factory=list)
    first: dict[str, str] = field(default_factory=dict)  # kind (ld/st/cp.async) -> its first instruction


def _width_bytes(mods: str) -> int:
    vec = _VEC.search(mods)
    bits = _BITS.findall(mods)
    return (int(vec.group(1)) if vec else 1) * (int(bits[-1]) if bits else 32) // 8


def ptx_facts(ptx: str) -> dict[tuple[str, int, int], LineCode]:
    """PTX facts keyed by (file, line, col) of the source location."""
    out: dict[tuple[str, int, int], LineCode] = {}
    for loc, text in ptx_lines(ptx):
        if loc is None:
            continue
        fact = out.setdefault((loc.file, loc.line, loc.col), LineCode())
        interesting = True
        if m := _GLOBAL_MEM.match(text):
            (fact.loads if m.group(1) == "ld" else fact.stores).append(_width_bytes(m.group(2)))
            fact.first.setdefault(m.group(1), _strip_predicate(text))
        elif m := _CP_ASYNC.match(text):
            fact.cp_async.append(int(m.group(1), 0))
            fact.first.setdefault("cp.async", _strip_predicate(text))
        elif _TMA.search(text):
            fact.tma += 1
        elif "wgmma.mma_async" in text:
            fact.wgmma += 1
        elif re.match(r"^(?:@!?%p\w+\s+)?mma\.sync", text):
            fact.mma_sync += 1
        elif re.match(r"^(?:@!?%p\w+\s+)?fma\.rn", text):
            fact.fma += 1
        elif _LOCAL.search(text):
            fact.local += 1
        elif _SHARED.search(text):
            fact.shared += 1
        else:
            interesting = False
        if interesting and len(fact.excerpt) < 3:
            fact.excerpt.append(text)
    return out


def _strip_predicate(text: str) -> str:
    return re.sub(r"^@!?%p\w+\s+", "", text)


def facts_for(facts: dict[tuple[str, int, int], LineCode], loc: SourceLoc) -> LineCode | None:
    """The PTX facts of an op's exact (line, col), or of its whole line when the column differs."""
    exact = facts.get((loc.file, loc.line, loc.col))
    if exact is not None:
        return exact
    same_line = [v for (f, ln, _), v in facts.items() if ln == loc.line and _same_file(f, loc.file)]
    if not same_line:
        return None
    merged = LineCode()
    for v in same_line:
        for name in ("loads", "stores", "cp_async", "excerpt"):
            getattr(merged, name).extend(getattr(v, name))
        for kind, text in v.first.items():
            merged.first.setdefault(kind, text)
        for name in ("tma", "wgmma", "mma_sync", "fma", "local", "shared"):
            setattr(merged, name, getattr(merged, name) + getattr(v, name))
    return merged


def _same_file(a: str, b: str) -> bool:
    return a == b or a.rsplit("/", 1)[-1] == b.rsplit("/", 1)[-1]


_SASS_OP = re.compile(r"^\s*(?:[-\w]+:[-\w]+:[-\w]+:[-\w]+:[-\w]+\s+)?(?:/\*[0-9a-f]+\*/\s*)?(?:@!?U?P[T\d]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_x]+)*)")


def sass_counts(sass: str) -> Counter:
    """Opcode (with modifiers) -> count, e.g. {'LDG.E.128': 4, 'STL': 45, 'HGMMA.64x128x16.F32': 8}."""
    counts: Counter = Counter()
    for line in sass.splitlines():
        if line.startswith("Function:") or line.strip().startswith("."):
            continue
        if m := _SASS_OP.match(line):
            counts[m.group(1)] += 1
    return counts


def sass_summary(counts: Counter) -> dict[str, int]:
    """The families L3 reasons about, summed over modifiers."""
    def total(pred) -> int:
        return sum(n for op, n in counts.items() if pred(op))

    return {
        "ldg_128": total(lambda o: _is_ldg(o) and ".128" in o),
        "ldg_64": total(lambda o: _is_ldg(o) and ".64" in o),
        "ldg_narrow": total(lambda o: _is_ldg(o) and ".128" not in o and ".64" not in o),
        "stg_128": total(lambda o: o.startswith("STG") and ".128" in o),
        "stg_narrow": total(lambda o: o.startswith("STG") and ".128" not in o and ".64" not in o),
        "ldl": total(lambda o: o.startswith("LDL")),
        "stl": total(lambda o: o.startswith("STL")),
        "ldgsts": total(lambda o: o.startswith("LDGSTS")),
        "tma": total(lambda o: o.startswith("UTMALDG") or o.startswith("UBLKCP")),
        "hgmma": total(lambda o: o.startswith("HGMMA")),
        "hmma": total(lambda o: o.startswith("HMMA")),
        "ffma": total(lambda o: o.startswith("FFMA")),
    }


def _is_ldg(op: str) -> bool:
    return op == "LDG" or op.startswith("LDG.")
