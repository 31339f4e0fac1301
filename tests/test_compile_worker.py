"""The warm compile worker, through real processes: it compiles a real task; each hostile task costs one request,
never the worker, and leaves nothing behind; kopt compiles cold when the worker is off, gone or killed."""

import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from kopt.errors import KoptError
from kopt.harness import containment
from kopt.harness.compile import compile_sandboxed
from kopt.harness.compile_worker import compile_outcome

ROOT = Path(__file__).resolve().parents[1]
MARKER = f"kopt-compile-worker-test-{uuid.uuid4().hex[:12]}"  # in the environment of every process this module starts
SECRET = f"hunter2-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The tasks' folder (one worker serves it), with a good task; nothing of this module is left at the end."""
    os.environ["KOPT_TEST_MARKER"] = MARKER  # a KOPT_ variable: the worker's scrubbed environment keeps it
    os.environ["KOPT_TEST_API_TOKEN"] = SECRET  # secret-looking: it must not reach the task
    tasks = tmp_path_factory.mktemp("tasks")
    (tasks / "good.py").write_text((ROOT / "examples" / "vector_add.py").read_text())
    yield tasks
    _kill_all()
    del os.environ["KOPT_TEST_MARKER"], os.environ["KOPT_TEST_API_TOKEN"]
    assert _marked() == []


def _marked() -> list[int]:
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if MARKER.encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return sorted(pid for pid in found if containment._alive(pid) and pid != os.getpid())


def _kill_all() -> None:
    for pid in _marked():
        containment._kill(pid)
    time.sleep(0.5)


def _argv(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def _worker_pid(folder: Path) -> int | None:
    """The worker serving `folder`: the first `work` process (its sandbox's outermost) below the supervisor started
    for it. Another test's worker, serving other paths, may live beside it with a lower pid."""
    for supervisor in _marked():
        if b"supervise" in _argv(supervisor) and str(folder).encode() in _argv(supervisor):
            return min((pid for pid in containment._descendants(supervisor) if b"work" in _argv(pid)), default=None)
    return None


def _ask(path: Path, timeout_s: float = 120, cache: Path | None = None) -> dict | None:
    kw = {"case": None, "target": "sm_90", "trajectory": False, "stages": ["ptx"],
          "cache_dir": str(cache or path.parent.parent / "cache")}
    return compile_outcome(path, None, timeout_s, kw)


def _good(folder: Path) -> dict:
    outcome = _ask(folder / "good.py")
    assert outcome and outcome["ok"], outcome
    return outcome


def _hostile(folder: Path, name: str, body: str) -> Path:
    """A task whose import runs `body` and then fails with what it saw (`seen`)."""
    path = folder / f"{name}.py"
    path.write_text("import os, sys, time\nseen = []\n" + textwrap.dedent(body)
                    + "\nraise RuntimeError('SEEN ' + ' '.join(map(str, seen)))\n")
    return path


def test_the_worker_compiles_a_real_task_and_returns_its_ir(folder):
    outcome = _good(folder)
    (kernel,) = outcome["result"]
    assert kernel["name"] == "add_kernel" and "ld.global.v4" in kernel["asm"]["ptx"] and list(kernel["asm"]) == ["ptx"]
    assert _worker_pid(folder) is not None  # the worker answered: it runs, contained, for the next request
    (compiled,) = compile_sandboxed(folder / "good.py", target="sm_80", stages=["ptx"])
    assert compiled.name == "add_kernel" and "mma" not in compiled.asm["ptx"] and compiled.target == "sm_80"


@pytest.mark.parametrize("name, body, timeout_s, reason, says", [
    ("exits", "os._exit(3)", 120, "crash", "status 3"),
    ("sleeps", "time.sleep(1000)", 3, "timeout", "no result after 3 s"),
    ("kills_its_group", "import signal\nos.killpg(0, signal.SIGKILL)", 120, "oom", "SIGKILL"),
])
def test_a_hostile_task_costs_one_request_not_the_worker(folder, name, body, timeout_s, reason, says):
    _good(folder)
    worker, before = _worker_pid(folder), _marked()
    outcome = _ask(_hostile(folder, name, body), timeout_s)
    assert outcome["ok"] is False and outcome["reason"] == reason and says in outcome["message"], outcome
    assert _worker_pid(folder) == worker and _marked() == before
    _good(folder)


def test_a_fork_bomb_is_bounded_and_all_of_it_killed(folder):
    if not containment._cgroup_parents().get("pids") and os.geteuid() == 0:
        pytest.skip("root without a writable pids cgroup: nothing bounds the process count (documented)")
    _good(folder)
    worker, before = _worker_pid(folder), _marked()
    outcome = _ask(_hostile(folder, "bomb", f"""
        try:
            for _ in range({containment.MAX_PROCS * 4}):
                if os.fork() == 0:
                    time.sleep(1000)
                    os._exit(0)
            seen.append("unbounded")
        except OSError as exc:
            seen.append(type(exc).__name__)
    """), 60)
    assert "SEEN BlockingIOError" in outcome["message"], outcome
    assert _worker_pid(folder) == worker and _marked() == before
    _good(folder)


def test_a_new_session_started_by_a_task_does_not_outlive_its_request(folder):
    _good(folder)
    before = _marked()
    outcome = _ask(_hostile(folder, "daemon", """
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(1000)
            os._exit(0)
        time.sleep(0.5)
        seen.append("started")
    """))
    assert "SEEN started" in outcome["message"], outcome
    assert _marked() == before


def test_a_task_sees_no_secret_of_the_caller(folder):
    home_secret = Path.home() / f".{MARKER}-secret"
    home_secret.write_text(SECRET)
    try:
        outcome = _ask(_hostile(folder, "snoops", f"""
            seen.append(os.environ.get("KOPT_TEST_API_TOKEN"))
            seen.append(os.environ["HOME"] == os.path.expanduser("~") != {str(Path.home())!r})
            try:
                seen.append(open({str(home_secret)!r}).read())
            except OSError as exc:
                seen.append(type(exc).__name__)
        """))
    finally:
        home_secret.unlink()
    seen = outcome["message"].split("SEEN ", 1)[1].split()
    assert seen[:2] == ["None", "True"], outcome  # the environment is scrubbed, HOME is a scratch folder
    if containment.mode() == "bubblewrap":
        assert seen[2] == "FileNotFoundError"  # the home is hidden (other modes do not confine files: documented)


def test_a_task_saved_directly_in_tmp_does_not_open_tmp_to_the_worker(folder):
    if containment.mode() != "bubblewrap":
        pytest.skip("only bubblewrap confines the filesystem (documented)")
    task, secret = Path(f"/tmp/{MARKER}.py"), Path(f"/tmp/{MARKER}-secret")
    secret.write_text(SECRET)
    task.write_text(f"import os\nraise RuntimeError('SEEN ' + str(os.path.exists({str(secret)!r})))\n")
    try:
        outcome = _ask(task, cache=folder.parent / "cache")
    finally:
        task.unlink()
        secret.unlink()
    assert outcome["message"].endswith("SEEN False"), outcome  # its own file only, as in the cold sandbox


def test_a_task_that_kills_the_worker_costs_one_request_and_kopt_compiles_cold(folder):
    _good(folder)
    worker = _worker_pid(folder)
    killer = _hostile(folder, "kills_worker", "import signal\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(1000)")
    assert _ask(killer) is None  # the worker died: the caller is told to compile cold
    _good(folder)
    assert _worker_pid(folder) not in (None, worker)  # a fresh worker serves the next request


def test_kopt_compiles_cold_when_workers_are_off_or_the_worker_is_gone(folder, monkeypatch):
    monkeypatch.setenv("KOPT_COMPILE_WORKER", "0")
    assert _ask(folder / "good.py") is None
    (cold,) = compile_sandboxed(folder / "good.py", stages=["ptx"])
    assert cold.name == "add_kernel"
    monkeypatch.delenv("KOPT_COMPILE_WORKER")
    _good(folder)
    _kill_all()  # kill -9 of the whole family: the next call starts another
    assert _marked() == []
    outcome = _good(folder)
    assert json.dumps(outcome["result"]).count("add_kernel") >= 1 and _worker_pid(folder) is not None


def test_the_worker_captures_launches_on_fake_tensors(folder, monkeypatch):
    """After its first answer the worker loads FakeTensorMode, so its children capture a task's launches on fake
    tensors (no storage to fill); a cold compile, which has not loaded it, runs the entry on real inputs."""
    _good(folder)
    path = folder / "fake_only.py"
    path.write_text((ROOT / "examples" / "vector_add.py").read_text().replace(
        "def make_inputs(case, device, seed):\n",
        "def make_inputs(case, device, seed):\n    assert type(torch.empty(1)).__name__ == 'FakeTensor', 'real inputs'\n"))
    outcome = _ask(path)
    assert outcome and outcome["ok"], outcome
    monkeypatch.setenv("KOPT_COMPILE_WORKER", "0")
    with pytest.raises(KoptError, match="real inputs"):
        compile_sandboxed(path, stages=["ptx"])


def test_the_workers_address_covers_every_kopt_module_it_runs(tmp_path):
    """A changed module must never answer through a worker started before the change."""
    from kopt.harness.compile_worker import WORKER_SOURCES

    code = ("import json, sys\nfrom kopt.harness.compile_worker import _warm_up\nfrom kopt.harness.worker import handle\n"
            f"_warm_up()\nhandle({{'op': 'compile', 'task': {str(ROOT / 'examples' / 'strided_scale.py')!r}, "
            "'kw': {'target': 'sm_90', 'stages': ['ptx'], 'cache_dir': None}})\n"
            "print(json.dumps([m.__file__ for m in list(sys.modules.values()) if getattr(m, '__file__', None)]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    package = str(ROOT / "kopt") + "/"
    loaded = {f[len(package):] for f in json.loads(done.stdout.strip().splitlines()[-1]) if f.startswith(package)}
    assert "harness/compile.py" in loaded and loaded <= set(WORKER_SOURCES), loaded - set(WORKER_SOURCES)
