"""Runs you can stop: Ctrl-C in `kopt optimize` marks the run `interrupted` (not `running`) and prints the resume
command; `--resume RUN --more N` then runs N rounds more than the run has."""

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from kopt.rounds.store import RoundsStore

ROOT = Path(__file__).resolve().parents[1]
KOPT = [sys.executable, "-m", "kopt.cli"]


def _committed(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT COUNT(*) FROM rounds").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_ctrl_c_marks_the_run_interrupted_and_more_adds_rounds(tmp_path):
    task = tmp_path / "vector_add.py"
    shutil.copy(ROOT / "examples/vector_add.py", task)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "KOPT_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(KOPT + ["optimize", str(task), "--rounds", "6", "--proposer", "recipes"], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    db = tmp_path / ".kopt" / "rounds.sqlite"
    deadline = time.monotonic() + 240
    while _committed(db) < 1 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert _committed(db) >= 1 and proc.poll() is None, "no round committed while the run went on"
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C sends: the terminal's whole foreground process group
    out, err = proc.communicate(timeout=120)

    store = RoundsStore(tmp_path / ".kopt")
    (run,) = store.runs()
    done = len(store.rounds(run.run_id))
    store.close()
    assert proc.returncode == 130, err[-2000:]
    assert run.status == "interrupted" and 1 <= done < 6
    assert f"kopt optimize --resume {run.run_id}" in err and "Traceback" not in err

    more = subprocess.run(KOPT + ["optimize", "--resume", run.run_id, "--more", "1", "--json"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert more.returncode == 0, more.stderr[-2000:]
    summary = json.loads(more.stdout)
    assert summary["status"] == "done" and len(summary["rounds"]) == done + 1
    assert summary["stop_reason"] == f"round budget spent ({done + 1} rounds)"


def test_more_needs_resume_and_excludes_rounds(tmp_path):
    cases = ((["optimize", str(ROOT / "examples/vector_add.py"), "--more", "2"], "--more needs --resume"),
             (["optimize", "--resume", "r1", "--rounds", "3", "--more", "2"], "give either --rounds (the run's total)"))
    for args, needle in cases:
        done = subprocess.run(KOPT + args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and needle in done.stderr and "Traceback" not in done.stderr, done.stderr
