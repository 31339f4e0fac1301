"""Run task or candidate code in a child process with a time limit.

Candidate code (LLM output included) may hang, segfault, hit an illegal address or run out of
memory; any of these fails the call with a structured reason, never the caller. The child is
`python -m kopt.harness.worker`: a JSON request on stdin. `run_with_channel` (validate, bench) gets
back data frames over a private channel and decides everything itself; `run_sandboxed` (compile)
gets a JSON result written to a file (so nothing the user code prints can corrupt it).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REASONS = ("timeout", "crash", "cuda_error", "oom", "exception", "compile_error", "incorrect", "task_error", "no_gpu")
DEFAULT_TIMEOUT_S = 600.0


def run_sandboxed(op: str, task_path: str | Path, candidate_path: str | Path | None = None, *,
                  timeout_s: float = DEFAULT_TIMEOUT_S, env: dict[str, str] | None = None, **kw: Any) -> dict[str, Any]:
    """Run worker op `op` ("compile"; validate and bench use `run_with_channel`) on a task (and candidate) in a child.

    Returns {"ok", "reason" (None or one of REASONS), "message" (one line), "result" (the op's dict),
    "elapsed_s"}. Never raises for anything the child does."""
    with tempfile.TemporaryDirectory(prefix="kopt-sandbox-") as tmp:
        result_path = Path(tmp) / "result.json"
        stderr_path = Path(tmp) / "stderr.txt"
        request = {"op": op, "task": str(Path(task_path).resolve()),
                   "candidate": str(Path(candidate_path).resolve()) if candidate_path else None,
                   "result_path": str(result_path), "kw": kw}
        child_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
        start = time.monotonic()
        with open(stderr_path, "w") as stderr:
            try:
                proc = run_in_group([sys.executable, "-m", "kopt.harness.worker"], timeout_s, json.dumps(request),
                                    stdin=subprocess.PIPE, stdout=stderr, stderr=stderr, env=child_env)
            except subprocess.TimeoutExpired:
                return _failure("timeout", f"no result after {timeout_s:g} s; the child was killed (a hang?)",
                                round(time.monotonic() - start, 3))
        elapsed = round(time.monotonic() - start, 3)
        if result_path.is_file():
            outcome = json.loads(result_path.read_text())
            outcome["elapsed_s"] = elapsed
            return outcome
        return _failure(*_classify_exit(proc.returncode, _tail(stderr_path)), elapsed)


@dataclass
class ChildRun:
    frames: list  # what the child sent over its channel, in order: data, never a verdict
    returncode: int | None  # None: killed at the time limit
    stderr_tail: str
    elapsed_s: float
    channel_note: str | None = None  # why the channel could not be read to its end

    def exit_failure(self) -> tuple[str, str]:
        """(reason, message) for a child that did not finish normally."""
        return _classify_exit(self.returncode, self.stderr_tail)


def run_with_channel(request: dict[str, Any], timeout_s: float, env: dict[str, str] | None = None) -> ChildRun:
    """Run the worker on `request` with a channel: an unlinked file whose descriptor the child inherits
    (`channel_fd` in the request) and writes frames to before and after user code runs. Never raises for
    anything the child does; a timeout is a ChildRun with returncode None."""
    from kopt.harness.channel import read_frames

    with _channel_file() as channel, tempfile.TemporaryDirectory(prefix="kopt-sandbox-") as tmp:
        stderr_path = Path(tmp) / "stderr.txt"
        request = {**request, "channel_fd": channel.fileno()}
        child_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
        start = time.monotonic()
        returncode: int | None
        with open(stderr_path, "w") as stderr:
            try:
                proc = run_in_group([sys.executable, "-m", "kopt.harness.worker"], timeout_s, json.dumps(request),
                                    stdin=subprocess.PIPE, stdout=stderr, stderr=stderr, env=child_env,
                                    pass_fds=(channel.fileno(),))
                returncode = proc.returncode
            except subprocess.TimeoutExpired:
                returncode = None
        elapsed = round(time.monotonic() - start, 3)
        channel.seek(0)
        frames, note = read_frames(channel)
        return ChildRun(frames, returncode, _tail(stderr_path), elapsed, note)


def _channel_file():
    """An anonymous file in memory (memfd) where Linux has it: outputs of a GB or more never touch the disk."""
    if hasattr(os, "memfd_create"):
        return os.fdopen(os.memfd_create("kopt-channel"), "w+b")
    return tempfile.TemporaryFile()


def run_in_group(cmd: list[str], timeout: float, input: str | None = None, **popen: Any) -> subprocess.CompletedProcess:
    """Run `cmd` contained (kopt.harness.containment) and kill everything it started when it ends or times
    out (the TimeoutExpired is re-raised), so nothing, a profiled program or a hung kernel, outlives it.
    The worker's filesystem is confined to what its request names: the task and candidate files and the folders
    the task imports its siblings from readable, the result's folder and the compile cache writable. Other commands (ncu needs the GPU's counters) keep
    the filesystem and skip the namespaces, with the rest of the containment."""
    from kopt.harness.containment import run

    return run(cmd, timeout, input, files=_worker_files(cmd, input), **popen)


def _worker_files(cmd: list[str], input: str | None):
    from kopt.harness.containment import Files

    if cmd[1:3] != ["-m", "kopt.harness.worker"] or not input:
        return None
    request = json.loads(input)
    readable = [request.get("task"), request.get("candidate"), *_sibling_dirs(request.get("task"))]
    writable = [str(Path(request["result_path"]).parent) if request.get("result_path") else None,
                (request.get("kw") or {}).get("cache_dir")]
    return Files(readable=tuple(str(p) for p in readable if p), writable=tuple(str(p) for p in writable if p))


def _sibling_dirs(task: str | None) -> list[str]:
    """The task's folder (and KOPT_TASK_PATH's), which its sibling imports read; never a whole hidden root
    (/tmp, a home): a task saved there directly keeps only its own file."""
    from kopt.harness.containment import HIDDEN
    from kopt.task import import_dirs

    if not task:
        return []
    roots = {*HIDDEN, os.path.expanduser("~"), "/"}
    return [d for d in import_dirs(Path(task)) if d not in roots and not os.path.expanduser("~").startswith(d + "/")]


def _classify_exit(returncode: int | None, stderr_tail: str) -> tuple[str, str]:
    if returncode is None:
        return "timeout", "the child ran past its time limit and was killed (a hang?)"
    if returncode < 0 or returncode > 128:  # a shell or bubblewrap reports a signal as 128 + N
        sig = _signal_name(-returncode if returncode < 0 else returncode - 128)
        if sig == "SIGKILL":
            return "oom", f"the child was killed by SIGKILL (most likely out of memory); {stderr_tail}".rstrip("; ")
        return "crash", f"the child died of {sig}; {stderr_tail}".rstrip("; ")
    return "crash", f"the child exited with status {returncode} and no result; {stderr_tail}".rstrip("; ")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _tail(path: Path, limit: int = 300) -> str:
    lines = [l.strip() for l in path.read_text(errors="replace").splitlines() if l.strip()]
    return " | ".join(lines[-3:])[-limit:]


def _failure(reason: str, message: str, elapsed: float) -> dict[str, Any]:
    return {"ok": False, "reason": reason, "message": message, "result": None, "elapsed_s": elapsed}
