"""AOT-compile a task's kernels for a target GPU without one.

The task's `entry` runs on CPU tensors with every kernel launch intercepted: Triton's own binder
(create_function_from_signature + native_specialize_impl, as in triton/runtime/jit.py) turns the
actual arguments into the signature, constexprs and specialization the JIT would pick; then
triton.compile lowers each distinct launch to ttir/ttgir/llir/ptx/cubin, and the wheel's
cuobjdump and ptxas give SASS and resource usage. Results are cached on disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from kopt.errors import CompileError, KoptError
from kopt.harness.compiled import STAGES, CompiledKernel
from kopt.task import Task, kernel_location

CACHE_VERSION = "1"


@dataclass
class Launch:
    """One intercepted kernel launch: what the JIT would have compiled, and the grid."""

    fn: Any  # JITFunction
    signature: dict[str, Any]
    constexprs: dict[tuple, Any]  # path -> value, as _pack_args gives them
    attrs: dict[tuple, list]  # path -> [["tt.divisibility", 16]], ...
    options: dict[str, Any]  # the backend's parsed options
    grid: tuple[int, ...]
    autotune: str | None = None  # for an autotuned kernel: which config this is, and how it was chosen


# Compute capabilities the bundled LLVM and ptxas accept; any other number fails deep inside them, noisily.
KNOWN_SM = (50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 120, 121)


def gpu_target(target: str | None):
    """'sm_90' / 'sm_90a' / '90' -> GPUTarget; None -> the local GPU, else sm_90."""
    from triton.backends.compiler import GPUTarget

    if target is None:
        return GPUTarget("cuda", _local_capability() or 90, 32)
    match = re.fullmatch(r"(?:sm_?)?(\d+)a?", target.strip().lower())
    if not match or int(match.group(1)) not in KNOWN_SM:
        raise KoptError(f"unknown target {target!r}; expected ascend[:ARCH] or one of "
                        + ", ".join(f"sm_{cc}" for cc in KNOWN_SM))
    return GPUTarget("cuda", int(match.group(1)), 32)


def _local_capability() -> int | None:
    try:
        import torch

        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            return major * 10 + minor
    except Exception:
        return None
    return None


def target_name(target) -> str:
    return f"sm_{target.arch}"


def autotuner_pick(tuner, args: tuple, kwargs: dict) -> Any:
    """The config `tuner` picked when these arguments last ran for real (its cache key, as Autotuner.run builds
    it), or None when it never tuned them (no GPU, or not run yet)."""
    if len(tuner.configs) == 1:
        return tuner.configs[0]
    named = {**dict(zip(tuner.arg_names, args)), **kwargs}
    named = {k: v for k, v in named.items() if k in tuner.arg_names}
    key = [named[k] for k in tuner.keys if k in named] + [str(v.dtype) for v in named.values() if hasattr(v, "dtype")]
    return tuner.cache.get(tuple(key))


@contextlib.contextmanager
def intercept_launches(target) -> Iterator[list[Launch]]:
    """Within this block, kernel launches are recorded (with Triton's own specialization) instead of run.
    An autotuned kernel takes the config its autotuner picked when the entry ran on this GPU
    (capture_launches runs it first when there is one); without a GPU, its first config, and says so."""
    from triton import knobs
    from triton.compiler import make_backend
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction, create_function_from_signature

    backend = make_backend(target)
    launches: list[Launch] = []

    def record(self, *args, grid, warmup, **kwargs):
        kwargs["debug"] = kwargs.get("debug", self.debug) or knobs.runtime.debug
        kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
        binder = create_function_from_signature(self.signature, self.params, backend)
        bound_args, specialization, options = binder(*args, **kwargs)
        options, signature, constexprs, attrs = self._pack_args(backend, kwargs, bound_args, specialization, options)
        if callable(grid):
            grid = grid(bound_args)
        launches.append(Launch(self, signature, constexprs, attrs, dict(options.__dict__), tuple(grid), picked[0]))
        picked[0] = None
        return None

    picked: list[str | None] = [None]  # how the autotuned launch being recorded got its config

    def tuned_config(self, *args, **kwargs):
        config = autotuner_pick(self, args, kwargs)
        if config is not None:
            how = "its only config" if len(self.configs) == 1 else f"the autotuner's pick of {len(self.configs)} on this GPU"
        else:
            config = self.configs[0]
            how = (f"the first of {len(self.configs)} configs: the autotuner's pick is unknown without a GPU run "
                   "(the IR below may not be what runs)")
        picked[0] = f"autotuned: {config} ({how})"
        return self.fn.run(*args, **kwargs, **config.all_kwargs())

    saved = JITFunction.run, Autotuner.run
    JITFunction.run, Autotuner.run = record, tuned_config
    try:
        yield launches
    finally:
        JITFunction.run, Autotuner.run = saved


def capture_launches(task: Task, case: dict, target) -> list[Launch]:
    """Run the task's entry on inputs for `case` and return its distinct kernel launches, in order. Without a GPU,
    on fake tensors first (_on_fake_tensors) where FakeTensorMode is loaded already (the compile worker loads it
    at start, diagnosis's launch facts use it): its first use imports torch._dynamo (~1 s), more than a small
    task's real inputs cost. A task that reads tensor data runs on real CPU inputs."""
    if task.entry is None:
        raise KoptError(f"{task.path}: nothing to compile (a KernelBench module needs ModelNew with Triton kernels)")
    fake = not _local_capability() and "torch._dynamo" in sys.modules
    launches = _on_fake_tensors(task, case, target) if fake else None
    if launches is None:
        launches = _on_real_tensors(task, case, target)
    if not launches:
        hint = " (TRITON_INTERPRET=1 is set: unset it to compile)" if os.environ.get("TRITON_INTERPRET") == "1" else ""
        raise KoptError(f"{task.path}: entry launched no Triton kernel for case {case}{hint}")
    distinct: dict[str, Launch] = {}
    for launch in launches:
        distinct.setdefault(_launch_key(launch), launch)
    return list(distinct.values())


def _on_fake_tensors(task: Task, case: dict, target) -> list[Launch] | None:
    """The launches of `entry` under torch's FakeTensorMode (shapes, strides, dtypes and a view's offset, so the
    same specialization; no storage: ~0.02 s where making real inputs takes 0.1-40 s on a CPU), as
    kopt.diagnose.launch_facts captures every case. None unless the entry ran to its end: a task that reads
    tensor data (.item(), data-dependent shapes) stops there and could lose launches after it."""
    with fake_tensors():
        try:
            with intercept_launches(target) as launches:
                task.entry(*task.make_inputs(case, "cpu", 0))
        except Exception:
            return None
    return launches or None


@contextlib.contextmanager
def fake_tensors() -> Iterator[None]:
    """torch's FakeTensorMode for capturing launches: tensors made inside have no storage; Triton's binder reads a
    fake tensor's data_ptr() only for its alignment, so that warning is silenced."""
    import warnings

    from torch._subclasses.fake_tensor import FakeTensorMode

    with warnings.catch_warnings(), FakeTensorMode(allow_non_fake_inputs=True):
        warnings.simplefilter("ignore")
        yield


def _on_real_tensors(task: Task, case: dict, target) -> list[Launch]:
    on_gpu = bool(_local_capability()) and os.environ.get("TRITON_INTERPRET") != "1"
    inputs = task.make_inputs(case, "cuda" if _local_capability() else "cpu", 0)
    if on_gpu and _autotuned(task):  # a real run first, so each autotuner has tuned this case's key
        import torch

        task.entry(*inputs)
        torch.cuda.synchronize()
    with intercept_launches(target) as launches:
        try:
            task.entry(*inputs)
        except Exception as exc:
            if not launches:
                raise KoptError(f"{task.path}: entry failed before launching a kernel: {type(exc).__name__}: {exc}") from exc
            # entry may post-process a kernel's (unwritten) output; the launches are what we need
    return launches


def _autotuned(task: Task) -> bool:
    from triton.runtime.autotuner import Autotuner

    return any(isinstance(obj, Autotuner) or isinstance(getattr(obj, "fn", None), Autotuner)
               for obj in vars(task.module).values())


def _launch_key(launch: Launch) -> str:
    return json.dumps([launch.fn.cache_key, launch.signature, sorted(map(repr, launch.constexprs.items())),
                       sorted(map(repr, launch.attrs.items())), sorted(map(repr, launch.options.items()))])


def _arg_names(launch: Launch) -> list[str]:
    return list(launch.signature.keys())


def _by_name(launch: Launch, paths: dict[tuple, Any]) -> dict[str, Any]:
    names = _arg_names(launch)
    return {".".join([names[p[0]], *map(str, p[1:])]): v for p, v in paths.items()}


def _specialization(launch: Launch) -> dict[str, list[str]]:
    spec: dict[str, list[str]] = {}
    for name, attrs in _by_name(launch, launch.attrs).items():
        for key, value in attrs:
            label = f"divisible_by_{value}" if key == "tt.divisibility" else f"{key}={value}"
            spec.setdefault(name, []).append(label)
    declared = {p.name for p in launch.fn.params if p.is_constexpr}
    for name, value in _by_name(launch, launch.constexprs).items():
        if name not in declared and value == 1:
            spec.setdefault(name, []).append("equal_to_1")  # the JIT turned an int 1 into a constant
    return spec


def _jsonable(value: Any) -> Any:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return repr(value)


def compile_launch(launch: Launch, target, *, trajectory: bool = False, sass: bool = True,
                   cache_dir: Path | None = None) -> CompiledKernel:
    """Lower one launch through every stage (cached by source hash + target + specialization + options).

    Without `sass` the disassembly (cuobjdump: ~0.4 s of CPU a kernel) is left out unless ptxas reports local
    memory: then the SASS's LDL/STL can make a finding (register_spill); otherwise it only counts opcodes."""
    import triton

    key = hashlib.sha256(
        f"{CACHE_VERSION}|{triton.__version__}|{target_name(target)}|{_launch_key(launch)}".encode()).hexdigest()[:32]
    cached = _cache_read(cache_dir, key, trajectory, sass)
    if cached is not None:
        return cached
    source_file, first_line = kernel_location(launch.fn)
    name = launch.fn.fn.__name__
    dump_text = ""
    from triton.compiler import ASTSource

    src = ASTSource(fn=launch.fn, signature=launch.signature, constexprs=launch.constexprs, attrs=launch.attrs)
    try:
        with _trajectory_dump(trajectory) as dump_path, _ptxas_log() as log:
            ck = triton.compile(src, target=target, options=launch.options)
            dump_text = _read_dump(dump_path) if dump_path else ""
    except Exception as exc:
        raise CompileError(_compile_message(exc, name, source_file, first_line)) from exc
    asm = {stage: ck.asm[stage] for stage in ("ttir", "ttgir", "llir", "ptx") if stage in ck.asm}
    usage = _usage(log[0]) if log[0] else _ptxas_usage(asm["ptx"], target, launch.options)
    if sass or usage["local_bytes"] or usage["spill_stores"] or usage["spill_loads"]:
        asm["sass"] = _sass(ck.asm["cubin"])
    kernel = CompiledKernel(
        name=name, source_file=source_file, first_line=first_line, target=target_name(target),
        signature={k: str(v) for k, v in launch.signature.items()},
        constexprs={k: _jsonable(v) for k, v in _by_name(launch, launch.constexprs).items()},
        specialization=_specialization(launch),
        options={k: _jsonable(v) for k, v in launch.options.items()},
        asm=asm, shared_bytes=int(ck.metadata.shared), trajectory=parse_trajectory(dump_text),
        cache_key=key, **usage,
    )
    _cache_write(cache_dir, key, kernel)
    return kernel


def compile_task(task: Task, *, case: int | dict | None = None, target: str | None = None, trajectory: bool = False,
                 stages: list[str] | tuple[str, ...] | None = None, sass: bool = True,
                 cache_dir: Path | None = None) -> list[CompiledKernel]:
    """AOT-compile every kernel `entry` launches for one case (index into CASES, a case dict, or the first).
    `sass` False: SASS only where it can make a finding (compile_launch); so too when `stages` leave it out."""
    target_spec = gpu_target(target)
    if case is None:
        case = task.cases[0]
    elif isinstance(case, int):
        if not 0 <= case < len(task.cases):
            raise KoptError(f"{task.path}: no case {case}; CASES has {len(task.cases)} (0..{len(task.cases) - 1})")
        case = task.cases[case]
    unknown = set(stages or ()) - set(STAGES)
    if unknown:
        raise KoptError(f"unknown stage(s) {', '.join(sorted(unknown))}; known: {', '.join(STAGES)}")
    if cache_dir is None:
        from kopt.config import load_settings

        cache_dir = load_settings().state_dir / "cache" / "compile"
    cache_dir = Path(cache_dir)
    kernels = []
    for launch in capture_launches(task, case, target_spec):
        kernel = compile_launch(launch, target_spec, trajectory=trajectory, cache_dir=cache_dir,
                                sass=sass and (not stages or "sass" in stages))
        kernel.grid = list(launch.grid)  # the case's grid; the compiled code does not depend on it
        kernel.autotune = launch.autotune
        kernels.append(kernel)
    if stages:
        for kernel in kernels:
            kernel.asm = {s: text for s, text in kernel.asm.items() if s in stages}
    return kernels


def compile_sandboxed(task_path: str | Path, candidate_path: str | Path | None = None, *, case: int | None = None,
                      target: str | None = None, trajectory: bool = False, stages: list[str] | None = None,
                      sass: bool = True, timeout_s: float = 300.0) -> list[CompiledKernel]:
    """compile_task for untrusted code (a candidate's module runs at import): in a contained child with a time
    limit, forked by the warm compile worker (kopt.harness.compile_worker) or, without one, started cold.
    Raises CompileError when a kernel does not compile, KoptError for any other failure."""
    from kopt.config import load_settings
    from kopt.harness.compile_worker import compile_outcome
    from kopt.harness.sandbox import run_sandboxed

    kw = {"case": case, "target": target, "trajectory": trajectory, "stages": stages, "sass": sass,
          "cache_dir": str(load_settings().state_dir / "cache" / "compile")}
    outcome = compile_outcome(Path(task_path), Path(candidate_path) if candidate_path else None, timeout_s, kw)  # warm
    if outcome is None:
        outcome = run_sandboxed("compile", task_path, candidate_path, timeout_s=timeout_s, **kw)  # cold
    if not outcome["ok"]:
        if outcome["reason"] == "compile_error":
            raise CompileError(outcome["message"])
        raise KoptError(f"{outcome['reason']}: {outcome['message']}")
    kernels = []
    for data in outcome["result"]:
        data["trajectory"] = [tuple(step) for step in data["trajectory"]]
        kernels.append(CompiledKernel(**data))
    return kernels


# --- pieces ---------------------------------------------------------------------------------------

@contextlib.contextmanager
def _trajectory_dump(enabled: bool) -> Iterator[Path | None]:
    """MLIR's pass-by-pass dump, forcing a real compile so the passes run.

    Triton opens the MLIR_DUMP_PATH stream once per process (a static in python/src/ir.cc), so one
    path serves the whole process: emptied before each compile, read after (the writer keeps its
    offset, so a truncated file comes back with a NUL-filled hole in front, which is stripped).
    The variable is set for the block only: a sandboxed compile started later would inherit a path it
    cannot write."""
    if not enabled:
        yield None
        return
    path = Path(os.environ.get("MLIR_DUMP_PATH") or Path(tempfile.gettempdir()) / f"kopt-mlir-{os.getpid()}.mlir")
    env = {"MLIR_DUMP_PATH": str(path), "MLIR_ENABLE_DUMP": "1", "TRITON_ALWAYS_COMPILE": "1"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    path.touch()
    os.truncate(path, 0)
    try:
        with tempfile.TemporaryDirectory(prefix="kopt-mlir-") as tmp, _stderr_to(Path(tmp) / "stderr.txt"):
            yield path  # the pipeliner's internal dumps go to stderr, dropped above
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _read_dump(path: Path) -> str:
    text = path.read_text(errors="replace").lstrip("\0")
    os.truncate(path, 0)
    return text


@contextlib.contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """Redirect file descriptor 2 (C++ writes there, below Python's sys.stderr)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "w") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


_DUMP_HEADER = re.compile(r"^// -----// IR Dump Before (\S+)(.*?)//----- //\s*$", re.M)


def parse_trajectory(text: str) -> list[tuple[str, str]]:
    """`// -----// IR Dump Before <Pass> (...) //----- //` blocks -> [(pass name, IR before it)], in order."""
    headers = list(_DUMP_HEADER.finditer(text))
    out = []
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        out.append((header.group(1), text[header.end():end].strip("\n")))
    return out


def _sass(cubin: bytes) -> str:
    from triton.tools.disasm import get_sass

    try:
        return get_sass(cubin)
    except (OSError, subprocess.CalledProcessError) as exc:
        return f"// SASS unavailable: {exc}"


_USED = re.compile(r"Used (\d+) registers")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


@contextlib.contextmanager
def _ptxas_log() -> Iterator[list[str]]:
    """Triton's own `ptxas -v` log, which it prints when asked (the last thing it prints), into the list: registers
    and spills without a second ptxas run (0.02-0.2 s a kernel). An empty log when Triton's cache answered. What
    else the compile prints (a kernel's tl.static_print, a failure's report) still reaches stdout."""
    from triton import knobs

    printed = io.StringIO()
    log: list[str] = []
    try:
        with knobs.nvidia.scope(), contextlib.redirect_stdout(printed):
            knobs.nvidia.dump_ptxas_log = True
            yield log
    except BaseException:
        sys.stdout.write(printed.getvalue())
        raise
    text = printed.getvalue()
    start = re.search(r"^ptxas ", text, re.M)
    cut = start.start() if start else len(text)
    sys.stdout.write(text[:cut])
    log.append(text[cut:].strip())


def _ptxas_usage(ptx: str, target, options: dict) -> dict[str, Any]:
    """Registers, spills and stack from `ptxas -v` on the PTX, as Triton invokes it (when Triton's cache answered)."""
    from triton.backends.nvidia.compiler import get_ptxas, sm_arch_from_capability

    with tempfile.TemporaryDirectory(prefix="kopt-ptxas-") as tmp:
        ptx_path = Path(tmp) / "k.ptx"
        ptx_path.write_text(ptx)
        fmad = [] if options.get("enable_fp_fusion", True) else ["--fmad=false"]
        cmd = [get_ptxas(target.arch).path, "-lineinfo", "-v", *fmad, f"--gpu-name={sm_arch_from_capability(target.arch)}",
               str(ptx_path), "-o", str(Path(tmp) / "k.cubin")]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    return _usage((proc.stdout + proc.stderr).strip())


def _usage(log: str) -> dict[str, Any]:
    used, frame = _USED.search(log), _FRAME.search(log)
    return {
        "registers": int(used.group(1)) if used else None,
        "local_bytes": int(frame.group(1)) if frame else 0,
        "spill_stores": int(frame.group(2)) if frame else 0,
        "spill_loads": int(frame.group(3)) if frame else 0,
        "ptxas_log": log,
    }


def _compile_message(exc: Exception, name: str, source_file: str, first_line: int) -> str:
    """One line: kernel file:line and the compiler's own words."""
    line = first_line
    node = getattr(exc, "node", None)
    src = getattr(exc, "src", None)
    if node is not None and getattr(node, "lineno", None):
        # CompilationError line numbers count from the kernel's first source line (its decorator)
        line = first_line + node.lineno - 1 - _decorator_lines(src)
    detail = getattr(exc, "error_message", None) or str(exc)
    detail = " ".join(l.strip() for l in str(detail).strip().splitlines() if l.strip() and not l.startswith(("    ", "\t")))
    return f"{source_file}:{line}: kernel {name} failed to compile: {type(exc).__name__}: {detail[:400]}"


def _decorator_lines(src: str | None) -> int:
    if not src:
        return 0
    for i, text in enumerate(src.splitlines()):
        if text.lstrip().startswith("def "):
            return i
    return 0


def _cache_read(cache_dir: Path | None, key: str, need_trajectory: bool, need_sass: bool) -> CompiledKernel | None:
    if cache_dir is None:
        return None
    path = cache_dir / f"{key}.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    data["trajectory"] = [tuple(step) for step in data.get("trajectory", [])]
    if need_trajectory and not data["trajectory"] or need_sass and "sass" not in data.get("asm", {}):
        return None
    try:
        return CompiledKernel(**data)
    except TypeError:
        return None  # written by another version of CompiledKernel


def _cache_write(cache_dir: Path | None, key: str, kernel: CompiledKernel) -> None:
    """Atomic: a reader never sees half a file. What an entry of this key holds and `kernel` lacks (a trajectory,
    the SASS) is kept: the same key is the same compile."""
    if cache_dir is None:
        return
    path = cache_dir / f"{key}.json"
    data = kernel.to_dict()
    existing = _cache_read(cache_dir, key, False, False)
    if existing is not None:
        data["trajectory"] = data["trajectory"] or existing.trajectory
        data["asm"] = {**existing.asm, **data["asm"]}
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)
