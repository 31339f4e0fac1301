"""tl.multiple_of / tl.max_contiguous hints on block offsets, so loads can vectorize."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from kopt.rewrite.cst import NotApplicable, Source, expr, has_call
from kopt.rewrite.recipes.base import Context, Proposal, Variant


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
