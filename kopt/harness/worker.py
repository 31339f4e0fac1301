"""The sandbox's child process: `python -m kopt.harness.worker` reads one JSON request on stdin and runs it.

Validate and bench requests carry `channel_fd`: the child sends data frames there (kopt.harness.channel)
and the parent judges them; the ops are "reference" (loads the task file only: plan and expected outputs),
"candidate" (outputs of the candidate's entry) and "bench" (timings plus a final checked output).
Other requests (compile) write {"ok", "reason", "message", "result"} to the request's result_path.

It picks the device before Triton is imported: CUDA when there is one, else the Triton interpreter
(TRITON_INTERPRET=1, kopt.harness.interpreter) on CPU tensors. Exceptions become a reason and a one-line message that names
the user's file and line."""

from __future__ import annotations

import errno
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any


def _pick_device(requested: str | None) -> str:
    import torch  # torch does not import triton, so TRITON_INTERPRET can still be set below

    device = requested or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu":
        from kopt.harness.interpreter import use_interpreter

        use_interpreter()
    return device


def _user_location(exc: BaseException, files: list[str]) -> str:
    """file:line of the deepest traceback frame in the task or candidate file."""
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename in files:
            where = f"{frame.filename}:{frame.lineno}"
    return where


def classify(exc: BaseException) -> str:
    """Map an exception from user code to a sandbox reason."""
    import torch

    from kopt.errors import CompileError

    name = type(exc).__name__
    text = str(exc)
    if isinstance(exc, (CompileError,)) or name in ("CompilationError", "PTXASError") or "PassManager::run failed" in text:
        return "compile_error"
    if isinstance(exc, (MemoryError, torch.OutOfMemoryError)) or "out of memory" in text.lower():
        return "oom"
    if name == "AcceleratorError" or "CUDA error" in text or "illegal memory access" in text or "cudaError" in text:
        return "cuda_error"
    return "exception"


def _one_line(exc: BaseException, files: list[str]) -> str:
    from kopt.errors import KoptError

    text = " ".join(str(exc).split())[:400] or "(no message)"
    if isinstance(exc, KoptError):
        return text  # already one line naming file:line
    where = _user_location(exc, files)
    return f"{where + ': ' if where else ''}{type(exc).__name__}: {text}"


def handle(request: dict[str, Any]) -> dict[str, Any]:
    from kopt.errors import TaskError

    kw = dict(request.get("kw") or {})
    if request["op"] == "compile":  # compile never runs the interpreter, whatever the caller's environment says
        os.environ.pop("TRITON_INTERPRET", None)
    else:  # every other op picks its device first
        _pick_device(kw.pop("device", None))
    from kopt.task import load_candidate, load_task

    files = [p for p in (request["task"], request.get("candidate")) if p]
    try:
        task = load_task(request["task"])
    except TaskError as exc:
        return {"ok": False, "reason": "task_error", "message": str(exc), "result": None}
    try:
        candidate = load_candidate(request["candidate"], task) if request.get("candidate") else task
    except TaskError as exc:
        return {"ok": False, "reason": "exception", "message": str(exc), "result": None}
    try:
        if request["op"] == "compile":
            from kopt.harness.compile import compile_task

            kernels = compile_task(candidate, **kw)
            return {"ok": True, "reason": None, "message": None, "result": [k.to_dict() for k in kernels]}
        return {"ok": False, "reason": "exception", "message": f"unknown worker op {request['op']!r}", "result": None}
    except Exception as exc:
        return {"ok": False, "reason": classify(exc), "message": _one_line(exc, files), "result": None}


def serve(request: dict[str, Any], channel) -> None:
    """Run a channel op; an exception from user code becomes an {"error", "message"} frame."""
    from functools import partial

    from kopt.errors import TaskError
    from kopt.harness.channel import write_frame
    from kopt.task import load_task

    send = partial(write_frame, channel)
    device = _pick_device(request.get("device"))
    files = [p for p in (request["task"], request.get("candidate")) if p]
    try:
        task = load_task(request["task"])
    except TaskError as exc:
        send({"error": "task_error", "message": str(exc)})
        return
    try:
        if request["op"] == "reference":
            from kopt.harness.validate import run_reference

            run_reference(task, device, request["seed"], request.get("plan", "validate"), request.get("bench_cases"),
                          send)
        elif request["op"] == "candidate":
            from kopt.harness.validate import planned_calls, run_candidate

            calls = request["calls"] if "calls" in request else planned_calls(task, device, request["plan_seed"])
            run_candidate(task, request.get("candidate"), device, calls, send)
        elif request["op"] == "bench":
            from kopt.harness.bench import run_bench

            run_bench(task, request.get("candidate"), request["calls"], request["seed"], send)
        else:
            send({"error": "exception", "message": f"unknown worker op {request['op']!r}"})
    except Exception as exc:
        send({"error": classify(exc), "message": _one_line(exc, files)})


def _file_limit() -> str:
    import resource

    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if soft == resource.RLIM_INFINITY:
        return "largest file"
    return f"{soft >> 30} GiB" if soft >= 1 << 30 else f"{soft >> 20} MiB"


def main() -> None:
    request = json.loads(sys.stdin.read())
    # the channel is taken before any user code runs; then fd 1 becomes stderr, so prints land in the log
    channel = os.fdopen(request["channel_fd"], "wb") if "channel_fd" in request else None
    os.dup2(2, 1)
    if channel is not None:
        try:
            serve(request, channel)
            channel.close()
        except OSError as exc:
            if exc.errno != errno.EFBIG:
                raise
            print(f"kopt: the outputs passed the {_file_limit()} a sandboxed child may write; "
                  "give the task smaller cases", file=sys.stderr)
            sys.stderr.flush()
            os._exit(3)
    else:
        outcome = handle(request)
        path = Path(request["result_path"])
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(outcome, default=str))
        os.replace(tmp, path)
    sys.stderr.flush()
    os._exit(0)  # skip interpreter teardown: a broken CUDA context can hang or crash there


if __name__ == "__main__":
    main()
