"""Start a command that runs code kopt did not write (candidate kernels, users' task files), contained.

Three modes, the strongest this machine allows, probed once per process:

- ``bubblewrap``: no network, own pid namespace (the whole tree dies with the sandbox and with kopt, new
  sessions included), no capabilities, a read-only system with the homes, /tmp, /run (daemons' sockets) and
  the workspace's kopt.toml hidden; only a private scratch dir (HOME, TMPDIR), a kopt-owned Triton cache
  (shared by sandboxed calls, not by kopt itself) and the caller's writable paths can be written.
- ``unshare``: no network and own pid namespace (util-linux), the filesystem as the user sees it.
- ``none`` (process group only): no namespaces; the child is still killed with kopt (PR_SET_PDEATHSIG) and its process
  group at the end, but a grandchild that starts a new session can outlive the call.

In every mode: a scrubbed environment (an allow-list, nothing secret-looking), rlimits (CPU time from the
timeout, no core dumps, a file size cap, address space when no GPU is present: CUDA reserves huge virtual
ranges), a per-call cgroup (processes and memory) where one is writable, and the child's output streamed
to a capped log instead of the parent's memory. ``KOPT_SANDBOX=bubblewrap|unshare|none`` forces a mode.
Without `Files` (ncu, which needs the GPU's counters and writes its report where it is told) the command
keeps the filesystem and runs without namespaces, under the rest of the above.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import itertools
import math
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from kopt.config import kopt_home
from kopt.errors import KoptError

MODES = ("bubblewrap", "unshare", "none")
LOG_HEAD = 8 << 20  # bytes of a child's output kept from the start ...
LOG_TAIL = 64 << 10  # ... and from the end (the failure message reads the last lines)
MAX_PROCS = max(512, 4 * (os.cpu_count() or 1))  # processes and threads of one call (torch: a thread per core)
# largest file the child may write; its output channel is one of them: Liger's cross entropy sends 11 calls of
# ~400 MB (its logits are written in place), past the 4 GiB this was first
FILE_SIZE = 16 << 30
HIDDEN = ("/home", "/root", "/tmp", "/var/tmp", "/run", "/etc/ssh")  # /run: daemons' sockets (docker's...)
ROOT_ONLY = ("/etc/shadow", "/etc/gshadow")  # readable by uid 0 even without capabilities

_ALLOWED_ENV = re.compile(r"PATH|LANG|LANGUAGE|LC_\w+|TERM|TZ|PYTHONPATH|PYTHONUNBUFFERED|PYTHONHASHSEED|VIRTUAL_ENV"
                          r"|LD_LIBRARY_PATH|CUDA_\w+|NVIDIA_\w+|TRITON_\w+|MLIR_\w+|KOPT_\w+|OMP_\w+|MKL_\w+"
                          r"|OPENBLAS_\w+|TORCH_\w+|PYTORCH_\w+|ASCEND_\w+")
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|^AWS_|^OPENAI_|^ANTHROPIC_", re.I)

_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)
_CGROUP_IDS = itertools.count()


@dataclass(frozen=True)
class Files:
    """What the child may see besides the read-only system: files it reads, folders it writes."""

    readable: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()


def run(cmd: list[str], timeout: float, input: str | None = None, *, files: Files | None = None,
        stdin: Any = None, stdout: Any = None, stderr: Any = None, env: dict[str, str] | None = None,
        cwd: str | Path | None = None, pass_fds: tuple[int, ...] = (),
        cancel: threading.Event | None = None) -> subprocess.CompletedProcess:
    """Run `cmd` contained; kill everything it started when it ends, after `timeout` s or once `cancel` is set
    (TimeoutExpired is raised for both; the caller knows whether it cancelled). `files` None keeps the filesystem
    as it is (the namespaces then are skipped too, for tools such as ncu that need the GPU's counters); otherwise
    the filesystem is confined to `files`.
    stdout/stderr: PIPE (the capped text comes back in the result), an open file (the capped log goes
    there), STDOUT, or None (inherited)."""
    _announce()
    confined = files is not None
    with tempfile.TemporaryDirectory(prefix="kopt-scratch-") as scratch:
        child_env = scrub_env(env if env is not None else dict(os.environ), scratch)
        cache = Path(child_env.setdefault("TRITON_CACHE_DIR", str(kopt_home() / "sandbox-cache" / "triton")))
        argv = cmd
        if confined:
            argv = _wrap(cmd, files, scratch, cache, str(cwd or os.getcwd()))
        groups = _cgroups()
        limits = _limits(timeout)
        sinks = _sinks(stdout, stderr)
        proc = subprocess.Popen(
            argv, stdin=stdin, stdout=sinks.stdout_arg, stderr=sinks.stderr_arg, env=child_env, pass_fds=pass_fds,
            cwd=None if confined and mode() == "bubblewrap" else cwd, start_new_session=True,
            preexec_fn=functools.partial(_in_child, os.getpid(), limits, [g / "cgroup.procs" for g in groups]))
        sinks.start(proc)
        feeder = _feed(proc, input)
        waiter = threading.Thread(target=proc.wait, daemon=True)  # a blocking wait: Popen.wait(timeout) polls
        waiter.start()
        try:
            deadline = time.monotonic() + timeout
            while waiter.is_alive() and not (cancel and cancel.is_set()) and time.monotonic() < deadline:
                waiter.join(min(0.1, max(0.0, deadline - time.monotonic())) if cancel else timeout)
            if waiter.is_alive():
                raise subprocess.TimeoutExpired(cmd, timeout)
        finally:
            _kill_all(proc, groups)
            if feeder:
                feeder.join(timeout=1)
            out, err = sinks.finish()
    returncode = proc.returncode
    if argv[0] == "bwrap" and returncode > 128:  # bwrap reports a child killed by signal N as 128 + N
        returncode = 128 - returncode
    return subprocess.CompletedProcess(cmd, returncode, out, err)


@functools.cache
def mode() -> str:
    """The strongest containment that works here (probed once per process)."""
    return _probe()[0]


@functools.cache
def _probe() -> tuple[str, str]:
    """(mode, why not a stronger one)."""
    forced = os.environ.get("KOPT_SANDBOX", "").strip().lower()
    if forced and forced not in MODES:
        raise KoptError(f"KOPT_SANDBOX={forced!r}: expected one of {', '.join(MODES)}")
    if forced == "none":
        return "none", "KOPT_SANDBOX=none"
    why = []
    if forced in ("", "bubblewrap"):
        if not shutil.which("bwrap"):
            why.append("bwrap missing")
        elif _works(["bwrap", *_bwrap_namespaces(), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"]):
            return "bubblewrap", ""
        else:
            why.append("bwrap cannot create namespaces here")
    if forced in ("", "unshare"):
        if _works(["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc", "true"]):
            return "unshare", "; ".join(why)
        why.append("unshare cannot create namespaces here")
    return "none", "; ".join(why)


def describe() -> str:
    """One line: the containment in force here, and its limits."""
    m, why = _probe()
    limits = [f"cpu {_cpu_factor():g}x the timeout", "no core dumps", f"files <= {FILE_SIZE >> 30} GiB"]
    memory = f"{memory_limit() >> 20} MiB"
    groups = _cgroup_parents()
    if groups.get("pids"):
        limits.append(f"{MAX_PROCS} processes (cgroup)")
    elif os.geteuid() != 0:
        limits.append(f"{MAX_PROCS} more processes (RLIMIT_NPROC)")
    if groups.get("memory"):
        limits.append(f"memory {memory} (cgroup)")
    if not _gpu_present():
        limits.append(f"address space {memory} (no GPU here)")
    what = {"bubblewrap": "no network, own pid namespace, no capabilities, read-only system, "
                          "homes, /tmp and /run hidden",
            "unshare": "no network, own pid namespace; filesystem not confined",
            "none": "no namespaces: network and filesystem not confined, new sessions can outlive a call"}[m]
    name = m if m != "none" else "process group only"
    return f"sandbox: {name} ({what}; env scrubbed; limits: {', '.join(limits)}){f' [{why}]' if why else ''}"


def scrub_env(env: dict[str, str], scratch: str) -> dict[str, str]:
    """The allow-listed variables minus anything secret-looking; HOME and TMPDIR point to the scratch dir."""
    kept = {k: v for k, v in env.items() if _ALLOWED_ENV.fullmatch(k) and not _SECRET_ENV.search(k)}
    return {**kept, "HOME": scratch, "TMPDIR": scratch}


def memory_limit() -> int:
    """Bytes one call may use: KOPT_SANDBOX_MEMORY_MB, else half the machine's memory."""
    value = os.environ.get("KOPT_SANDBOX_MEMORY_MB")
    if value:
        if not value.isdigit() or int(value) == 0:
            raise KoptError(f"KOPT_SANDBOX_MEMORY_MB={value!r}: expected a whole number of MiB")
        return int(value) << 20
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


# --- the wrapper command ---------------------------------------------------------------------------

def _bwrap_namespaces() -> list[str]:
    caps = ["--cap-drop", "ALL"] if os.geteuid() == 0 else []  # root keeps every capability in bwrap otherwise
    return ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", *caps]


def _wrap(cmd: list[str], files: Files, scratch: str, cache: Path, cwd: str) -> list[str]:
    if mode() == "unshare":
        return ["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc", "--", *cmd]
    if mode() == "none":
        return cmd
    argv = ["bwrap", *_bwrap_namespaces(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for device in sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri")):
        argv += ["--dev-bind", device, device]
    home = os.path.expanduser("~")
    hidden = [d for d in dict.fromkeys([*HIDDEN, home]) if os.path.isdir(d) and d != "/"]
    for folder in hidden:
        argv += ["--tmpfs", folder]
    empty = Path(scratch, ".empty")  # what a hidden file reads as
    empty.touch()
    for secret in ROOT_ONLY:
        if os.path.isfile(secret):
            argv += ["--ro-bind", str(empty), secret]
    for path in dict.fromkeys([*_runtime_paths(), *files.readable]):
        argv += ["--ro-bind-try", path, path]
    visible = _hidden_under(cwd) is None
    if not visible and cwd not in HIDDEN and not _covers_home(cwd):
        argv += ["--ro-bind", cwd, cwd]  # the workspace (a project in the home): readable, not writable
        visible = True
    workspace_config = Path(cwd) / "kopt.toml"  # may hold an LLM API key
    if workspace_config.is_file():
        argv += ["--ro-bind", str(empty), str(workspace_config)]
    cache.mkdir(parents=True, exist_ok=True)
    for path in dict.fromkeys([*files.writable, str(cache), scratch]):
        Path(path).mkdir(parents=True, exist_ok=True)
        argv += ["--bind", path, path]
    lock = os.environ.get("KOPT_GPU_LOCK")  # measuring processes take turns through this one file (gpulock.py)
    if lock:
        Path(lock).touch()
        argv += ["--bind", lock, lock]
    for folder in hidden:
        argv += ["--remount-ro", folder]  # an empty tmpfs: what was written there would only look like an escape
    return argv + ["--chdir", cwd if visible else scratch, "--", *cmd]


def _runtime_paths() -> list[str]:
    """What the child's Python needs to start: the interpreter, the environment, kopt itself."""
    import kopt

    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(kopt.__file__).resolve().parents[1]),
             str(Path(sys.executable).resolve().parent), *sys.path]
    return [p for p in paths if p and os.path.exists(p) and _hidden_under(p) is not None and not _covers_home(p)]


def _covers_home(path: str) -> bool:
    home = os.path.expanduser("~")
    return home == path or home.startswith(path.rstrip("/") + "/")


def _hidden_under(path: str) -> str | None:
    for root in (*HIDDEN, os.path.expanduser("~")):
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return root
    return None


def _works(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@functools.cache
def _announce() -> None:
    """Say once per process when the containment is weaker than bubblewrap (a user should know)."""
    if mode() != "bubblewrap":
        print(f"kopt: {describe()}", file=sys.stderr)


# --- limits ----------------------------------------------------------------------------------------

def _cpu_factor() -> float:
    return float(os.cpu_count() or 1)  # CPU seconds add up over threads: the timeout on every core


def _limits(timeout: float) -> list[tuple[int, tuple[int, int]]]:
    limits = [(resource.RLIMIT_CORE, (0, 0)), (resource.RLIMIT_FSIZE, (FILE_SIZE, FILE_SIZE))]
    if math.isfinite(timeout):
        cpu = int(timeout * _cpu_factor()) + 10
        limits.append((resource.RLIMIT_CPU, (cpu, cpu + 5)))  # SIGXCPU, then SIGKILL: ends a spinner kopt left
    if not _gpu_present():
        limits.append((resource.RLIMIT_AS, (memory_limit(), memory_limit())))
    if os.geteuid() != 0 and not _cgroup_parents().get("pids"):  # counts all the user's processes; root is exempt
        nproc = _user_processes() + MAX_PROCS
        limits.append((resource.RLIMIT_NPROC, (nproc, nproc)))
    return [(what, (min(soft, _hard(what)), min(hard, _hard(what)))) for what, (soft, hard) in limits]


def _hard(what: int) -> int:
    hard = resource.getrlimit(what)[1]
    return hard if hard != resource.RLIM_INFINITY else sys.maxsize


def _gpu_present() -> bool:
    return bool(glob.glob("/dev/nvidia[0-9]*"))


def _user_processes() -> int:
    uid = os.getuid()
    count = 0
    for status in glob.glob("/proc/[0-9]*/status"):
        try:
            text = Path(status).read_text()
        except OSError:
            continue
        if f"\nUid:\t{uid}\t" in text:
            count += int(re.search(r"\nThreads:\t(\d+)", text).group(1))
    return count


def _in_child(parent: int, limits: list, cgroup_procs: list[Path]) -> None:
    """Runs in the child between fork and exec: die with kopt, apply the limits, join the call's cgroups."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # kopt died before the prctl
        os._exit(1)
    for what, values in limits:
        resource.setrlimit(what, values)
    for procs in cgroup_procs:
        procs.write_text(str(os.getpid()))


# --- cgroups ---------------------------------------------------------------------------------------

@functools.cache
def _cgroup_parents() -> dict[str, Path]:
    """Writable cgroups ({"pids": dir, "memory": dir}; v1, or v2 with both delegated) under which each call
    gets its own."""
    found = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controller, path = line.split(":", 2)
        if controller in ("pids", "memory"):
            found[controller] = Path("/sys/fs/cgroup", controller) / path.lstrip("/")
        elif controller == "" and Path("/sys/fs/cgroup/cgroup.controllers").is_file():
            v2 = Path("/sys/fs/cgroup") / path.lstrip("/")
            delegated = v2 / "cgroup.subtree_control"
            if delegated.is_file() and {"pids", "memory"} <= set(delegated.read_text().split()):
                found = {"pids": v2, "memory": v2}
    return {name: parent for name, parent in found.items() if _can_make_cgroup(parent)}


def _can_make_cgroup(parent: Path) -> bool:
    """Whether a cgroup can be made under `parent`; asked three times: right after a stopped fork bomb a call once
    found none (so its line named no process limit) where the next call found one."""
    probe = parent / f"kopt-probe-{os.getpid()}"
    for attempt in range(3):
        try:
            probe.mkdir()
            probe.rmdir()
            return True
        except OSError:
            time.sleep(0.05 * (attempt + 1))
    return False


def _cgroups() -> list[Path]:
    """A fresh cgroup for one call in each writable hierarchy, its limits set; [] where none is writable."""
    made = []
    for parent in dict.fromkeys(_cgroup_parents().values()):
        _remove_cgroups(_orphaned(parent))
        group = parent / f"kopt-{os.getpid()}-{next(_CGROUP_IDS)}"
        try:
            group.mkdir()
            made.append(group)
            _write_if(group / "pids.max", str(MAX_PROCS))
            _write_if(group / "memory.max", str(memory_limit()))  # v2
            _write_if(group / "memory.swap.max", "0")
            _write_if(group / "memory.limit_in_bytes", str(memory_limit()))  # v1
        except OSError:
            _remove_cgroups(made)
            return []
    return made


def _orphaned(parent: Path) -> list[Path]:
    """Cgroups of kopt processes that died (kill -9) before removing them: what is left in them goes too."""
    found = []
    for group in parent.glob("kopt-*-*"):
        try:
            os.kill(int(group.name.split("-")[1]), 0)
        except ProcessLookupError:
            found.append(group)
        except (ValueError, PermissionError):
            continue
    return found


def _write_if(path: Path, value: str) -> None:
    if path.exists():
        path.write_text(value)


def _remove_cgroups(groups: list[Path]) -> None:
    for group in groups:
        for _ in range(100):
            pids = _cgroup_members(group)
            if not pids:
                break
            for pid in pids:
                _kill(pid)
            time.sleep(0.02)
        try:
            group.rmdir()
        except OSError:
            pass


def _cgroup_members(group: Path) -> list[int]:
    try:
        return [int(p) for p in (group / "cgroup.procs").read_text().split()]
    except OSError:
        return []


# --- ending -----------------------------------------------------------------------------------------

def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_all(proc: subprocess.Popen, groups: list[Path]) -> None:
    """Everything the call started: the process tree (a namespace's members are in it), the child's process
    group, whatever is left in its cgroups; waits until they are gone."""
    tree = _descendants(proc.pid)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in tree:
        _kill(pid)
    proc.wait()
    _remove_cgroups(groups)
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in tree) and time.monotonic() < deadline:
        time.sleep(0.02)


def _descendants(root: int) -> list[int]:
    """Every process below `root`, through /proc's parent links."""
    children: dict[int, list[int]] = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            parent = int(Path(stat).read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(stat.split("/")[2]))
    found, todo = [], [root]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _alive(pid: int) -> bool:
    """Running (a zombie has finished: its parent, gone too or not ours, reaps it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _feed(proc: subprocess.Popen, input: str | None) -> threading.Thread | None:
    if proc.stdin is None:
        return None

    def write() -> None:
        try:
            if input:
                proc.stdin.write(input.encode())
            proc.stdin.close()
        except OSError:  # the child exited without reading
            pass

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


# --- output ------------------------------------------------------------------------------------------

class _CappedLog:
    """Copies a pipe into a file: the first LOG_HEAD bytes, a note of what was dropped, the last LOG_TAIL."""

    def __init__(self, sink: IO) -> None:
        self.sink, self.kept, self.dropped, self.tail = sink, 0, 0, b""
        self.stop = threading.Event()

    def pump(self, fd: int) -> None:
        while True:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if not ready:
                if self.stop.is_set():
                    break
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            room = LOG_HEAD - self.kept
            if room > 0:
                self._write(chunk[:room])
                self.kept += min(room, len(chunk))
                chunk = chunk[room:]
            if chunk:
                self.dropped += len(chunk)
                self.tail = (self.tail + chunk)[-LOG_TAIL:]
        os.close(fd)
        if self.dropped:
            cut = self.dropped - len(self.tail)
            self._write(f"\n[kopt: {cut} bytes of output dropped here; kept the first {LOG_HEAD >> 20} MiB "
                        f"and the last {len(self.tail)} bytes]\n".encode() + self.tail)

    def _write(self, data: bytes) -> None:
        if hasattr(self.sink, "buffer"):
            self.sink.flush()
            self.sink.buffer.write(data)
            self.sink.buffer.flush()
        else:
            self.sink.write(data)


class _sinks:
    """Where the child's stdout and stderr go: through pipes into capped logs, never the parent's memory."""

    def __init__(self, stdout: Any, stderr: Any) -> None:
        self.logs: dict[str, tuple[_CappedLog, int, int]] = {}  # name -> (log, read end, write end)
        self.captured: dict[str, IO] = {}
        self.threads: list[threading.Thread] = []
        self.stdout_arg = self._pipe("stdout", stdout)
        same_file = stderr is stdout and not isinstance(stdout, int)  # run_sandboxed: one log for both
        self.stderr_arg = subprocess.STDOUT if same_file else self._pipe("stderr", stderr)

    def _pipe(self, name: str, target: Any) -> Any:
        if target is None or target == subprocess.STDOUT:
            return target
        if target == subprocess.PIPE:
            target = self.captured[name] = tempfile.TemporaryFile()
        read, write = os.pipe()
        self.logs[name] = (_CappedLog(target), read, write)
        return write

    def start(self, proc: subprocess.Popen) -> None:
        for log, read, write in self.logs.values():
            os.close(write)
            thread = threading.Thread(target=log.pump, args=(read,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def finish(self) -> tuple[str | None, str | None]:
        for log, _, _ in self.logs.values():
            log.stop.set()
        for thread in self.threads:
            thread.join()
        texts = {}
        for name, file in self.captured.items():
            file.seek(0)
            texts[name] = file.read().decode(errors="replace")
            file.close()
        return texts.get("stdout"), texts.get("stderr")
