"""The rounds store on disk: commits, artifacts, a locked store, and a real `kill -9` mid-round
followed by `--resume` that goes on from the last committed round without repeating a hypothesis."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kopt.errors import KoptError
from kopt.rounds.store import Round, RoundsStore

ROOT = Path(__file__).resolve().parents[1]


def make_round(run_id: str, n: int, **kw) -> Round:
    base = dict(run_id=run_id, n=n, level_reached="L1", hypothesis=f"h{n}", hypothesis_key=f"f/p{n}",
                finding_ids=["untuned_config"], pattern_id=f"p{n}", proposer="recipe:autotune", candidate=None,
                outcome="untimed")
    return Round(**{**base, **kw})


def test_runs_rounds_and_artifacts_round_trip(tmp_path):
    store = RoundsStore(tmp_path / ".kopt")
    run = store.create_run(tmp_path / "t.py", "source", {"rounds": 3, "proposer": "auto"}, [1.0, 2.0],
                           {"available": True, "reason": "x", "roofline": [0.5]}, {"cases": [{"n": 1}]})
    digest = store.put("candidate")
    assert store.put("candidate") == digest and store.get(digest) == "candidate"
    store.add_round(make_round(run.run_id, 1, candidate=digest, case_times=[0.5, 1.0], speedup_initial=2.0,
                               evidence={"findings": store.put_json({"a": 1})}, roofline=[0.7, None]))
    store.close()
    again = RoundsStore(tmp_path / ".kopt")
    assert again.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rnd = again.round(run.run_id, 1)
    assert rnd.case_times == [0.5, 1.0] and rnd.roofline == [0.7, None] and rnd.speedup_initial == 2.0
    assert json.loads(again.get(rnd.evidence["findings"])) == {"a": 1}
    assert again.run(run.run_id[:12]).run_id == run.run_id  # a unique prefix is enough
    with pytest.raises(KoptError, match="no run 'nope'"):
        again.run("nope")
    with pytest.raises(KoptError, match="already committed"):  # a round number is committed once
        again.add_round(make_round(run.run_id, 1))


def test_a_locked_store_is_a_clear_error_and_loses_nothing(tmp_path):
    store = RoundsStore(tmp_path / ".kopt")
    run = store.create_run(tmp_path / "t.py", "s", {"rounds": 1}, [None], {"available": False, "reason": "", "roofline": []}, {})
    store.add_round(make_round(run.run_id, 1))
    blocker = sqlite3.connect(tmp_path / ".kopt" / "rounds.sqlite", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    store.db.execute("PRAGMA busy_timeout = 200")
    with pytest.raises(KoptError, match="locked by another kopt process; committed rounds are intact"):
        store.add_round(make_round(run.run_id, 2))
    blocker.execute("ROLLBACK")
    assert [r.n for r in store.rounds(run.run_id)] == [1]


def test_a_full_disk_stops_cleanly_with_committed_rounds_intact(tmp_path):
    """RLIMIT_FSIZE makes every write past 64 KB fail the way a full disk does (EFBIG / SQLITE_IOERR)."""
    import resource

    store = RoundsStore(tmp_path / ".kopt")
    run = store.create_run(tmp_path / "t.py", "s", {"rounds": 3}, [None], {"available": False, "reason": "", "roofline": []}, {})
    store.add_round(make_round(run.run_id, 1, candidate=store.put("first candidate")))
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, hard))
    try:
        with pytest.raises(KoptError, match="write artifact: File too large; committed rounds are intact"):
            store.put("x" * 200_000)
        with pytest.raises(KoptError, match="commit round 2: .*committed rounds are intact"):
            store.add_round(make_round(run.run_id, 2, hypothesis="h" * 200_000))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert not list((tmp_path / ".kopt" / "artifacts").rglob("*.tmp"))  # no half-written artifact left
    reopened = RoundsStore(tmp_path / ".kopt")
    assert [r.n for r in reopened.rounds(run.run_id)] == [1]
    assert reopened.get(reopened.round(run.run_id, 1).candidate) == "first candidate"
    reopened.add_round(make_round(run.run_id, 2))  # space is back: the run goes on


def _committed(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            return conn.execute("SELECT COUNT(*) FROM rounds").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _sandbox_child_running(ancestor: int) -> bool:
    """Is a sandbox worker below `ancestor` (the optimize run) alive? Read from /proc, Linux only; the other xdist
    worker (`make test` runs two) or another test on this machine may run its own."""
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if b"kopt.harness.worker" not in (proc / "cmdline").read_bytes():
                continue
            pid = int(proc.name)
            while pid > 1 and pid != ancestor:
                pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])  # its parent
            if pid == ancestor:
                return True
        except (OSError, ValueError, IndexError):
            continue
    return False


def test_kill_9_mid_round_then_resume(tmp_path):
    task = tmp_path / "vector_add.py"
    shutil.copy(ROOT / "examples/vector_add.py", task)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "KOPT_HOME": str(tmp_path / "home")}
    kopt = [sys.executable, "-m", "kopt.cli"]
    proc = subprocess.Popen(kopt + ["optimize", str(task), "--rounds", "2", "--proposer", "recipes", "--json"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    db = tmp_path / ".kopt" / "rounds.sqlite"
    deadline = time.monotonic() + 240
    while _committed(db) < 1 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert _committed(db) == 1, proc.stderr.read().decode() if proc.poll() is not None else "no round committed in time"
    # Kill inside round 2, while its candidate runs in the sandbox child: a fixed sleep raced a fast round.
    while not _sandbox_child_running(proc.pid) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()

    store = RoundsStore(tmp_path / ".kopt")
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    (run,) = store.runs()
    assert run.status == "running"  # killed: never marked done
    first = store.rounds(run.run_id)
    assert [r.n for r in first] == [1]
    store.close()

    out = subprocess.run(kopt + ["optimize", "--resume", run.run_id, "--json"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    rounds = summary["rounds"]
    assert [r["n"] for r in rounds] == [1, 2]
    from kopt.output import iso_dates

    assert rounds[0] == iso_dates(first[0].to_dict())  # the committed round is untouched (--json dates are ISO)
    keys = [r["hypothesis_key"] for r in rounds]
    assert len(set(keys)) == 2, keys  # tried hypotheses are not repeated
    assert summary["stop_reason"] == "round budget spent (2 rounds)"

    again = subprocess.run(kopt + ["optimize", "--resume", run.run_id[:15], "--json"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=120)
    assert json.loads(again.stdout)["rounds"] == rounds  # nothing left in the budget: no new round


def test_resume_refuses_a_changed_task(tmp_path):
    from kopt.config import load_settings
    from kopt.optimize import optimize

    task = tmp_path / "t.py"
    task.write_text("x = 1\n")
    store = RoundsStore(tmp_path / ".kopt")
    run = store.create_run(task, "x = 0\n", {"rounds": 2, "proposer": "recipes"}, [None],
                           {"available": False, "reason": "", "roofline": []}, {})
    store.close()
    with pytest.raises(KoptError, match="changed .* since run"):
        optimize(resume=run.run_id, settings=load_settings(tmp_path))
