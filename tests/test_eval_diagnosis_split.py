"""`kopt eval diagnosis --split`: a blind set's held-out half is scored as totals only, its tuning half in full."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

CASES = Path(__file__).resolve().parents[1] / "evals" / "diagnosis"


def _eval(manifest: Path, split: str) -> tuple[dict, str]:
    proc = subprocess.run([sys.executable, "-m", "kopt.cli", "eval", "diagnosis", "--manifest", str(manifest),
                           "--split", split, "--no-gpu", "--json"], capture_output=True, text=True, timeout=600)
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
