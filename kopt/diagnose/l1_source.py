"""The task file's source as L1 reads it: kernels, their launches, module constants, and the facts about
one kernel's body that several detectors share (KernelScan).

Its own module so the detectors (l1_detectors.py) and launch_facts.py read one model of the source
(ARCHITECTURE.md: the diagnose layer).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Callable

REDUCE_OPS = {"sum", "max", "min", "reduce", "argmax", "argmin", "xor_sum"}
SCAN_OPS = {"cumsum", "cumprod", "associative_scan"}
TRANSPOSE_OPS = {"trans", "permute"}


@dataclass
class KernelDef:
    node: ast.FunctionDef
    autotuned: bool
    params: list[str]
    constexprs: dict[str, list[tuple[Any, int]]]  # param -> (value, line) seen at launches or as default
    launches: list[LaunchSite] = field(default_factory=list)


@dataclass
class LaunchSite:
    node: ast.Call
    grid: ast.AST | None
    kwargs: dict[str, tuple[Any, int]]
    env: dict[str, Any]


def tl_name(node: ast.AST, aliases: set[str]) -> str | None:
    """`tl.arange` -> "arange" (for any alias of triton.language); None otherwise."""
    if isinstance(node, ast.Call):
        node = node.func
    if not isinstance(node, ast.Attribute):
        return None
    base = node.value
    if isinstance(base, ast.Name) and base.id in aliases:
        return node.attr
    if isinstance(base, ast.Attribute) and base.attr == "language" and isinstance(base.value, ast.Name) \
            and base.value.id == "triton":
        return node.attr
    return None


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def expands_dims(node: ast.AST) -> bool:
    """Whether `node` indexes with None anywhere (x[:, None]): it builds a tile of two or more dims."""
    return any(isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Tuple)
               and any(isinstance(e, ast.Constant) and e.value is None for e in n.slice.elts) for n in ast.walk(node))


def const_value(node: ast.AST | None, env: dict[str, Any]) -> Any:
    """The literal value of a constant or a name bound to one; None when not known statically."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Attribute) and node.attr in {"float16", "bfloat16", "float32", "int64", "int32"}:
        return node.attr
    return None


def decorator_names(fn: ast.FunctionDef) -> list[str]:
    out = []
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Attribute):
            out.append(target.attr)
        elif isinstance(target, ast.Name):
            out.append(target.id)
    return out


def assignments_in(body: list[ast.stmt]) -> list[tuple[str, ast.AST]]:
    """(name, value) of every plain or tuple-unpacking assignment, in source order."""
    out: list[tuple[str, ast.AST]] = []
    for stmt in body:
        for node in ast.walk(stmt):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                continue
            target = node.targets[0]
            if isinstance(target, ast.Name):
                out.append((target.id, node.value))
            elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) \
                    and len(target.elts) == len(node.value.elts):
                out.extend((t.id, v) for t, v in zip(target.elts, node.value.elts) if isinstance(t, ast.Name))
    return out


def simple_assignments(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The last value assigned to each name."""
    return dict(assignments_in(body))


def loops_of(fn: ast.FunctionDef) -> list[ast.For | ast.While]:
    return [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))]


def inside_loops(fn: ast.FunctionDef) -> set[int]:
    """ids of every node nested in a loop body of `fn`."""
    inside: set[int] = set()
    for loop in loops_of(fn):
        for stmt in loop.body:
            inside.update(id(n) for n in ast.walk(stmt))
    return inside


class TaskSource:
    """The task file seen as kernels, their launches, and module-level constants."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.aliases = {"tl"}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                self.aliases |= {a.asname for a in node.names if a.name == "triton.language" and a.asname}
            elif isinstance(node, ast.ImportFrom) and node.module == "triton":
                self.aliases |= {a.asname or a.name for a in node.names if a.name == "language"}
        self.constants = {name: value.value for name, value in simple_assignments(
            [s for s in tree.body if isinstance(s, ast.Assign)]).items() if isinstance(value, ast.Constant)}
        self.kernels: dict[str, KernelDef] = {}
        self._launch_ids: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and {"jit", "autotune", "heuristics"} & set(decorator_names(node)):
                self.kernels[node.name] = self._kernel(node)
        for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name not in self.kernels] + [tree]:
            self._collect_launches(fn)

    def _kernel(self, fn: ast.FunctionDef) -> KernelDef:
        args = fn.args.args
        params = [a.arg for a in args]
        constexprs: dict[str, list[tuple[Any, int]]] = {
            a.arg: [] for a in args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}
        defaults = dict(zip(params[len(params) - len(fn.args.defaults):], fn.args.defaults))
        for name, default in defaults.items():
            value = const_value(default, self.constants)
            if name in constexprs and value is not None:
                constexprs[name].append((value, default.lineno))
        return KernelDef(fn, "autotune" in decorator_names(fn), params, constexprs)

    def _collect_launches(self, scope: ast.AST) -> None:
        body = scope.body if isinstance(scope, (ast.FunctionDef, ast.Module)) else []
        stmts = body if isinstance(scope, ast.FunctionDef) else [s for s in body if not isinstance(s, (ast.FunctionDef, ast.ClassDef))]
        assigned = simple_assignments(stmts)
        env = dict(self.constants)
        values: dict[str, list[ast.AST]] = {}
        for name, value in assignments_in(stmts):
            values.setdefault(name, []).append(value)
        for name, vs in values.items():  # a constant only if every branch assigns the same one (`else: n_sm = 4`)
            if all(isinstance(v, ast.Constant) and v.value == vs[0].value for v in vs):
                env[name] = vs[0].value
            else:
                env.pop(name, None)
        for stmt in stmts:
            for node in ast.walk(stmt):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
                        and isinstance(node.func.value, ast.Name) and node.func.value.id in self.kernels):
                    continue
                if id(node) in self._launch_ids:  # a nested function's launch is seen from its parent too
                    continue
                self._launch_ids.add(id(node))
                kernel = self.kernels[node.func.value.id]
                grid = node.func.slice
                if isinstance(grid, ast.Name) and grid.id in assigned:
                    grid = assigned[grid.id]
                kwargs = {kw.arg: (const_value(kw.value, env), kw.value.lineno) for kw in node.keywords if kw.arg}
                for name, arg in zip(kernel.params, node.args):
                    kwargs.setdefault(name, (const_value(arg, env), arg.lineno))
                for name, (value, line) in kwargs.items():
                    if name in kernel.constexprs and value is not None:
                        kernel.constexprs[name].append((value, line))
                kernel.launches.append(LaunchSite(node, grid, kwargs, env))


class KernelScan:
    """Facts about one kernel's body that several detectors share."""

    def __init__(self, module: TaskSource, kernel: KernelDef):
        self.m, self.k, self.fn = module, kernel, kernel.node
        self.calls = [n for n in ast.walk(self.fn) if isinstance(n, ast.Call)]
        self.ops = {tl_name(c, module.aliases) for c in self.calls} - {None}
        self.assignments = assignments_in(self.fn.body)
        self.assigned = dict(self.assignments)
        self.arange_names = self._arange_derived()
        self.linear_names = self._arange_derived(linear=True)
        self.pointer_ids = self._pointer_ids()
        self.in_loop = inside_loops(self.fn)

    def tl_calls(self, *names: str) -> list[ast.Call]:
        return [c for c in self.calls if tl_name(c, self.m.aliases) in names]

    def derived(self, roots: set[str], source: Callable[[ast.AST], bool] | None = None) -> set[str]:
        """`roots` and every name assigned from them, or from an expression `source` accepts, through any chain."""
        names = set(roots)
        changed = True
        while changed:
            changed = False
            for name, value in self.assignments:
                if name not in names and (names_in(value) & names or (source is not None and source(value))):
                    names.add(name)
                    changed = True
        return names

    def _arange_derived(self, linear: bool = False) -> set[str]:
        """Names computed from tl.arange; with `linear`, only through + - * (no % or //, which break contiguity)."""
        derived: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, value in self.assignments:
                if name in derived:
                    continue
                if linear and any(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mod, ast.FloorDiv))
                                  for n in ast.walk(value)):
                    continue
                if any(tl_name(c, self.m.aliases) == "arange" for c in ast.walk(value) if isinstance(c, ast.Call)) \
                        or names_in(value) & derived:
                    derived.add(name)
                    changed = True
        return derived

    def _pointer_ids(self) -> set[int]:
        """ids of the AST nodes that compute a load/store/atomic address, directly or through assignments."""
        roots = [c.args[0] for c in self.calls if c.args and (tl_name(c, self.m.aliases) or "") in
                 {"load", "store"} | {f"atomic_{op}" for op in ("add", "max", "min", "and", "or", "xor", "xchg", "cas")}]
        names = self.upstream(set().union(*(names_in(r) for r in roots), set()))
        nodes = roots + [v for n, v in self.assignments if n in names]
        return {id(x) for node in nodes for x in ast.walk(node)}

    def upstream(self, names: set[str], through_loads: bool = True) -> set[str]:
        """`names` and every name they are computed from, through any chain of assignments; without
        `through_loads`, not through loaded values (a gathered index is data, not part of the address's base)."""
        found: set[str] = set()
        while names - found:
            found |= names
            names = set().union(*(names_in(v) for n, v in self.assignments if n in found
                                  and (through_loads or not any(isinstance(c, ast.Call) and tl_name(c, self.m.aliases)
                                                                == "load" for c in ast.walk(v)))), set())
        return found

    def tile_loads(self, node: ast.AST) -> list[ast.Call]:
        """The tl.load calls under `node` whose address runs over a tl.arange (a tile, not a scalar)."""
        return [c for c in ast.walk(node) if isinstance(c, ast.Call) and tl_name(c, self.m.aliases) == "load"
                and c.args and self.uses_arange(c.args[0])]

    def uses_arange(self, node: ast.AST) -> bool:
        return bool(names_in(node) & self.arange_names) or any(
            isinstance(c, ast.Call) and tl_name(c, self.m.aliases) == "arange" for c in ast.walk(node))

    @property
    def is_2d(self) -> bool:
        return expands_dims(self.fn)

    def kinds(self) -> set[str]:
        kinds = set()
        if "dot" in self.ops:
            kinds.add("dot")
        loop_accumulates = any(isinstance(n, ast.AugAssign) and id(n) in self.in_loop and any(
            tl_name(c, self.m.aliases) == "load" for c in ast.walk(n.value) if isinstance(c, ast.Call))
            for n in ast.walk(self.fn))
        if self.ops & REDUCE_OPS or loop_accumulates:  # `acc += tl.load(...)` in a loop is a reduction too
            kinds.add("reduce")
        if self.ops & SCAN_OPS:
            kinds.add("scan")
        if any(op.startswith("atomic_") for op in self.ops):
            kinds.add("atomic")
        if self.ops & TRANSPOSE_OPS:
            kinds.add("trans")
        return kinds or {"elementwise"}

    def aranges(self) -> list[tuple[int, str | None, int]]:
        """(size, constexpr name or None, line) of each tl.arange whose bounds are known."""
        out = []
        for call in self.tl_calls("arange"):
            if len(call.args) != 2:
                continue
            start = const_value(call.args[0], self.m.constants)
            end_node = call.args[1]
            if isinstance(end_node, ast.Name) and end_node.id in self.k.constexprs:
                values = [v for v, _ in self.k.constexprs[end_node.id] if isinstance(v, int)]
                end = min(values) if values else None
                name = end_node.id
            else:
                end, name = const_value(end_node, self.m.constants), None
            if isinstance(start, int) and isinstance(end, int):
                out.append((end - start, name, call.lineno))
        return out

    def sized(self) -> bool:
        """Whether every tl.arange's bounds are known: a block chosen at run time leaves the tile's size unknown."""
        return len(self.aranges()) == sum(1 for call in self.tl_calls("arange") if len(call.args) == 2)

    def tile_elements(self) -> int | None:
        sizes = {}
        for size, name, line in self.aranges():
            sizes[name or line] = size
        if not sizes:
            return None
        if "dot" in self.ops:
            mn = sorted((s for n, s in sizes.items() if not (isinstance(n, str) and n.upper().endswith("K"))), reverse=True)
            return mn[0] * mn[1] if len(mn) >= 2 else None
        values = sorted(sizes.values(), reverse=True)
        return values[0] * values[1] if self.is_2d and len(values) >= 2 else values[0]
