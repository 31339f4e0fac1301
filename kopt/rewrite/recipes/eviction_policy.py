"""An eviction policy on streaming loads, so data read once does not push reused data out of L2."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from kopt.rewrite.cst import NotApplicable, Source, calls, has_call, names_in
from kopt.rewrite.recipes.base import Context, Proposal, Variant


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
