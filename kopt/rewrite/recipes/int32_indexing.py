"""Drop int64 offset casts where every offset fits in 32 bits."""

from __future__ import annotations

import math
from typing import Any

import libcst.matchers as m

from kopt.rewrite.cst import NotApplicable, Source
from kopt.rewrite.recipes.base import Context, Proposal, Variant


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
