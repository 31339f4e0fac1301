"""Static integrity check of a candidate file, run before any of it executes: the work must be done by the
candidate's own Triton kernels, and nothing may reach what the candidate is judged by.

It follows KernelBench's static checker and published reward hacks on kernel benchmarks (a torch fallback
or a call to the reference beside a token kernel, try/except fallbacks, output caching, monkeypatching the
checker or torch, reading the expected outputs, hiding calls behind exec/getattr). Code outside
`@triton.jit` bodies may allocate, view, query shapes/strides/dtypes and launch kernels; it may not compute.
The task's protected functions (reference, make_inputs, Model, ...) are the task's own and are skipped for
the compute rules, but no other code may name them. Every list below is data; the rules read only these.
A rejection is a `Violation`: a short code and one line naming file:line.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from kopt.harness.guard import PROTECTED

# --- the lists ------------------------------------------------------------------------------------

ALLOWED_IMPORTS = {"torch", "torch.nn", "torch.nn.functional", "triton", "triton.language", "math", "typing",
                   "functools", "dataclasses", "__future__", "triton.tools.tensor_descriptor"}
ALLOWED_IMPORT_PREFIXES = ("triton.language.",)  # libdevice and friends: device code only
LIBRARY_ALLOWED = {"functools.partial", "functools.wraps"}  # what of functools code may use (not reduce, caches)
# torch paths code outside a kernel may use: allocation, dtypes, devices, shape/type queries, module plumbing
TORCH_ALLOWED = {
    "torch.empty", "torch.empty_like", "torch.empty_strided", "torch.zeros", "torch.zeros_like", "torch.ones",
    "torch.ones_like", "torch.full", "torch.full_like", "torch.arange", "torch.tensor",
    "torch.float16", "torch.float32", "torch.float64", "torch.bfloat16", "torch.half", "torch.float",
    "torch.double", "torch.int8", "torch.int16", "torch.int32", "torch.int64", "torch.uint8", "torch.bool",
    "torch.int", "torch.long", "torch.short", "torch.float8_e4m3fn", "torch.float8_e5m2", "torch.complex64",
    "torch.dtype", "torch.device", "torch.Size", "torch.Tensor", "torch.finfo", "torch.iinfo", "torch.is_tensor",
    "torch.is_floating_point", "torch.Generator", "torch.no_grad", "torch.inference_mode", "torch.get_default_dtype",
    "torch.promote_types", "torch.result_type", "torch.broadcast_shapes",
    "torch.cuda.synchronize", "torch.cuda.current_device", "torch.cuda.get_device_properties",
    "torch.cuda.get_device_capability", "torch.cuda.is_available", "torch.cuda.current_stream",
    "torch.cuda.device_count", "torch.cuda.device",
    "torch.nn.Module", "torch.nn.Parameter",
}
TORCH_INIT_ONLY = ("torch.nn.",)  # layers as weight holders, in a ModelNew's __init__ (KernelBench loads Model's)
TRITON_DENIED = ("triton.knobs", "triton.compiler", "triton._C", "triton.runtime.interpreter", "triton.runtime.jit",
                 "triton.testing", "triton.tools", "triton.backends")
TRITON_PUBLIC = ("triton.tools.tensor_descriptor",)  # of those, launch plumbing a candidate may use (TMA descriptors)
DENIED_NAMES = {"exec", "eval", "compile", "open", "__import__", "globals", "locals", "vars", "setattr", "getattr",
                "delattr", "breakpoint", "input", "exit", "quit", "help", "__builtins__", "memoryview", "SystemExit"}
BUILTIN_MATH = {"sum", "abs", "pow", "divmod", "round", "max", "min", "map"}  # compute when given tensors
GRID_PARAMS = {"meta", "META", "nargs"}  # a launch grid's lambda receives the launch's meta-parameters
ALLOWED_DUNDERS = {"__init__", "__name__", "__doc__"}
# tensor methods that compute (on any receiver: statically we cannot tell a tensor from a list)
COMPUTE_METHODS = {
    "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "std", "var", "norm", "softmax",
    "log_softmax", "exp", "exp2", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
    "sigmoid", "relu", "gelu", "silu", "abs", "neg", "reciprocal", "pow", "add", "add_", "sub", "sub_", "mul",
    "mul_", "div", "div_", "true_divide", "floor_divide", "remainder", "fmod", "matmul", "mm", "bmm", "addmm",
    "addmv", "baddbmm", "mv", "dot", "outer", "einsum", "cumsum", "cumprod", "cummax", "sort", "argsort", "topk",
    "kthvalue", "median", "logsumexp", "clamp", "clamp_", "clip", "maximum", "minimum", "where", "masked_fill",
    "masked_fill_", "lerp", "sign", "floor", "ceil", "round", "trunc", "square", "erf", "any", "all", "eq", "ne",
    "lt", "le", "gt", "ge", "equal", "allclose", "isclose", "scatter", "scatter_", "scatter_add", "scatter_add_",
    "index_add", "index_add_", "gather", "index_select", "take", "bincount", "histc", "unique", "nonzero",
    "masked_select", "numpy", "tolist", "cpu", "apply_", "map_", "addcmul", "addcdiv", "square_", "exp_", "sqrt_",
    "relu_", "sigmoid_", "tanh_", "neg_", "abs_", "pow_", "fill_diagonal_", "tril", "triu", "flip", "roll",
    "repeat", "repeat_interleave", "cross", "kron", "diag", "trace", "det", "inverse", "conv1d", "conv2d",
    "index_put", "index_put_", "put_", "scatter_reduce", "scatter_reduce_", "index_fill_", "addmm_", "addbmm",
    "clamp_min", "clamp_max", "logical_and", "logical_or", "logical_not", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_not", "float_power", "xlogy", "hypot", "atan2", "rsub", "erfinv", "sinh", "cosh",
    "softplus", "nan_to_num", "nansum", "nanmean", "count_nonzero", "cummin", "logcumsumexp", "tensordot",
    "inner", "vdot", "addr", "matrix_power", "lerp_", "masked_scatter", "masked_scatter_",
}
# methods that return a tensor from a tensor without computing (so the result is a tensor too)
VIEW_METHODS = {"view", "reshape", "contiguous", "t", "transpose", "permute", "expand", "expand_as", "flatten",
                "unsqueeze", "squeeze", "narrow", "select", "unflatten", "as_strided", "to", "float", "half",
                "bfloat16", "double", "int", "long", "clone", "detach", "cuda", "view_as", "reshape_as", "movedim",
                "split", "chunk", "unbind", "new_empty", "new_zeros", "new_ones", "new_full"}
# what code outside a kernel may call on a known tensor: views and casts above, plus queries and copies
TENSOR_METHODS = VIEW_METHODS | {"numel", "size", "stride", "dim", "ndimension", "nelement", "element_size",
                                 "data_ptr", "is_contiguous", "storage_offset", "get_device", "item", "fill_", "zero_",
                                 "copy_", "new_tensor", "type", "is_floating_point", "requires_grad_"}
ITERATING = {"zip", "enumerate", "reversed", "list", "tuple", "iter", "sorted", "filter"}  # pass tensors through
PYTHON_CONSTRUCTORS = {"set", "list", "dict", "tuple", "frozenset", "str"}  # empty ones: Python objects
MUTATING_METHODS = {"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear", "add", "remove",
                    "discard", "__setitem__"}
CACHE_DECORATORS = {"lru_cache", "cache", "cached_property", "memoize"}
TRY_ALLOWED_IN = set(PROTECTED)
PROTECTED_CALLABLES = {"reference", "make_inputs", "Model", "get_inputs", "get_init_inputs", "flops", "bytes_moved"}


@dataclass
class Violation:
    code: str  # protected_call | torch_compute | tensor_op | monkeypatch | introspection | denied_name |
    #            denied_import | try_fallback | output_cache | module_state | torch_in_kernel
    path: str
    line: int
    detail: str

    @property
    def message(self) -> str:
        return f"{self.code}: {self.path}:{self.line}: {self.detail}"


def check_file(path: Path, task: Path | None = None) -> Violation | None:
    """The first violation in the file that its task (`task`, the user's own file) does not have itself, or None.
    The task is the baseline it is judged against: what it does (a third-party import, a torch op in a launcher)
    a candidate may keep; only what the candidate adds is judged. A task checked against itself passes.
    A file that does not parse is left to the loader to report."""
    try:
        source = Path(path).read_text()
        own = Path(task).read_text() if task is not None else ""
    except (OSError, UnicodeDecodeError):
        return None
    if task is not None and Path(task).resolve() == Path(path).resolve():
        return None
    found = [v for v in check_source(source, str(path)) if (v.code, _line_text(source, v.line)) not in _own(own)]
    return found[0] if found else None


def _line_text(source: str, line: int) -> str:
    lines = source.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _own(task_source: str) -> set[tuple[str, str]]:
    """(rule, line text) of every violation in the task's own source."""
    return {(v.code, _line_text(task_source, v.line)) for v in check_source(task_source)} if task_source else set()


def check_source(source: str, path: str = "<candidate>") -> list[Violation]:
    """Every violation in `source`, in line order."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    checker = _Checker(tree, path)
    checker.run()
    return sorted(checker.found, key=lambda v: v.line)


# --- the rules ------------------------------------------------------------------------------------

def _dotted(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


class _Checker:
    def __init__(self, tree: ast.Module, path: str) -> None:
        self.tree, self.path = tree, path
        self.found: list[Violation] = []
        self.aliases: dict[str, str] = {}  # local name -> dotted path it stands for (imports)
        self.modules: set[str] = set()  # names bound by `import` (modules, not functions)
        self.module_names: set[str] = set()  # names bound at module level
        self.functions: dict[str, ast.FunctionDef] = {}
        self.tensor_params: dict[str, set[int]] = {}  # helper name -> positions called with tensors
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                child.parent = parent  # type: ignore[attr-defined]

    def flag(self, node: ast.AST, code: str, detail: str) -> None:
        self.found.append(Violation(code, self.path, getattr(node, "lineno", 1), detail))

    def run(self) -> None:
        self.collect_module()
        for node in ast.walk(self.tree):
            self.check_security(node)
        for _ in range(3):  # which helper parameters receive tensors, to a fixpoint (helpers call helpers)
            for fn in self.code_functions():
                self.tensors_in(fn, record_calls=True)
        for fn in self.code_functions():
            self.check_function(fn)
        self.check_module_level()

    # module facts
    def collect_module(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                    self.modules.add(a.asname or a.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.module_names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    self.module_names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(node.name, node)

    def resolve(self, node: ast.AST) -> str | None:
        """The dotted path an expression names through the imports (torch.nn.functional.softmax), or None."""
        parts = _dotted(node)
        if not parts or parts[0] not in self.aliases:
            return None
        return ".".join([self.aliases[parts[0]], *parts[1:]])

    def context(self, node: ast.AST) -> str:
        """kernel | protected | init (a class's __init__) | code: where a node sits. Protected means inside the
        body of a function of the task's protected code (it never runs in the candidate's process); their
        decorators, defaults and class-level statements run at import and are checked like any code."""
        kind, in_body, child = "code", False, node
        while hasattr(child, "parent"):
            parent = child.parent  # type: ignore[attr-defined]
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if self.is_kernel(parent):
                    return "kernel"
                in_body = in_body or child in parent.body
                if parent.name == "__init__" and kind == "code":
                    kind = "init"
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                    parent.name in PROTECTED and isinstance(getattr(parent, "parent", None), ast.Module) and in_body:
                return "protected"
            child = parent
        return kind

    def is_kernel(self, fn: ast.AST) -> bool:
        for d in getattr(fn, "decorator_list", []):
            path = self.resolve(d.func if isinstance(d, ast.Call) else d) or ""
            if path in ("triton.jit", "triton.autotune", "triton.heuristics"):
                return True
        return False

    def code_functions(self) -> list[ast.FunctionDef]:
        return [n for n in ast.walk(self.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and not self.is_kernel(n) and self.context(n) != "protected" and self.context(n) != "kernel"]

    # rules that hold everywhere (kernels and protected code included)
    def check_security(self, node: ast.AST) -> None:
        where = self.context(node)
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name not in ALLOWED_IMPORTS and not a.name.startswith(ALLOWED_IMPORT_PREFIXES):
                    self.flag(node, "denied_import", f"imports {a.name} (allowed: {', '.join(sorted(ALLOWED_IMPORTS))})")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if (module not in ALLOWED_IMPORTS and not module.startswith(ALLOWED_IMPORT_PREFIXES)) or node.level:
                self.flag(node, "denied_import", f"imports from {'.' * node.level}{module}")
            elif module.startswith(("torch", "triton", "functools")):
                for a in node.names:
                    self.check_torch_path(node, f"{module}.{a.name}", where)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self.flag(node, "module_state", f"`{type(node).__name__.lower()} {', '.join(node.names)}`: state kept across calls")
        elif isinstance(node, ast.Name) and node.id in DENIED_NAMES and where != "protected":
            self.flag(node, "denied_name", f"uses `{node.id}` (dynamic code, attribute or file access)")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr not in ALLOWED_DUNDERS:
            self.flag(node, "introspection", f"touches `{node.attr}`")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name.startswith("__") and node.name not in ALLOWED_DUNDERS:
                self.flag(node, "introspection", f"defines `{node.name}` (overrides Python or torch machinery)")
            for d in node.decorator_list:
                name = (_dotted(d.func if isinstance(d, ast.Call) else d) or [""])[-1]
                if name in CACHE_DECORATORS:
                    self.flag(d, "output_cache", f"`@{name}` on `{node.name}` can replay outputs")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            for t in node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]:
                root = _root_name(t)
                if isinstance(t, (ast.Attribute, ast.Subscript)) and root in self.aliases:
                    self.flag(node, "monkeypatch", f"assigns into `{ast.unparse(t)}`, part of an imported module")
                elif isinstance(t, ast.Attribute) and root in self.module_names and where != "protected":
                    self.flag(node, "monkeypatch", f"assigns to `{ast.unparse(t)}`, an attribute of a module-level object")
        elif isinstance(node, (ast.Try, ast.TryStar)) and where not in ("protected", "kernel"):
            self.flag(node, "try_fallback", "try/except outside a kernel (a fallback when the kernel fails)")
        if isinstance(node, (ast.Name, ast.Attribute)) and where != "protected":
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name in PROTECTED_CALLABLES and isinstance(node.ctx, ast.Load):
                self.flag(node, "protected_call", f"uses `{name}`, which the candidate is judged by")
        if isinstance(node, ast.Attribute) and not (isinstance(node.parent, ast.Attribute)  # type: ignore[attr-defined]
                                                    and _dotted(node.parent) is not None):  # type: ignore[attr-defined]
            path = self.resolve(node)
            if path and where != "protected":
                self.check_torch_path(node, path, where)
        if isinstance(node, ast.Name) and node.id in self.modules and where != "protected" and not (
                isinstance(node.parent, ast.Attribute) and node.parent.value is node):  # type: ignore[attr-defined]
            self.flag(node, "denied_name", f"passes the module `{node.id}` around as a value (hides what it calls)")
        if isinstance(node, ast.Name) and where == "kernel" and (self.aliases.get(node.id) or "").startswith("torch"):
            self.flag(node, "torch_in_kernel", f"uses torch (`{node.id}`) inside a Triton kernel")

    def check_torch_path(self, node: ast.AST, path: str, where: str) -> None:
        if path.startswith("functools.") and path not in LIBRARY_ALLOWED:
            self.flag(node, "output_cache" if "cache" in path else "denied_name", f"uses `{path}`")
        if path.startswith("triton") and path.startswith(TRITON_DENIED) and not path.startswith(TRITON_PUBLIC):
            self.flag(node, "monkeypatch", f"reaches into `{path}` (Triton's runtime, the launch hooks included)")
        if not path.startswith("torch") or where == "kernel":
            return
        if path in TORCH_ALLOWED or (where == "init" and path.startswith(TORCH_INIT_ONLY)):
            return
        self.flag(node, "torch_compute", f"`{path}` outside a Triton kernel: the work must be the candidate's kernels")

    # compute on tensors outside kernels
    def tensors_in(self, fn: ast.FunctionDef, record_calls: bool = False) -> set[str]:
        """Names in `fn` that hold tensors: entry points' parameters, parameters helpers receive tensors in,
        allocations and views of those."""
        args = fn.args.args
        names: set[str] = set()
        entry_like = fn.name in ("entry", "forward")
        defaults = dict(zip([a.arg for a in args][len(args) - len(fn.args.defaults):], fn.args.defaults))
        for i, a in enumerate(args):
            if a.arg in ("self", "cls"):
                continue
            scalar = isinstance(defaults.get(a.arg), ast.Constant) or (
                a.annotation is not None and ast.unparse(a.annotation) in ("int", "float", "bool", "str"))
            if (entry_like and not scalar) or i in self.tensor_params.get(fn.name, set()):
                names.add(a.arg)
        for node in ast.walk(fn):
            if isinstance(node, ast.Lambda):  # a lambda can hide `a + b` on tensors passed to it
                names.update(a.arg for a in node.args.args if a.arg not in GRID_PARAMS)
        for node in ast.walk(fn):  # assignments, in source order (ast.walk is breadth-first: good enough for taint)
            if isinstance(node, ast.Assign) and self.is_tensor(node.value, names):
                for t in node.targets:
                    tainted = [t]
                    if isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple) \
                            and len(t.elts) == len(node.value.elts):  # `a, k = x, K`: only `a` is a tensor
                        tainted = [e for e, v in zip(t.elts, node.value.elts) if self.is_tensor(v, names)]
                    for target in tainted:
                        names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.For, ast.comprehension)) and self.is_tensor(node.iter, names):
                names.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
            elif record_calls and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in self.functions:
                marked = self.tensor_params.setdefault(node.func.id, set())
                marked.update(i for i, a in enumerate(node.args) if self.is_tensor(a, names))
        return names

    def is_tensor(self, node: ast.AST, names: set[str]) -> bool:
        if isinstance(node, ast.Name):
            return node.id in names
        if isinstance(node, ast.Subscript):
            return self.is_tensor(node.value, names)
        if isinstance(node, (ast.Tuple, ast.List)):
            return any(self.is_tensor(e, names) for e in node.elts)
        if isinstance(node, ast.Attribute):
            return node.attr in ("T", "mT", "data", "real", "imag") and self.is_tensor(node.value, names)
        if isinstance(node, ast.BinOp):
            return self.is_tensor(node.left, names) or self.is_tensor(node.right, names)
        if isinstance(node, ast.Call):
            path = self.resolve(node.func)
            if path and path.startswith("torch"):
                return True
            if isinstance(node.func, ast.Attribute) and node.func.attr in VIEW_METHODS | COMPUTE_METHODS:
                return self.is_tensor(node.func.value, names)
            if isinstance(node.func, ast.Name) and (node.func.id in ITERATING or node.func.id in self.functions):
                return any(self.is_tensor(a, names) for a in node.args)
        return False

    @staticmethod
    def python_objects(fn: ast.FunctionDef) -> set[str]:
        """Local names bound only to Python containers or scalars built in `fn` (`seen = set()`, `parts = []`):
        their `.add()` or `.sub()` is Python's, not a tensor method. A name also bound any other way (a parameter,
        a loop target, another assignment) is not one."""
        def plain(value: ast.AST) -> bool:
            return isinstance(value, (ast.List, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp,
                                      ast.Constant, ast.JoinedStr)) or (
                isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id in PYTHON_CONSTRUCTORS and not value.args and not value.keywords)

        built, other = set(), {a.arg for a in fn.args.args}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign):
                target, value = node.targets[0], node.value
                if len(node.targets) == 1 and isinstance(target, ast.Name):
                    pairs = [(target, value)]
                elif len(node.targets) == 1 and isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) \
                        and len(target.elts) == len(value.elts):  # seen, kept = set(), []
                    pairs = list(zip(target.elts, value.elts))
                else:
                    pairs = []
                for t, v in pairs:
                    if isinstance(t, ast.Name):
                        (built if plain(v) else other).add(t.id)
                paired = {id(t) for t, _ in pairs}
                other.update(n.id for t in node.targets for n in ast.walk(t)
                             if isinstance(n, ast.Name) and id(n) not in paired)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and not isinstance(
                    getattr(node, "parent", None), (ast.Assign, ast.Tuple)):
                other.add(node.id)  # loop, with, walrus and augmented-assignment targets
            elif isinstance(node, (ast.For, ast.comprehension, ast.withitem)):
                target = node.optional_vars if isinstance(node, ast.withitem) else node.target
                if target is not None:
                    other.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        return built - other

    def check_function(self, fn: ast.FunctionDef) -> None:
        names = self.tensors_in(fn)
        local = {a.arg for a in fn.args.args} | {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                                                 and isinstance(n.ctx, ast.Store)}
        python_objects = self.python_objects(fn)
        for node in ast.walk(fn):
            if self.context(node) in ("kernel", "protected") or node is fn:
                continue
            if isinstance(node, ast.BinOp) and (isinstance(node.op, ast.MatMult) or self.is_tensor(node.left, names)
                                                or self.is_tensor(node.right, names)):
                self.flag(node, "tensor_op", f"`{ast.unparse(node)[:60]}` computes on tensors outside a Triton kernel")
            elif isinstance(node, ast.AugAssign) and self.is_tensor(node.target, names):
                self.flag(node, "tensor_op", f"`{ast.unparse(node)[:60]}` computes on tensors outside a Triton kernel")
            elif isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not) and \
                    self.is_tensor(node.operand, names):
                self.flag(node, "tensor_op", f"`{ast.unparse(node)[:60]}` computes on tensors outside a Triton kernel")
            elif isinstance(node, ast.Compare) and \
                    any(self.is_tensor(x, names) for x in [node.left, *node.comparators]) and \
                    not all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
                self.flag(node, "tensor_op", f"`{ast.unparse(node)[:60]}` compares tensors outside a Triton kernel")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BUILTIN_MATH \
                    and any(self.is_tensor(a, names) for a in node.args):
                self.flag(node, "tensor_op", f"`{node.func.id}()` on tensors outside a Triton kernel")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                attr, root = node.func.attr, _root_name(node.func.value)
                if self.is_tensor(node.func.value, names) and attr not in TENSOR_METHODS:
                    self.flag(node, "torch_compute", f"`.{attr}()` on a tensor outside a Triton kernel: "
                                                     "only views, casts, copies and queries are allowed there")
                elif attr in COMPUTE_METHODS and not self.is_library_call(node.func) and not (
                        isinstance(node.func.value, ast.Name) and node.func.value.id in python_objects):
                    self.flag(node, "torch_compute",
                              f"`.{attr}()` outside a Triton kernel: the work must be the candidate's kernels")
                elif attr in MUTATING_METHODS and root in self.module_names and root not in local:
                    self.flag(node, "module_state", f"`{ast.unparse(node.func)}` writes module state from a function")
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    root = _root_name(t)
                    if isinstance(t, ast.Subscript) and root in self.module_names and root not in local:
                        self.flag(node, "module_state", f"`{ast.unparse(t)}` writes module state from a function")
                    elif isinstance(t, ast.Attribute) and root == "self" and fn.name != "__init__":
                        self.flag(node, "module_state", f"`{ast.unparse(t)}` keeps state across calls")

    def is_library_call(self, func: ast.Attribute) -> bool:
        """math.floor(...) and the like: a non-torch module's function, not a tensor method."""
        return _root_name(func.value) in self.aliases and not (self.resolve(func) or "").startswith("torch")

    def check_module_level(self) -> None:
        """Module-level statements run at import: no tensor compute there either."""
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
                continue
            for node in ast.walk(stmt):
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                    self.flag(node, "tensor_op", f"`{ast.unparse(node)[:60]}` computes at import")
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                        node.func.attr in COMPUTE_METHODS and not self.is_library_call(node.func):
                    self.flag(node, "torch_compute", f"`.{node.func.attr}()` at import")
