"""Containment of user code, through real child processes: each hostile behaviour is a task file run by the
worker (run_sandboxed / validate) in every mode this machine has; each mode is held to what it promises."""

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from kopt.harness import containment
from kopt.harness.sandbox import run_in_group, run_sandboxed

ROOT = Path(__file__).resolve().parents[1]
MARKER = f"kopt-containment-test-{uuid.uuid4().hex[:12]}"  # every child of this module carries it in its env


@pytest.fixture(autouse=True, scope="module")
def no_process_left():
    """All this module's children (and theirs) carry MARKER; none may be left once the module is done."""
    os.environ["KOPT_TEST_MARKER"] = MARKER  # a KOPT_ variable: the scrubbed environment keeps it
    yield
    del os.environ["KOPT_TEST_MARKER"]
    time.sleep(0.5)
    left = _marked()
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], f"processes left behind: {left}"


@pytest.fixture(params=containment.MODES)
def mode(request, monkeypatch):
    monkeypatch.setenv("KOPT_SANDBOX", request.param)
    containment._probe.cache_clear()
    containment.mode.cache_clear()
    if containment.mode() != request.param:
        pytest.skip(f"{request.param} does not work on this machine")
    yield request.param
    monkeypatch.delenv("KOPT_SANDBOX")
    containment._probe.cache_clear()
    containment.mode.cache_clear()


def _marked() -> list[int]:
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if MARKER.encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return [pid for pid in found if containment._alive(pid) and pid != os.getpid()]


def _hostile(tmp_path: Path, body: str) -> Path:
    """A task file whose import runs `body`, then fails with what it saw: the worker reports that line."""
    path = tmp_path / "hostile.py"
    path.write_text("import os, socket, subprocess, sys, time\nseen = []\n" + textwrap.dedent(body)
                    + "\nraise RuntimeError('SEEN ' + ' '.join(map(str, seen)))\n")
    return path


def _seen(task: Path) -> str:
    outcome = run_sandboxed("compile", task, timeout_s=120)
    assert "SEEN" in (outcome["message"] or ""), outcome
    return outcome["message"].split("SEEN", 1)[1]


def test_reading_a_secret_in_the_users_home_fails(mode, tmp_path, monkeypatch):
    secret = Path.home() / f".{MARKER}-secret"
    secret.write_text("hunter2")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kopt.toml").write_text('llm_api_key = "hunter2"\n')  # the workspace's settings
    try:
        seen = _seen(_hostile(tmp_path, f"""
            for path in [{str(secret)!r}, os.path.expanduser("~/.ssh/id_rsa"), {str(Path.home() / '.ssh')!r},
                         "kopt.toml"]:
                try:
                    seen.append(repr(open(path).read()) if os.path.isfile(path) else os.listdir(path))
                except OSError as exc:
                    seen.append(type(exc).__name__)
        """))
    finally:
        secret.unlink()
    if mode != "bubblewrap":
        assert "hunter2" in seen  # documented: only bubblewrap hides the home and the workspace's kopt.toml
        return
    assert seen.split() == ["FileNotFoundError"] * 3 + ["''"], seen


def test_writing_outside_the_scratch_dir_fails(mode, tmp_path):
    outside = [tmp_path / "escaped.txt", ROOT / f"{MARKER}-escaped.txt"]
    seen = _seen(_hostile(tmp_path, f"""
        for path in {[str(p) for p in outside]!r} + [os.path.join(os.environ["HOME"], "scratch.txt")]:
            try:
                open(path, "w").write("x")
                seen.append("wrote")
            except OSError as exc:
                seen.append(type(exc).__name__)
    """))
    try:
        if mode != "bubblewrap":
            assert all(p.exists() for p in outside)  # documented: the filesystem is confined by bubblewrap only
            return
        assert not any(p.exists() for p in outside)
        assert seen.split()[-1] == "wrote", seen  # the scratch dir (HOME) is writable
        assert "wrote" not in seen.split()[:-1], seen
    finally:
        for p in outside:
            p.unlink(missing_ok=True)


def test_a_loopback_socket_of_the_host_is_unreachable(mode, tmp_path):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        seen = _seen(_hostile(tmp_path, f"""
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
                seen.append("connected")
            except OSError as exc:
                seen.append(type(exc).__name__)
        """))
    if mode == "none":
        assert "connected" in seen  # documented: no network namespace without bwrap or unshare
        return
    assert "connected" not in seen and seen.strip() in ("ConnectionRefusedError", "OSError", "TimeoutError")


def test_an_api_key_of_the_parent_is_not_visible(mode, tmp_path, monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "KOPT_LLM_API_KEY", "GH_TOKEN"):
        monkeypatch.setenv(name, "sk-" + MARKER)
    seen = _seen(_hostile(tmp_path, f"""
        seen.extend(sorted(k for k, v in os.environ.items() if "sk-" in v) or ["none"])
        seen.append(os.environ["HOME"] == os.environ["TMPDIR"] != {str(Path.home())!r})
    """))
    assert seen.split() == ["none", "True"]


def test_a_child_in_a_new_session_is_gone_after_the_call(mode, tmp_path):
    if mode == "none" and not containment._cgroup_parents().get("pids"):
        pytest.skip("without namespaces or a cgroup a new session escapes (documented)")
    _seen(_hostile(tmp_path, """
        subprocess.Popen(["setsid", "sleep", "1000"])
        time.sleep(0.5)
        seen.append("started")
    """))
    assert _marked() == []


def test_kill_9_of_kopt_leaves_no_child(mode, tmp_path):
    """A real intermediate Python process runs the sandboxed call and is killed -9 mid-call."""
    spawn = mode != "none"  # without a pid namespace a grandchild outlives a kill -9 of kopt (documented)
    task = _hostile(tmp_path, f"""
        if {spawn}:
            subprocess.Popen(["setsid", "sleep", "1000"])
        while True:
            pass
    """)
    before = set(_marked())  # another test's children, still being reaped on a loaded box, are not this call's
    parent = subprocess.Popen([sys.executable, "-c", f"from kopt.harness.sandbox import run_sandboxed; "
                               f"run_sandboxed('compile', {str(task)!r}, timeout_s=600)"])

    def ours() -> set[int]:
        return set(_marked()) - before - {parent.pid}

    try:
        deadline = time.monotonic() + 120
        while len(ours()) < 1 + spawn and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ours(), "the sandboxed child never started"
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 5
    while ours() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sorted(ours()) == []


def test_a_flood_of_output_is_capped_and_costs_the_parent_little_memory(tmp_path):
    """1.5 GB printed: the log keeps 8 MiB plus the tail, the last line still reads, the parent stays small."""
    task = _hostile(tmp_path, """
        line = b"x" * 1023 + b"\\n"
        for _ in range(1536):
            os.write(1, line * 1024)
        print("the very last line", flush=True)
        os._exit(3)  # no result: the failure message reads the log's tail
    """)
    log = tmp_path / "log.txt"
    probe = f"""
import json, resource, subprocess, sys
import torch  # what kopt's parent loads anyway (the validation channel reads tensors): not the flood's cost
from kopt.harness.sandbox import run_in_group, run_sandboxed
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
outcome = run_sandboxed("compile", {str(task)!r}, timeout_s=300)
with open({str(log)!r}, "w") as sink:
    run_in_group([sys.executable, {str(task)!r}], 300, stdout=sink, stderr=sink)
piped = run_in_group([sys.executable, {str(task)!r}], 300, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
print(json.dumps({{"message": outcome["message"], "piped": len(piped.stdout), "piped_tail": piped.stdout[-100:],
                  "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base}}))
"""
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.splitlines()[-1])
    assert "status 3" in result["message"] and "the very last line" in result["message"]
    assert result["peak_kib"] < 200 * 1024, result  # 1.5 GB went through it: the parent grew by less than 200 MiB
    cap = containment.LOG_HEAD + containment.LOG_TAIL + 1024
    assert log.stat().st_size < cap and result["piped"] < cap
    text = log.read_text()
    assert "bytes of output dropped here" in text and text.rstrip().endswith("the very last line")
    assert "the very last line" in result["piped_tail"]


@pytest.mark.skipif(containment._gpu_present(), reason="the address-space limit is for CPU runs (CUDA reserves more)")
def test_a_memory_hog_is_stopped_with_reason_oom(tmp_path, monkeypatch):
    from kopt.harness.validate import validate

    monkeypatch.setenv("KOPT_SANDBOX_MEMORY_MB", "3072")
    source = (ROOT / "examples" / "vector_add.py").read_text()
    hog = tmp_path / "hog.py"
    hog.write_text(source.replace("def entry(", "def _entry(") + "\n\ndef entry(*args):\n"
                   "    hoard = bytearray(6 << 30)\n    return _entry(*args)\n")
    result = validate(ROOT / "examples" / "vector_add.py", hog, timeout_s=300)
    assert not result.ok and result.reason == "oom", (result.reason, result.message)


def test_a_fork_bomb_is_stopped(tmp_path):
    if not containment._cgroup_parents().get("pids") and os.geteuid() == 0:
        pytest.skip("root without a writable pids cgroup: nothing bounds the process count (documented)")
    seen = _seen(_hostile(tmp_path, f"""
        try:
            for _ in range({containment.MAX_PROCS * 4}):
                if os.fork() == 0:
                    time.sleep(1000)
                    os._exit(0)
            seen.append("unbounded")
        except OSError as exc:
            seen.append(type(exc).__name__)
    """))
    assert seen.strip() == "BlockingIOError"
    assert _marked() == []


def test_describe_names_the_mode_in_force(mode):
    line = containment.describe()
    assert line.startswith("sandbox: ") and ("process group" if mode == "none" else mode) in line
    assert "limits: cpu" in line


def test_the_sandbox_in_force_is_bubblewrap_or_the_line_says_why_not():
    """CI installs bubblewrap (make setup): the strong mode must be the one tested there. Anywhere else a weaker
    mode names, in the line kopt prints, what kept the stronger one out."""
    mode, why = containment._probe()
    if os.environ.get("CI"):
        assert mode == "bubblewrap", containment.describe()
    assert mode == "bubblewrap" or (why and f"[{why}]" in containment.describe()), containment.describe()


def test_ncu_style_commands_keep_the_filesystem_and_get_pipes_back(tmp_path):
    """run_in_group's other callers (ncu) write where they were told and read stdout/stderr as text."""
    report = tmp_path / "report.txt"
    proc = run_in_group([sys.executable, "-c", f"open({str(report)!r}, 'w').write('r'); print('out'); "
                         "import sys; print('err', file=sys.stderr); sys.exit(3)"], 60,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr, report.read_text()) == (3, "out\n", "err\n", "r")


def test_a_timeout_kills_the_whole_tree_and_reraises(mode, tmp_path):
    with pytest.raises(subprocess.TimeoutExpired):
        run_in_group(["sh", "-c", "sleep 1000 & setsid sleep 1000 & wait"], 2, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, env=dict(os.environ))
    if mode == "none" and not containment._cgroup_parents().get("pids"):
        return
    assert _marked() == []


def test_rlimits_are_set_in_the_child():
    proc = run_in_group([sys.executable, "-c", "import resource as r; print(r.getrlimit(r.RLIMIT_CORE)[0], "
                         "r.getrlimit(r.RLIMIT_CPU)[0], r.getrlimit(r.RLIMIT_FSIZE)[0])"], 10,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    core, cpu, fsize = map(int, proc.stdout.split())
    assert core == 0 and 10 < cpu <= 10 * (os.cpu_count() or 1) + 10 and fsize == containment.FILE_SIZE



def test_kopt_validate_json_says_which_sandbox_ran(tmp_path):
    kopt = str(Path(sys.executable).parent / "kopt")
    proc = subprocess.run([kopt, "validate", str(ROOT / "examples" / "vector_add.py"), "--json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["sandbox"] == containment.describe()


def test_the_gpu_lock_file_is_shared_with_the_sandbox(mode, tmp_path, monkeypatch):
    """Measuring processes take turns through KOPT_GPU_LOCK (gpulock.py): the child must be able to lock that
    very file, also where /tmp is hidden (the H200 campaign's bench children failed on it, read-only)."""
    lock = Path("/tmp") / f"{MARKER}-gpu.lock"
    monkeypatch.setenv("KOPT_GPU_LOCK", str(lock))
    seen = _seen(_hostile(tmp_path, """
        import fcntl
        with open(os.environ["KOPT_GPU_LOCK"], "a") as held:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held.write("child")
            seen.append("locked")
    """))
    try:
        assert seen.split() == ["locked"], seen
        assert lock.read_text().endswith("child")  # the same file as the parent's, not a private copy
    finally:
        lock.unlink(missing_ok=True)
