"""Compile a task's kernels for an Ascend NPU through the triton-ascend toolchain, in a child process.

triton-ascend is a different `triton`, so it runs in its own venv (kopt/toolchain.py); the child
(kopt/harness/ascend_worker.py) captures the launches, compiles each kernel and reports its IR stages.
Without CANN the binary step fails by design; the TTIR and ttadapter stages made before it are kept.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

from kopt.errors import CompileError, KoptError
from kopt.harness.compiled import CompiledKernel
from kopt.toolchain import parse_target, toolchain_python

WORKER = Path(__file__).with_name("ascend_worker.py")
ASCEND_STAGES = ("ttir", "ttadapter")  # always; later stages only with CANN (ASCEND_HOME_PATH)


def npu_missing() -> str | None:
    """What keeps kernels from running on an Ascend NPU here (one line), or None when all is present:
    the device nodes, CANN (ASCEND_HOME_PATH) and torch_npu in the ascend toolchain."""
    missing = []
    if not list(Path("/dev").glob("davinci[0-9]*")):
        missing.append("no Ascend NPU visible (/dev/davinci* absent)")
    if not os.environ.get("ASCEND_HOME_PATH"):
        missing.append("CANN not set up (ASCEND_HOME_PATH unset; source CANN's set_env.sh)")
    from kopt.toolchain import toolchain_home

    if not list(toolchain_home("ascend").glob("lib/python3*/site-packages/torch_npu")):
        missing.append("torch_npu not installed in the ascend toolchain (pip install torch-npu into "
                       f"{toolchain_home('ascend')})")
    return "; ".join(missing) or None


def target_label(arch: str) -> str:
    return f"ascend:{arch}"


def compile_ascend(task_path: str | Path, *, target: str | None = None, case: int | dict | None = None,
                   kernels: list[str] | None = None, trajectory: bool = False, python: str | Path | None = None,
                   timeout_s: float = 300.0) -> list[CompiledKernel]:
    """Every kernel the task's entry launches, lowered for `target` ("ascend[:ARCH]", default Ascend910B3).

    `case`: a CASES index or a case dict; None takes the first SMALL_CASES (else CASES) entry.
    `python`: the toolchain interpreter (default: KOPT_HOME/toolchains/ascend).
    """
    task_path = Path(task_path).resolve()
    if not task_path.is_file():
        raise KoptError(f"{task_path}: no such task file")
    name, arch = parse_target(target or "ascend")
    if name != "ascend":
        raise KoptError(f"compile_ascend got a non-Ascend target {target!r}")
    interpreter = Path(python) if python else toolchain_python("ascend")
    with tempfile.TemporaryDirectory(prefix="kopt-ascend-") as tmp:
        request, result_path = Path(tmp, "request.json"), Path(tmp, "result.json")
        request.write_text(json.dumps({"task_path": str(task_path), "arch": arch, "case": case, "kernels": kernels,
                                       "trajectory": trajectory, "timeout": timeout_s}))
        env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "PYTHONPATH")}
        try:
            proc = subprocess.run([str(interpreter), str(WORKER), str(request), str(result_path)], capture_output=True,
                                  text=True, timeout=timeout_s, env=env, cwd=tmp)
        except subprocess.TimeoutExpired as exc:
            raise CompileError(f"{task_path}: Ascend compile gave no result within {timeout_s:g} s") from exc
        except OSError as exc:
            raise KoptError(f"cannot run the Ascend toolchain {interpreter}: {exc}",
                            hint="run `kopt toolchain doctor ascend`") from exc
        if not result_path.is_file():
            tail = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            raise CompileError(f"{task_path}: the Ascend compile worker died: {tail}")
        result = json.loads(result_path.read_text())
    if "fatal" in result:
        raise CompileError(f"{task_path}: {result['fatal']}")
    records = result["kernels"]
    if not records:
        why = f" (entry failed: {result['entry_error']})" if result.get("entry_error") else ""
        raise CompileError(f"{task_path}: the entry launched no kernel{why}")
    return [_to_compiled(r, arch) for r in records]


def _to_compiled(record: dict, arch: str) -> CompiledKernel:
    """A worker record as the shared CompiledKernel; a failure before ttadapter is a real compile error."""
    if "ttadapter" not in record["asm"]:
        line = record.get("error_line") or record["first_line"]
        raise CompileError(f"{record['source_file']}:{line}: {record['name']} does not compile for "
                           f"{target_label(arch)}: {record['error']}")
    kernel = CompiledKernel(
        name=record["name"], source_file=record["source_file"], first_line=record["first_line"],
        target=target_label(arch), signature=record["signature"], constexprs=record["constexprs"],
        specialization=record["specialization"], options=record["options"], asm=record["asm"],
        trajectory=[tuple(step) for step in record["trajectory"]],
        ptxas_log=record["error"] or "",  # the backend assembler's last words: why later stages are missing
        grid=record["grid"],
    )
    return kernel

