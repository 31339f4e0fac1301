"""`kopt runs` in a workspace without runs: listing is not an error, asking for one run is (real CLI subprocesses)."""

import json
import subprocess
import sys

from kopt.rounds.store import RoundsStore


def kopt(*args, cwd):
    return subprocess.run([sys.executable, "-m", "kopt.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_runs_list_with_no_store_says_so_and_exits_0(tmp_path):
    done = kopt("runs", "list", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"no runs in {tmp_path.resolve()}/.kopt yet" in done.stdout and "kopt optimize TASK" in done.stdout
    as_json = kopt("runs", "list", "--json", cwd=tmp_path)
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["items"] == []
    assert not (tmp_path / ".kopt").exists()  # listing creates nothing


def test_runs_list_with_an_empty_store_and_show_of_a_missing_run(tmp_path):
    RoundsStore(tmp_path / ".kopt")
    done = kopt("runs", "list", cwd=tmp_path)
    assert done.returncode == 0 and "no runs in" in done.stdout
    missing = kopt("runs", "show", "nosuchrun", cwd=tmp_path)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr and "nosuchrun" in missing.stderr
    bare = kopt("runs", "show", "X", cwd=tmp_path / ".kopt" / "artifacts")  # a workspace with no store at all
    assert bare.returncode == 1 and "no rounds store in" in bare.stderr
