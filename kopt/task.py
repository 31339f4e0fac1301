"""Load a kernel task: a Python file with @triton.jit kernels, `entry`, `reference`, `make_inputs`
and `CASES` (README, "Writing a kernel task"), or a KernelBench-style module (`Model`, `get_inputs`,
`get_init_inputs`, `ModelNew`) through an adapter. Everything downstream sees one `Task`."""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.util
import inspect
import json
import os
import sys
import traceback
from dataclasses import dataclass, field
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator

from kopt.errors import TaskError

MIN_CASES = 5
TASK_PATH_ENV = "KOPT_TASK_PATH"  # more folders a task's sibling imports resolve in (a copy run from elsewhere)

# Defaults by output dtype: (atol, rtol). A task overrides them with TOLERANCES (tf32 dots need ~1e-2).
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "float32": (1e-5, 1e-5),
    "float16": (1e-3, 2e-3),
    "bfloat16": (1e-2, 1.6e-2),
    "float8_e4m3fn": (6e-2, 1.3e-1),
    "float8_e5m2": (1.3e-1, 2.5e-1),
}


@dataclass
class Task:
    path: Path
    name: str
    module: ModuleType
    kernels: dict[str, Any]  # kernel name -> triton JITFunction (InterpretedFunction under TRITON_INTERPRET)
    entry: Callable[..., Any] | None  # None only for a KernelBench module without ModelNew
    reference: Callable[..., Any]
    make_inputs: Callable[[dict, str, int], tuple]
    cases: list[dict]
    held_out: list[dict] = field(default_factory=list)
    small_cases: list[dict] | None = None  # None: the interpreter uses `cases`
    tolerances: dict[str, tuple[float, float]] = field(default_factory=dict)
    flops: Callable[[dict], int] | None = None
    bytes_moved: Callable[[dict], int] | None = None
    kind: str = "triton"  # triton | kernelbench
    dtype_flops: str | None = None  # bf16 | fp16 | fp32 | tf32: which matmul ceiling applies
    kernel_lines: dict[str, int] = field(default_factory=dict)  # kernel name -> line of its `def`
    mutated: list[int] = field(default_factory=list)  # MUTATED: positions of inputs compared after the call

    def tolerance(self, dtype_name: str) -> tuple[float, float]:
        """(atol, rtol) for an output of this dtype; integers and bools compare exactly."""
        if dtype_name in self.tolerances:
            return tuple(self.tolerances[dtype_name])
        return DEFAULT_TOLERANCES.get(dtype_name, (0.0, 0.0))

    def interpreter_cases(self) -> list[dict]:
        return self.small_cases if self.small_cases is not None else self.cases


def unwrap_kernel(obj: Any) -> Any:
    """The JITFunction under Autotuner/Heuristics wrappers."""
    from triton.runtime.autotuner import Autotuner, Heuristics

    while isinstance(obj, (Autotuner, Heuristics)):
        obj = obj.fn
    return obj


def _is_kernel(obj: Any) -> bool:
    from triton.runtime.jit import KernelInterface

    return isinstance(obj, KernelInterface)


def kernel_location(jit_fn: Any) -> tuple[str, int]:
    """(file, line of the `def`) of a kernel, the place its IR `loc`s point to."""
    fn = jit_fn.fn
    lines, first = inspect.getsourcelines(fn)
    for offset, text in enumerate(lines):
        if text.lstrip().startswith("def "):
            return inspect.getsourcefile(fn) or "", first + offset
    return inspect.getsourcefile(fn) or "", first


def import_dirs(path: Path) -> list[str]:
    """Where a task's own imports resolve first: its folder, then KOPT_TASK_PATH's (the task's folder when a
    copy of it runs from elsewhere, e.g. the optimizer's work folder)."""
    extra = [d for d in os.environ.get(TASK_PATH_ENV, "").split(os.pathsep) if d]
    return list(dict.fromkeys([str(path.parent), *extra]))


def task_workspace(path: str | Path) -> Path:
    """The workspace a task belongs to, where its .kopt/ goes: the nearest folder up from the task's own that
    holds a kopt.toml or is a repository root (.git), never the home folder (its .kopt/ is kopt's index);
    else the task's own folder. A stray .kopt/ higher up (a run started in /tmp) is no workspace."""
    folder = Path(path).resolve().parent
    home = Path.home().resolve()
    for candidate in [folder, *folder.parents]:
        if candidate == home:
            break
        if (candidate / "kopt.toml").is_file() or (candidate / ".git").exists():
            return candidate
    return folder


@contextlib.contextmanager
def task_import_path(task_path: str | Path) -> Iterator[None]:
    """KOPT_TASK_PATH holds the task's folder while the block runs (for this process and its children)."""
    saved = os.environ.get(TASK_PATH_ENV)
    os.environ[TASK_PATH_ENV] = os.pathsep.join(filter(None, [str(Path(task_path).resolve().parent), saved]))
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(TASK_PATH_ENV, None)
        else:
            os.environ[TASK_PATH_ENV] = saved


def _import_file(path: Path) -> ModuleType:
    for folder in reversed(import_dirs(path)):  # sibling modules and packages of the task import as they are
        if folder not in sys.path:
            sys.path.insert(0, folder)
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    module_name = f"kopt_task_{path.stem}_{digest}"
    source = read_source(path)
    try:
        compile(source, str(path), "exec")
    except SyntaxError as exc:
        raise TaskError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from exc
    # an explicit loader: a task saved without the .py suffix still imports
    spec = importlib.util.spec_from_file_location(module_name, path, loader=SourceFileLoader(module_name, str(path)))
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # triton and inspect look kernels' modules up by name
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        line = _line_in(path, exc)
        raise TaskError(f"{path}:{line}: importing the task failed: {type(exc).__name__}: {exc}") from exc
    return module


def read_source(path: Path) -> str:
    """The file's text, or a TaskError saying why it is not a Python source file (empty, binary, not UTF-8)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TaskError(f"{path}: cannot read task file: {exc.strerror}") from exc
    if not data.strip():
        raise TaskError(f"{path}: the file is empty (a task defines entry, reference, make_inputs and CASES)")
    if b"\0" in data:
        raise TaskError(f"{path}: a binary file, not Python source")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise TaskError(f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save the task as UTF-8") from None


def _line_in(path: Path, exc: BaseException) -> int:
    """The deepest traceback line inside `path` (the user's line, not ours or triton's)."""
    line = 1
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename) == path:
            line = frame.lineno or line
    return line


def _assignment_line(path: Path, name: str) -> int:
    for node in ast.parse(read_source(path)).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return node.lineno
    return 1


def _cases(path: Path, module: ModuleType, name: str, minimum: int) -> list | None:
    """A list of cases, each a dict of sizes or any other JSON value (a tuple of sizes, a name); tuples come
    back as lists, the way a case travels to the sandboxed children. Fewer than `minimum` distinct cases need
    FEW_CASES, a string saying why the kernel has no more shapes."""
    if not hasattr(module, name):
        return None
    value = getattr(module, name)
    where = f"{path}:{_assignment_line(path, name)}"
    if not isinstance(value, (list, tuple)):
        raise TaskError(f"{where}: {name} must be a list of cases (one per shape), got {type(value).__name__}")
    cases = []
    for i, case in enumerate(value):
        try:
            cases.append(json.loads(json.dumps(case, allow_nan=False)))
        except (TypeError, ValueError):
            raise TaskError(f"{where}: {name} must be a list of cases (dicts of sizes, or tuples, numbers, strings); "
                            f"entry {i} is {type(case).__name__} {str(case)[:40]}") from None
    distinct = len({json.dumps(c, sort_keys=True) for c in cases})
    few = getattr(module, "FEW_CASES", None)
    if distinct < minimum and not (isinstance(few, str) and few.strip()):
        dupes = " distinct" if distinct < len(cases) else ""
        raise TaskError(f"{where}: {name} has {distinct}{dupes} entries; at least {minimum} are needed (odd sizes "
                        f"included), or set FEW_CASES = \"why the kernel has no more shapes\"")
    return cases


def _mutated(path: Path, module: ModuleType, entry: Callable[..., Any]) -> list[int]:
    """MUTATED: the inputs the entry writes in place, by entry parameter name or position; compared after the
    call, after what the entry returns."""
    value = getattr(module, "MUTATED", None)
    if value is None:
        return []
    where = f"{path}:{_assignment_line(path, 'MUTATED')}"
    params = list(inspect.signature(entry).parameters)
    if not isinstance(value, (list, tuple)) or not value:
        raise TaskError(f"{where}: MUTATED must be a list of entry parameter names (or positions), e.g. [\"out\"]")
    out = []
    for item in value:
        if isinstance(item, str) and item in params:
            out.append(params.index(item))
        elif isinstance(item, int) and not isinstance(item, bool) and item >= 0:
            out.append(item)
        else:
            raise TaskError(f"{where}: MUTATED names {item!r}, not a parameter of entry ({', '.join(params)})")
    return out


def _tolerances(path: Path, module: ModuleType) -> dict[str, tuple[float, float]]:
    """TOLERANCES: {dtype name: (atol, rtol)}, both non-negative numbers; anything else names its line."""
    value = getattr(module, "TOLERANCES", None)
    if value is None:
        return {}
    where = f"{path}:{_assignment_line(path, 'TOLERANCES')}"
    shape = 'a dict of dtype name -> (atol, rtol), e.g. {"float16": (1e-3, 2e-3)}'
    if not isinstance(value, dict):
        raise TaskError(f"{where}: TOLERANCES must be {shape}; got {type(value).__name__}")
    out = {}
    for dtype, pair in value.items():
        ok = (isinstance(dtype, str) and isinstance(pair, (list, tuple)) and len(pair) == 2
              and all(isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 for x in pair))
        if not ok:
            raise TaskError(f"{where}: TOLERANCES must be {shape}; {dtype!r}: {str(pair)[:40]} is not")
        out[dtype] = (float(pair[0]), float(pair[1]))
    return out


def _optional_callable(path: Path, module: ModuleType, name: str) -> Callable[..., Any] | None:
    value = getattr(module, name, None)
    if value is not None and not callable(value):
        raise TaskError(f"{path}:{_assignment_line(path, name)}: {name} must be a function of the case dict, "
                        f"got {type(value).__name__}")
    return value


def _find_kernels(module: ModuleType) -> tuple[dict[str, Any], dict[str, int]]:
    kernels, lines = {}, {}
    for attr, obj in vars(module).items():
        if attr.startswith("__") or not _is_kernel(obj):
            continue
        jit_fn = unwrap_kernel(obj)
        name = jit_fn.fn.__name__
        kernels[name] = jit_fn
        lines[name] = kernel_location(jit_fn)[1]
    return kernels, lines


def _require(path: Path, module: ModuleType, names: list[str]) -> None:
    missing = [n for n in names if not callable(getattr(module, n, None))]
    if missing:
        raise TaskError(f"{path}: missing {', '.join(missing)} (a task needs entry, reference, make_inputs and CASES)")


def require_file(path: Path, what: str) -> None:
    """A directory and a missing path are different mistakes; say which."""
    if path.is_dir():
        raise TaskError(f"{path}: is a directory, not a {what}")
    if not path.is_file():
        raise TaskError(f"{path}: no such {what}")


def load_task(path: str | Path) -> Task:
    """Import a task file and check its interface; raises TaskError naming file:line and cause."""
    path = Path(path).resolve()
    require_file(path, "task file")
    module = _import_file(path)
    if hasattr(module, "Model") and hasattr(module, "get_inputs"):
        return _kernelbench_task(path, module)
    _require(path, module, ["entry", "reference", "make_inputs"])
    cases = _cases(path, module, "CASES", MIN_CASES)
    if cases is None:
        raise TaskError(f"{path}: missing CASES (a list of at least {MIN_CASES} shapes)")
    kernels, lines = _find_kernels(module)
    if not kernels:
        raise TaskError(f"{path}: no @triton.jit kernel at module level")
    return Task(
        path=path, name=path.stem, module=module, kernels=kernels, kernel_lines=lines,
        entry=module.entry, reference=module.reference, make_inputs=module.make_inputs, cases=cases,
        held_out=_cases(path, module, "HELD_OUT", 0) or [],
        small_cases=_cases(path, module, "SMALL_CASES", 1),
        tolerances=_tolerances(path, module),
        flops=_optional_callable(path, module, "flops"), bytes_moved=_optional_callable(path, module, "bytes_moved"),
        dtype_flops=getattr(module, "DTYPE_FLOPS", None), mutated=_mutated(path, module, module.entry),
    )


def load_candidate(path: str | Path, task: Task) -> Task:
    """A candidate file: a task file whose entry replaces the task's; reference, inputs and cases stay the task's.
    A KernelBench candidate may hold only ModelNew (and its kernels); it gets the task's Model weights."""
    path = Path(path).resolve()
    require_file(path, "candidate file")
    module = _import_file(path)
    kernels, lines = _find_kernels(module)
    if hasattr(module, "ModelNew") and not callable(getattr(module, "entry", None)):
        if task.kind != "kernelbench":
            raise TaskError(f"{path}: has ModelNew but the task {task.path.name} is not a KernelBench module")
        entry = _kernelbench_entry(task.module, module.ModelNew)
    elif callable(getattr(module, "entry", None)):
        entry = module.entry
    else:
        raise TaskError(f"{path}: missing entry (a candidate is a task file with the same interface)")
    return Task(
        path=path, name=path.stem, module=module, kernels=kernels, kernel_lines=lines, entry=entry,
        reference=task.reference, make_inputs=task.make_inputs, cases=task.cases, held_out=task.held_out,
        small_cases=task.small_cases, tolerances=task.tolerances, flops=task.flops,
        bytes_moved=task.bytes_moved, kind=task.kind, dtype_flops=task.dtype_flops, mutated=task.mutated,
    )


# --- KernelBench adapter -------------------------------------------------------------------------

def _kernelbench_models(module: ModuleType) -> Callable[[Any], Any]:
    """Model(*get_init_inputs()) built once per device with a fixed seed, so reference and candidate share weights."""
    import torch

    built: dict[str, Any] = {}

    def model_on(device: Any) -> Any:
        key = str(device)
        if key not in built:
            torch.manual_seed(0)
            built[key] = module.Model(*module.get_init_inputs()).to(device).eval()
        return built[key]

    return model_on


def _kernelbench_entry(task_module: ModuleType, model_new_cls: type) -> Callable[..., Any]:
    import torch

    model_on = task_module.__dict__.setdefault("_kopt_model_on", _kernelbench_models(task_module))
    built: dict[str, Any] = {}

    def entry(*inputs: Any) -> Any:
        device = inputs[0].device if inputs and hasattr(inputs[0], "device") else "cpu"
        key = str(device)
        if key not in built:
            torch.manual_seed(0)
            candidate = model_new_cls(*task_module.get_init_inputs()).to(device).eval()
            candidate.load_state_dict(model_on(device).state_dict())
            built[key] = candidate
        with torch.no_grad():
            return built[key](*inputs)

    return entry


def _kernelbench_task(path: Path, module: ModuleType) -> Task:
    import torch

    for name in ("get_init_inputs",):
        if not callable(getattr(module, name, None)):
            raise TaskError(f"{path}: KernelBench module without {name}()")
    model_on = module.__dict__.setdefault("_kopt_model_on", _kernelbench_models(module))

    def reference(*inputs: Any) -> Any:
        device = inputs[0].device if inputs and hasattr(inputs[0], "device") else "cpu"
        with torch.no_grad():
            return model_on(device)(*inputs)

    def make_inputs(case: dict, device: str, seed: int) -> tuple:
        torch.manual_seed(seed)
        return tuple(x.to(device) if isinstance(x, torch.Tensor) else x for x in module.get_inputs())

    kernels, lines = _find_kernels(module)
    entry = _kernelbench_entry(module, module.ModelNew) if hasattr(module, "ModelNew") else None
    return Task(
        path=path, name=path.stem, module=module, kernels=kernels, kernel_lines=lines, entry=entry,
        reference=reference, make_inputs=make_inputs, cases=[{"inputs": "get_inputs()"}], kind="kernelbench",
        tolerances=_tolerances(path, module),
    )
