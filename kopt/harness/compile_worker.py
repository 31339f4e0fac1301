"""A warm compile worker, so `kopt ask --kernel` and MCP `compile_ir` compile a task without importing torch.

A sandboxed compile spends ~2 s importing torch and Triton and ~1.5 s on the first compile of a process
(backends, LLVM); a task's own compile takes ~0.3 s. Three processes keep that ~0.3 s and today's containment:

- **the client** (`compile_outcome`, in kopt) sends one request over an abstract Unix socket and reads the
  outcome; when no worker answers it starts one and waits for it (nothing is compiled twice).
- **the supervisor** (`python -m kopt.harness.compile_worker supervise CACHE PATH...`, detached, trusted: it
  never imports torch, Triton or a task) listens on the socket, runs the worker through containment.run (the
  same namespaces, scrubbed environment, rlimits and cgroup as every sandboxed call; only PATHs readable, the
  compile cache writable), gives each request a time limit, and kills and restarts the worker when it misses one or dies.
  It leaves after IDLE_SECONDS without a request.
- **the worker** (`... work`, contained) imports torch and Triton and compiles a kernel of its own once, then
  forks a child per request (a forkserver: it never imports a task itself). The child closes the worker's
  pipes, takes its own time limit, imports the task, compiles (kopt.harness.worker.handle, as the cold
  sandbox does), writes its outcome to a file and exits; then everything it started is killed (the worker is
  a child subreaper, so grandchildren that start new sessions are still its descendants).

A worker serves the paths it was started for (the task's file and folders, as the cold sandbox sees them: never
a whole /tmp or home). The socket's name carries them, the compile cache, the environment the sandbox passes on,
the sources of what runs in the worker and the interpreter, so changed code never answers through an old worker.
Each end of the socket checks the other's uid. KOPT_COMPILE_WORKER=0 turns workers off (the caller compiles cold,
in a sandbox).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import os
import resource
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from kopt.unix_socket import read_all, read_line, same_user

IDLE_SECONDS = 120.0
START_SECONDS = 120.0  # the worker's start-up (torch, Triton, the warm-up compile) on a loaded 2-core box
CONNECT_SECONDS = 10.0  # how long a client waits for a supervisor it started to listen
GRACE_SECONDS = 10.0  # a request's child has its time limit; the worker this much more to answer
LIFETIME_SECONDS = 4 * 3600.0  # containment's limit on the worker process (it leaves with its supervisor)
_PR_SET_CHILD_SUBREAPER = 36
WORKER_SOURCES = ("__init__.py", "errors.py", "config.py", "task.py", "harness/__init__.py", "harness/compiled.py",
                  "harness/compile.py", "harness/compile_worker.py", "harness/containment.py", "harness/sandbox.py",
                  "harness/worker.py", "unix_socket.py")  # what the worker and its children load of kopt: its address changes with them


# --- client ---------------------------------------------------------------------------------------------

def compile_outcome(task_path: Path, candidate_path: Path | None, timeout_s: float, kw: dict[str, Any]) -> dict | None:
    """The outcome of a sandboxed compile (as run_sandboxed gives it) from the warm worker, or None when the
    caller should compile cold: workers off, none could start, or the worker itself failed."""
    if os.environ.get("KOPT_COMPILE_WORKER") == "0":
        return None
    from kopt.harness.sandbox import _sibling_dirs

    task = Path(task_path).resolve()
    candidate = Path(candidate_path).resolve() if candidate_path else None
    folders = _sibling_dirs(str(task))  # what the cold sandbox sees; one worker serves every task in them
    files = [str(p) for p in (task, candidate) if p and not any(p.is_relative_to(f) for f in folders)]
    readable = sorted({*folders, *files})
    cache = str(kw["cache_dir"])
    name = address(readable, cache)
    request = json.dumps({"task": str(task), "candidate": str(candidate) if candidate else None, "kw": kw,
                          "timeout_s": timeout_s}).encode() + b"\n"
    try:
        with _connect(name, readable, cache) as sock:
            sock.settimeout(timeout_s + GRACE_SECONDS + START_SECONDS)
            sock.sendall(request)
            weaker, _, outcome = read_all(sock).partition(b"\n")
            weaker, reply = json.loads(weaker), json.loads(outcome)
    except (OSError, ValueError):
        return None
    if not isinstance(reply, dict) or "ok" not in reply:
        return None
    if weaker:
        _say(weaker)
    return reply


@functools.cache
def _say(sandbox: str) -> None:
    """Once per process, as a cold compile does: the containment in force is weaker than bubblewrap."""
    print(f"kopt: {sandbox}", file=sys.stderr)


def address(readable: list[str], cache: str) -> bytes:
    """The abstract socket name of the worker for these paths, this cache, the environment the sandbox passes on,
    the sources of what runs in the worker, this Python."""
    from kopt.harness.containment import scrub_env

    kopt = Path(__file__).parents[1]
    stamp = max((kopt / name).stat().st_mtime_ns for name in WORKER_SOURCES)
    env = sorted(scrub_env(dict(os.environ), "").items())
    key = json.dumps([readable, cache, env, stamp, sys.executable, os.getuid()])
    return b"\0kopt-compile-" + hashlib.sha256(key.encode()).hexdigest()[:24].encode()


def _connect(name: bytes, readable: list[str], cache: str) -> socket.socket:
    """A connection to the worker's supervisor, started first when none listens."""
    started = False
    deadline = time.monotonic() + CONNECT_SECONDS
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(name)
            if not same_user(sock):  # anyone may bind an abstract name: outcomes come only from our own user
                raise ConnectionRefusedError("the worker's socket belongs to another user")
            return sock
        except (ConnectionRefusedError, FileNotFoundError):
            sock.close()
            if time.monotonic() > deadline:
                raise
            if not started:
                subprocess.Popen([sys.executable, "-m", "kopt.harness.compile_worker", "supervise", cache, *readable],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True, close_fds=True, cwd="/")
                started = True
            time.sleep(0.02)


# --- supervisor -----------------------------------------------------------------------------------------

def supervise(cache: str, readable: list[str], idle: float = IDLE_SECONDS) -> None:
    """Answer requests one at a time until idle for `idle` seconds or a readable path is gone."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(address(readable, cache))
    except OSError:  # another supervisor serves these paths
        return
    sock.listen(64)
    sock.settimeout(idle)
    from kopt.harness.containment import describe, mode

    weaker = json.dumps(describe() if mode() != "bubblewrap" else None).encode() + b"\n"  # first line of each reply
    _subreaper()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # leave through `finally`: the worker goes too
    worker: _Worker | None = None
    try:
        while all(os.path.exists(p) for p in readable):
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                return
            with conn:
                conn.settimeout(5.0)
                if not same_user(conn):
                    continue
                try:
                    request = json.loads(read_line(conn))
                except (OSError, ValueError):
                    continue
                if worker is None or not worker.alive():
                    worker = _Worker(cache, readable)
                reply = worker.ask(request)
                if reply is None:  # it missed its deadline or died: a fresh one for the next request
                    worker.stop()
                    worker = None
                    reply = b'{"worker_failed": true}'
                conn.settimeout(None)
                try:
                    conn.sendall(weaker + reply)  # the outcome as the child wrote it: its MBs of IR are not parsed
                except OSError:  # the client gave up waiting
                    pass
    finally:
        if worker is not None:
            worker.stop()
        sock.close()


class _Worker:
    """The contained worker as the supervisor sees it: two pipes and the thread that holds containment.run."""

    def __init__(self, cache: str, readable: list[str]) -> None:
        from kopt.harness.containment import Files, run

        self.fresh = True
        to_worker, self.requests = os.pipe()
        self.replies, from_worker = os.pipe()
        self.log = tempfile.TemporaryFile()
        files = Files(readable=tuple(readable), writable=(cache,))
        cmd = [sys.executable, "-m", "kopt.harness.compile_worker", "work", str(to_worker), str(from_worker)]

        def hold() -> None:
            try:
                run(cmd, LIFETIME_SECONDS, files=files, stdout=self.log, stderr=self.log, cwd="/",
                    pass_fds=(to_worker, from_worker))
            except Exception:  # its time limit, or it could not start: requests see it is gone
                pass
            finally:
                os.close(to_worker)
                os.close(from_worker)

        self.thread = threading.Thread(target=hold, daemon=True)
        self.thread.start()

    def alive(self) -> bool:
        return self.thread.is_alive()

    def ask(self, request: dict[str, Any]) -> bytes | None:
        """The worker's reply (the outcome's JSON), or None when it died or missed the request's deadline."""
        deadline = time.monotonic() + float(request["timeout_s"]) + GRACE_SECONDS + (START_SECONDS if self.fresh else 0)
        self.fresh = False
        try:
            _send(self.requests, json.dumps(request).encode())
            return _receive(self.replies, deadline, self.alive)
        except (OSError, ValueError):
            return None

    def stop(self) -> None:
        """Kill the worker's whole tree (containment.run then cleans up its namespace and cgroup)."""
        for fd in (self.requests, self.replies):
            try:
                os.close(fd)
            except OSError:
                pass
        _kill_descendants()
        self.thread.join(timeout=30)
        self.log.close()


# --- worker ---------------------------------------------------------------------------------------------

def work(requests: int, replies: int) -> None:
    """Import torch and Triton, compile once, then answer each request in a forked child; leave at EOF."""
    os.environ.pop("TRITON_INTERPRET", None)  # a compile worker compiles: a user's interpreter setting would hide every kernel
    _warm_up()
    _subreaper()
    fake_tensors = False
    while True:
        try:
            request = json.loads(_receive(requests, None, lambda: True))
        except (OSError, ValueError):
            return
        _send(replies, _in_child(request, (requests, replies)))
        if not fake_tensors:  # after the first answer: the call that started the worker does not wait for it
            _load_fake_tensors()
            fake_tensors = True


@functools.cache
def _copy_kernel() -> Any:
    """A kernel of kopt's own, for the warm-ups (no task code runs in the worker)."""
    import triton
    import triton.language as tl

    @triton.jit
    def copy(src, dst, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(dst + offsets, tl.load(src + offsets, mask=offsets < n), mask=offsets < n)

    return copy


def _warm_up() -> None:
    """Load torch, Triton's backend and LLVM now, through a kernel of kopt's own.
    Without the MLIR dump: Triton opens its stream once per process, and the children open their own."""
    import torch  # noqa: F401  (what a task imports first)
    import triton
    from triton.compiler import ASTSource

    import kopt.harness.worker  # noqa: F401  (what a child runs)
    from kopt.harness.compile import gpu_target

    source = ASTSource(fn=_copy_kernel(), signature={"src": "*fp32", "dst": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                       constexprs={(3,): 64})
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"  # a cached kernel would skip what is to be loaded
    try:
        triton.compile(source, target=gpu_target("sm_90"))
    finally:
        del os.environ["TRITON_ALWAYS_COMPILE"]


def _load_fake_tensors() -> None:
    """Capture the kernel's launch on fake tensors, so that the children capture a task's so (~0.02 s instead of
    making its real inputs: kopt.harness.compile.capture_launches); FakeTensorMode's first use imports
    torch._dynamo (~1 s)."""
    from types import SimpleNamespace

    import torch
    import triton

    from kopt.harness.compile import _on_fake_tensors, gpu_target

    def make_inputs(case: dict, device: str, seed: int) -> tuple:
        generator = torch.Generator(device=device).manual_seed(seed)
        return (torch.randn(case["n"] + 1, device=device, generator=generator)[1:],)

    def entry(x: Any) -> Any:
        out = torch.empty_like(x)
        _copy_kernel()[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
        return out

    _on_fake_tensors(SimpleNamespace(entry=entry, make_inputs=make_inputs), {"n": 256}, gpu_target("sm_90"))


def _in_child(request: dict[str, Any], pipes: tuple[int, int]) -> bytes:
    """Run one request in a forked child with its own time limit; kill all it started; its outcome's JSON."""
    from kopt.harness.sandbox import _classify_exit, _failure, _tail

    timeout = float(request["timeout_s"])
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kopt-compile-") as tmp:
        result, log = Path(tmp) / "result.json", Path(tmp) / "stderr.txt"
        pid = os.fork()
        if pid == 0:
            _child(request, pipes, Path(tmp), timeout)
        returncode = _wait(pid, timeout)
        _kill_descendants()
        elapsed = round(time.monotonic() - start, 3)
        if returncode is None:
            failure = _failure("timeout", f"no result after {timeout:g} s; the child was killed (a hang?)", elapsed)
        elif result.is_file():
            return result.read_bytes()
        else:
            failure = _failure(*_classify_exit(returncode, _tail(log)), elapsed)
        return json.dumps(failure).encode()


def _child(request: dict[str, Any], pipes: tuple[int, int], tmp: Path, timeout: float) -> None:
    """The forked child: nothing of the worker's reachable, its own limits and scratch; then the task."""
    code = 1
    try:
        for fd in pipes:
            os.close(fd)
        os.setpgid(0, 0)
        log = os.open(tmp / "stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        cpu = int(timeout * (os.cpu_count() or 1)) + 10
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
        os.environ.update(HOME=str(tmp), TMPDIR=str(tmp))
        tempfile.tempdir = None
        os.chdir(Path(request["task"]).parent)  # visible: a sibling folder, or the hidden root holding the file
        from kopt.harness.worker import handle

        outcome = handle({"op": "compile", "task": request["task"], "candidate": request.get("candidate"),
                          "kw": request["kw"]})
        (tmp / "result.tmp").write_text(json.dumps(outcome, default=str))
        os.replace(tmp / "result.tmp", tmp / "result.json")
        code = 0
    except SystemExit as exc:  # a task's exit(n) reads as it would in the cold sandbox: status n
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        if not isinstance(exc.code, int | None):
            print(exc.code, file=sys.stderr)
    finally:
        sys.stderr.flush()
        os._exit(code)  # never back into the worker's loop


def _wait(pid: int, timeout: float) -> int | None:
    """The child's exit status (negative: killed by that signal), or None after `timeout` s (then killed)."""
    pidfd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout)
    finally:
        os.close(pidfd)
    if not ready:
        _kill(pid)
        os.waitpid(pid, 0)
        return None
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


# --- shared ---------------------------------------------------------------------------------------------

def _subreaper() -> None:
    """Orphans of what this process starts become its children, so _kill_descendants finds them all."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1)


def _kill_descendants() -> None:
    """SIGKILL every process below this one until none is left (a fork bomb refills between passes); reap."""
    from kopt.harness.containment import _descendants

    for _ in range(200):
        pids = _descendants(os.getpid())
        if not pids:
            break
        for pid in pids:
            _kill(pid)
        _reap()
        time.sleep(0.01)
    _reap()


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _send(fd: int, data: bytes) -> None:
    view = memoryview(struct.pack("!Q", len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _receive(fd: int, deadline: float | None, alive) -> bytes | None:
    """One length-prefixed message; None when `deadline` (monotonic) passes or `alive()` turns false first."""
    data = b""
    size = None
    while size is None or len(data) < size + 8:
        wait = 0.5 if deadline is None else min(0.5, deadline - time.monotonic())
        if wait <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            if not alive():
                return None
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            raise OSError("the other end closed its pipe")
        data += chunk
        if size is None and len(data) >= 8:
            size = struct.unpack("!Q", data[:8])[0]
    return data[8:]








if __name__ == "__main__":
    if sys.argv[1] == "supervise":
        supervise(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "work":
        work(int(sys.argv[2]), int(sys.argv[3]))
