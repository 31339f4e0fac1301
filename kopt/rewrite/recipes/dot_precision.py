"""Let an fp32 tl.dot use tf32 (or tf32x3) tensor cores, when the task's tolerance allows the error."""

from __future__ import annotations

import libcst as cst

from kopt.rewrite.cst import NotApplicable, Source, calls
from kopt.rewrite.recipes.base import Context, Proposal, Variant

# The relative error a reduced-precision fp32 dot brings; the task's tolerance must already allow it.
DOT_PRECISION_RTOL = {"tf32": 1e-3, "tf32x3": 1e-5}


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
