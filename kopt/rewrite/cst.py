"""libcst helpers the recipes share: find kernels and their launches, resolve a launch argument to the
literal that sets it, and replace nodes by identity so every untouched byte (comments, spacing) stays."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider


class NotApplicable(Exception):
    """A recipe's precondition does not hold; the message says which and where."""


@dataclass
class Launch:
    """`kernel[grid](args..., KW=value)` inside a host function."""

    kernel: str
    call: cst.Call
    grid: cst.BaseExpression
    function: cst.FunctionDef  # the host function that launches
    line: int
    kwargs: dict[str, cst.Arg] = field(default_factory=dict)


@dataclass
class Knob:
    """A launch parameter and the node that sets it: an int literal (tunable), an expression (computed), or
    nothing (absent)."""

    name: str
    value: int | None  # None when computed or absent
    node: cst.BaseExpression | None  # the literal to replace; for a computed knob, the launch argument's value
    where: str  # "line N: how it is set", for messages
    absent: bool = False  # not passed at all: set it by adding a keyword argument

    @property
    def computed(self) -> bool:
        return self.value is None and not self.absent


def _resolve(wrapper: MetadataWrapper, provider):
    """The provider's metadata. libcst's position pass pops its node stack in a `finally`, so a Ctrl-C in the middle
    surfaces as a KeyError raised while handling it; the interrupt is what happened, so the interrupt propagates."""
    try:
        return wrapper.resolve(provider)
    except KeyError as exc:
        cause: BaseException | None = exc
        while cause is not None and not isinstance(cause, KeyboardInterrupt):
            cause = cause.__context__
        if cause is None:
            raise
        raise cause from None


class Source:
    """A parsed task file with positions and parents, and a way to rewrite it by node identity."""

    def __init__(self, text: str):
        try:
            self.wrapper = MetadataWrapper(cst.parse_module(text))
        except cst.ParserSyntaxError as exc:
            raise NotApplicable(f"line {exc.raw_line}: the file does not parse: {exc.message}") from exc
        self.module = self.wrapper.module
        self.positions = _resolve(self.wrapper, PositionProvider)
        self.parents = _resolve(self.wrapper, ParentNodeProvider)

    def line(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def kernels(self) -> dict[str, cst.FunctionDef]:
        """Module-level functions decorated with triton.jit (possibly under autotune/heuristics)."""
        found = {}
        for stmt in self.module.body:
            if isinstance(stmt, cst.FunctionDef) and any("jit" in self.code(d.decorator) for d in stmt.decorators):
                found[stmt.name.value] = stmt
        return found

    def functions(self) -> list[cst.FunctionDef]:
        return [s for s in self.module.body if isinstance(s, cst.FunctionDef)]

    def launches(self, kernel: str | None = None) -> list[Launch]:
        names = set(self.kernels()) if kernel is None else {kernel}
        found = []
        for fn in self.functions():
            if fn.name.value in names:
                continue
            for call in m.findall(fn, m.Call(func=m.Subscript(value=m.Name()))):
                name = call.func.value.value
                if name in names and len(call.func.slice) == 1:
                    kw = {a.keyword.value: a for a in call.args if a.keyword is not None}
                    found.append(Launch(name, call, call.func.slice[0].slice.value, fn, self.line(call), kw))
        return found

    def assignments(self, fn: cst.FunctionDef, name: str) -> list[tuple[cst.CSTNode, cst.BaseExpression]]:
        """(statement, value) for each `name = value` (or `a, name = x, y`) anywhere in fn."""
        out = []
        for assign in m.findall(fn, m.Assign()):
            for target in assign.targets:
                t = target.target
                if isinstance(t, cst.Name) and t.value == name:
                    out.append((assign, assign.value))
                elif isinstance(t, (cst.Tuple, cst.List)) and isinstance(assign.value, (cst.Tuple, cst.List)):
                    for el, val in zip(t.elements, assign.value.elements):
                        if isinstance(el.value, cst.Name) and el.value.value == name:
                            out.append((assign, val.value))
        return out

    def knob(self, launch: Launch, name: str) -> Knob:
        """Where launch keyword `name` gets its value, and whether a literal sets it."""
        arg = launch.kwargs.get(name)
        if arg is None:
            return Knob(name, None, None, f"line {launch.line}: not passed", absent=True)
        value = arg.value
        if isinstance(value, cst.Integer):
            return Knob(name, int(value.value, 0), value, f"line {self.line(value)}: {name}={value.value}")
        if isinstance(value, cst.Name):
            bound = self.assignments(launch.function, value.value)
            if len(bound) == 1 and isinstance(bound[0][1], cst.Integer):
                lit = bound[0][1]
                return Knob(name, int(lit.value, 0), lit, f"line {self.line(lit)}: {value.value} = {lit.value}")
            if bound:
                stmt, expr = bound[-1]
                return Knob(name, None, value, f"line {self.line(stmt)}: {value.value} = {self.code(expr)} (computed)")
        return Knob(name, None, value, f"line {self.line(value)}: {name}={self.code(value)} (computed)")

    def rewrite(self, replacements: dict[int, object]) -> str:
        """The file with each node whose id() is a key replaced (by a node, or by f(updated node));
        everything else byte for byte."""
        return self.module.visit(_Replace(replacements)).code


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, object]):
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        new = self.replacements.get(id(original_node), updated_node)
        return new(updated_node) if callable(new) else new


def _is_constexpr(param: cst.Param) -> bool:
    return param.annotation is not None and "constexpr" in names_in(param.annotation.annotation)


def constexpr_params(fn: cst.FunctionDef) -> list[str]:
    return [p.name.value for p in fn.params.params if _is_constexpr(p)]


def runtime_params(fn: cst.FunctionDef) -> list[str]:
    return [p.name.value for p in fn.params.params if not _is_constexpr(p)]


def has_call(node: cst.CSTNode, attr: str) -> bool:
    """Does node contain a call to tl.<attr> (or any .<attr>)?"""
    return bool(m.findall(node, m.Call(func=m.Attribute(attr=m.Name(attr)))))


def calls(node: cst.CSTNode, attr: str) -> list[cst.Call]:
    return list(m.findall(node, m.Call(func=m.Attribute(attr=m.Name(attr)))))


def names_in(node: cst.CSTNode) -> set[str]:
    found = {n.value for n in m.findall(node, m.Name())}
    return found | {node.value} if isinstance(node, cst.Name) else found


def expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)
