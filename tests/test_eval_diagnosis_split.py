"""`kopt eval diagnosis --split`: a blind set's held-out half is scored as totals only, its tuning half in full."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

CASES = Path(__file__).resolve().parents[1] / "evals" / "diagnosis"


def _eval(manifest: Path, split: str, *extra: str) -> tuple[dict, str]:
    proc = subprocess.run([sys.executable, "-m", "kopt.cli", "eval", "diagnosis", "--manifest", str(manifest),
                           "--split", split, "--no-gpu", "--json", *extra], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stdout


@pytest.mark.slow
def test_the_test_split_reports_totals_and_no_case(tmp_path):
    cases = []
    for name, split in (("add_small_block", "tune"), ("softmax_small_block", "test")):
        shutil.copy(CASES / f"{name}.py", tmp_path / f"{name}.py")
        cases.append({"name": name, "op": "x", "finding": "small_block", "level": "L1", "split": split})
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(yaml.safe_dump({"cases": cases}))

    sealed, text = _eval(manifest, "test")
    assert sealed["summary"]["auto"]["all"]["cases"] == 1 and sealed["rows"] == [] and sealed["unverified"] == 1
    assert "softmax_small_block" not in text

    tune, _ = _eval(manifest, "tune")
    assert {r["case"] for r in tune["rows"]} == {"add_small_block"} and tune["unverified"] == ["add_small_block"]
    # as text: no case is H200-verified yet, so that subset's table row has no rates (it once crashed on None)
    text = subprocess.run([sys.executable, "-m", "kopt.cli", "eval", "diagnosis", "--manifest", str(manifest),
                           "--split", "tune", "--no-gpu"], capture_output=True, text=True, timeout=600)
    assert text.returncode == 0, text.stderr
    assert any("h200-verified" in line and line.count(" - ") >= 1 for line in text.stdout.splitlines()), text.stdout


@pytest.mark.slow
def test_workers_score_what_one_process_scores(tmp_path):
    """Cases diagnosed in two worker processes (spawned, as CUDA needs) give the rows and totals of the serial run."""
    cases = []
    for name, finding in (("add_small_block", "small_block"), ("softmax_small_block", "small_block"),
                          ("gelu_modulo", "modulo_indexing")):
        shutil.copy(CASES / f"{name}.py", tmp_path / f"{name}.py")
        cases.append({"name": name, "op": "x", "finding": finding, "level": "L1", "split": "tune"})
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(yaml.safe_dump({"cases": cases}))

    serial, _ = _eval(manifest, "tune")
    parallel, _ = _eval(manifest, "tune", "--workers", "2")
    drop = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]
    assert len(serial["rows"]) == 6 and drop(parallel["rows"]) == drop(serial["rows"])
    assert parallel["summary"] == serial["summary"]
