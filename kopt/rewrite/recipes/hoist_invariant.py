"""Hoist a loop-invariant tl.load out of its loop."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from kopt.rewrite.cst import NotApplicable, Source, calls, names_in
from kopt.rewrite.recipes.base import Context, Proposal, Variant


def hoist_invariant(src: Source, ctx: Context) -> Proposal:
    """Move `x = tl.load(...)` whose operands no loop statement assigns to just before the loop."""
    replacements, moved = {}, []
    for kernel in src.kernels().values():
        for loop in m.findall(kernel, m.For()):
            assigned = names_in(loop.target) | {t.value for a in m.findall(loop.body, m.AssignTarget())
                                                for t in m.findall(a, m.Name())}
            assigned |= {a.target.value for a in m.findall(loop.body, m.AugAssign(target=m.Name()))}
            stored = {src.code(c.args[0].value).split("+")[0].strip() for c in calls(loop.body, "store") if c.args}
            hoist = []
            for stmt in loop.body.body:
                if not m.matches(stmt, m.SimpleStatementLine(body=[m.Assign(value=m.Call(func=m.Attribute(attr=m.Name("load"))))])):
                    continue
                load = stmt.body[0].value
                used = names_in(load)
                own = {t.target.value for t in stmt.body[0].targets if isinstance(t.target, cst.Name)}
                if used & (assigned - own) or any(s in used for s in stored) or own & names_in_others(loop, stmt):
                    continue
                hoist.append(stmt)
            if not hoist:
                continue
            body = [s for s in loop.body.body if s not in hoist]
            if not body:
                body = [cst.SimpleStatementLine([cst.Pass()])]
            new_loop = loop.with_changes(body=loop.body.with_changes(body=body))
            replacements[id(loop)] = cst.FlattenSentinel([*hoist, new_loop])
            moved += [src.line(s) for s in hoist]
    if not replacements:
        raise NotApplicable("no tl.load in a loop whose address and mask are loop-invariant (or the loop stores to it)")
    return Proposal("hoist_invariant", f"loop-invariant load(s) at line(s) {', '.join(map(str, moved))} hoisted",
                    [Variant("hoisted", src.rewrite(replacements))])


def names_in_others(loop: cst.For, stmt: cst.CSTNode) -> set[str]:
    """Names assigned by statements of the loop other than stmt (a hoisted name must not be reassigned)."""
    out = set()
    for other in loop.body.body:
        if other is stmt:
            continue
        for target in m.findall(other, m.AssignTarget()):
            out |= names_in(target)
    return out
