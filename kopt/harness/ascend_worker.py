"""Compile a task's kernels for an Ascend NPU; runs INSIDE the Ascend toolchain's venv.

triton-ascend installs as the `triton` package, so it cannot live beside NVIDIA Triton: kopt starts this
file with the toolchain's Python. It imports only the standard library and that venv's triton (the task
module itself may import torch). Usage: python ascend_worker.py REQUEST.json RESULT.json

The task's entry runs once on CPU tensors from its first SMALL_CASES (else CASES) entry with every
JITFunction launch intercepted, so each kernel is specialised exactly as the JIT would for that call.
Each kernel then compiles to TTIR and the linalg-level "ttadapter" IR; without CANN the binary step fails
("ASCEND_HOME_PATH is not set"), which is expected: the stages made before it are kept.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

os.environ.setdefault("TRITON_DISABLE_LINE_INFO", "false")  # keep loc(file:line:col) in the adapter's output

import triton  # the Ascend toolchain's triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource, make_backend
from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction

DUMP_HEADER = re.compile(r"^// -----// IR Dump Before (\S+)(?: \(([^)]*)\))? .*//----- //$", re.M)


class _Launch:
    """One intercepted kernel launch, turned into what triton.compile needs."""

    def __init__(self, jit: JITFunction, target: GPUTarget, grid, args: tuple, kwargs: dict):
        backend = make_backend(target)
        if jit.binder is None:
            jit.create_binder(backend)
        bound_args, sig_and_spec, _, _, _ = jit.binder(*args, **kwargs)
        bound_vals = tuple(bound_args.values())
        sigkeys = [jit.params[i].name for i in jit.non_constexpr_indices]
        self.signature = {k: ("*i8" if v == "none" else v) for k, v in zip(sigkeys, sig_and_spec[: len(sigkeys)])}
        self.attrs = backend.get_attrs_descriptor(jit.params, bound_vals)
        constant_params = self.attrs.get_constants()
        self.constants = {
            p.name: v for v, p in zip(bound_vals, jit.params)
            if p.is_constexpr or p.num in constant_params or v is None
        }
        self.options = {k: v for k, v in kwargs.items() if k in backend.parse_options({}).__dict__}
        self.jit = jit
        self.grid = list(grid(dict(bound_args)) if callable(grid) else grid)
        self.specialization = {
            p.name: spec for p, spec in zip(jit.params, _spec_names(self.attrs, len(jit.params))) if spec
        }


def _spec_names(attrs, n: int) -> list[list[str]]:
    """Per-argument specialisations (divisible_by_16, equal_to_1) as the JIT picked them."""
    names: list[list[str]] = [[] for _ in range(n)]
    for key, label in (("tt.divisibility", "divisible_by_16"), ("tt.equal_to", "equal_to_1")):
        for i in attrs.arg_properties.get(key, []):
            if i < n:
                names[i].append(label)
    return names


def _load_module(path: Path):
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(f"kopt_task_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_entry(module, case) -> None:
    """Call the task's entry once on CPU inputs; only the launches matter, not the result.
    `case`: a case dict, an index into CASES, or None for the first SMALL_CASES (else CASES) entry."""
    if hasattr(module, "ModelNew") and hasattr(module, "get_inputs"):
        init = module.get_init_inputs() if hasattr(module, "get_init_inputs") else []
        module.ModelNew(*init)(*module.get_inputs())
        return
    cases = getattr(module, "CASES", None)
    if not cases or not hasattr(module, "make_inputs") or not hasattr(module, "entry"):
        raise RuntimeError("task needs entry, make_inputs and CASES")
    if case is None:
        case = (getattr(module, "SMALL_CASES", None) or cases)[0]
    elif isinstance(case, int):
        if not 0 <= case < len(cases):
            raise RuntimeError(f"no case {case}; CASES has {len(cases)} (0..{len(cases) - 1})")
        case = cases[case]
    inputs = module.make_inputs(case, "cpu", 0)
    if isinstance(inputs, dict):
        module.entry(**inputs)
    elif isinstance(inputs, (list, tuple)):
        module.entry(*inputs)
    else:
        module.entry(inputs)


def capture_launches(module, case, target: GPUTarget) -> tuple[list[_Launch], str | None]:
    """Run the entry with JITFunction.run intercepted; the first launch of each kernel wins.
    Autotuned kernels take their first config: there is nothing to benchmark without an NPU."""
    launches: dict[str, _Launch] = {}
    real_run, real_autotune = JITFunction.run, Autotuner.run

    def intercept(self, *args, grid, warmup, **kwargs):
        if self.__name__ not in launches:
            launches[self.__name__] = _Launch(self, target, grid, args, kwargs)
        return None

    def first_config(self, *args, **kwargs):
        return self.fn.run(*args, **kwargs, **self.configs[0].all_kwargs())

    JITFunction.run, Autotuner.run = intercept, first_config
    error = None
    try:
        _run_entry(module, case)
    except Exception as exc:  # the entry may trip over the un-launched outputs; launches seen so far count
        error = f"{type(exc).__name__}: {exc}"
    finally:
        JITFunction.run, Autotuner.run = real_run, real_autotune
    return list(launches.values()), error


def _first_error_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("///", "[INFO]", "ERROR: Invalid bishengir")) and "encounters error" not in line:
            return line[:400]
    return text.strip()[:400]


def trajectory(adapter_cmd: list[str], ttir: str, timeout: float) -> list[list[str]]:
    """Re-run the adapter's pass pipeline on the TTIR, printing the IR before every pass."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "kernel.ttir.mlir")
        src.write_text(ttir)
        cmd = [adapter_cmd[0], str(src)]
        skip = False
        for arg in adapter_cmd[2:]:
            if skip:
                skip = False
            elif arg == "-o":
                skip = True
            elif arg != "--mlir-print-debuginfo":
                cmd.append(arg)
        cmd += ["--mlir-print-ir-before-all", "--mlir-print-debuginfo", "-o", str(Path(tmp, "out.mlir"))]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    text = proc.stderr
    heads = list(DUMP_HEADER.finditer(text))
    steps = []
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        steps.append([m.group(1), text[m.end():end].strip()])
    return steps


def compile_launch(launch: _Launch, target: GPUTarget, want_trajectory: bool, timeout: float) -> dict:
    adapter_cmds: list[list[str]] = []
    real_subprocess_run = subprocess.run

    def spy(cmd, *args, **kwargs):
        if isinstance(cmd, (list, tuple)) and cmd and str(cmd[0]).endswith("triton-adapter-opt"):
            adapter_cmds.append([str(c) for c in cmd])
        return real_subprocess_run(cmd, *args, **kwargs)

    jit = launch.jit
    source_file = inspect.getsourcefile(jit.fn)
    lines, start = inspect.getsourcelines(jit.fn)
    first_line = start + next(i for i, text in enumerate(lines) if text.lstrip().startswith("def "))  # past decorators
    record = {
        "name": jit.__name__, "source_file": source_file, "first_line": first_line,
        "signature": launch.signature, "constexprs": {k: repr(v) if not isinstance(v, (int, float, bool, str, type(None))) else v
                                                      for k, v in launch.constants.items()},
        "specialization": launch.specialization, "options": launch.options, "asm": {}, "error": None,
        "binary_missing": False, "trajectory": [], "grid": launch.grid,
    }
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TRITON_CACHE_DIR"] = cache
        subprocess.run = spy
        try:
            src = ASTSource(jit, launch.signature, launch.constants, launch.attrs)
            ck = triton.compile(src, target=target, options=dict(launch.options))
            record["asm"] = {k: v if isinstance(v, str) else v.hex() for k, v in ck.asm.items()}
        except Exception as exc:
            message = str(exc)
            record["binary_missing"] = "ASCEND_HOME_PATH is not set" in message
            record["error"] = _first_error_line(message) or type(exc).__name__
            if m := re.match(r"at (\d+):(\d+):", message):  # a frontend error, relative to the `def` line
                record["error_line"] = first_line + int(m.group(1)) - 1
                record["error"] = message.strip().splitlines()[-1][:400]
            if not record["binary_missing"]:
                record["traceback"] = traceback.format_exc()[-2000:]
        finally:
            subprocess.run = real_subprocess_run
        for stage in ("ttir", "ttadapter"):
            if stage not in record["asm"]:
                for path in Path(cache).rglob(f"*.{stage}"):
                    record["asm"][stage] = path.read_text()
    if want_trajectory and adapter_cmds and "ttir" in record["asm"]:
        record["trajectory"] = trajectory(adapter_cmds[0], record["asm"]["ttir"], timeout)
    return record


def main() -> int:
    request = json.loads(Path(sys.argv[1]).read_text())
    result: dict = {"triton_version": triton.__version__, "kernels": [], "entry_error": None}
    target = GPUTarget("npu", request["arch"], 0)
    try:
        module = _load_module(Path(request["task_path"]))
        launches, result["entry_error"] = capture_launches(module, request.get("case"), target)
        wanted = request.get("kernels")
        for launch in launches:
            if not wanted or launch.jit.__name__ in wanted:
                result["kernels"].append(compile_launch(launch, target, request.get("trajectory", False),
                                                        request.get("timeout", 120)))
    except Exception as exc:
        result["fatal"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc()[-3000:]
    Path(sys.argv[2]).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
