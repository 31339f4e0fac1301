"""`kopt diagnose` and `kopt eval diagnosis` as a user runs them (real subprocesses, real compiles)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def kopt(args, tmp_path, timeout=300):
    env = {**os.environ, "KOPT_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "kopt.cli", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=timeout)


def test_diagnose_json_and_table(tmp_path):
    done = kopt(["diagnose", "evals/diagnosis/bias_rows_unspecialized.py", "--no-gpu", "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    d = json.loads(done.stdout)
    assert d["findings"][0]["id"] == "misaligned_access" and d["findings"][0]["level"] == "L3"
    assert {r["level"]: r["status"] for r in d["levels"]} == {"L1": "used", "L2": "skipped", "L3": "used",
                                                             "L4": "not_needed"}
    table = kopt(["diagnose", "evals/diagnosis/bias_rows_unspecialized.py", "--no-gpu", "--level", "L1"], tmp_path)
    assert table.returncode == 0 and "--level L1" in table.stdout and "untuned_config" in table.stdout


def test_diagnose_bad_input(tmp_path):
    missing = kopt(["diagnose", "nope.py"], tmp_path)
    assert missing.returncode == 1 and "nope.py: no such task file" in missing.stderr
    broken = tmp_path / "broken.py"
    broken.write_text("import triton\n@triton.jit\ndef k(x:\n    pass\n")
    done = kopt(["diagnose", str(broken), "--json"], tmp_path)
    d = json.loads(done.stdout)
    assert done.returncode == 1 and d["kind"] == "compile"  # the findings that could be made come with the error
    assert d["findings"][0]["id"] == "compile_failure" and "broken.py:3" in d["findings"][0]["message"]
    assert all(r["status"] == "not_needed" for r in d["levels"][1:])


def test_eval_diagnosis_scores_cases(tmp_path):
    names = ["matmul_fp32_ieee", "transpose_strided", "matmul_fp16_upcast", "col_sum_strided"]  # the last is excluded
    cases_dir = ROOT / "evals" / "diagnosis"
    manifest = yaml.safe_load((cases_dir / "manifest.yaml").read_text())
    cases = [c for c in manifest["cases"] if c["name"] in names]
    next(c for c in cases if c["name"] == "matmul_fp16_upcast").pop("h200_speedup")  # as before it was timed
    work = tmp_path / "diagnosis"
    work.mkdir()
    for n in names:
        for suffix in (".py", "_fixed.py"):
            shutil.copy(cases_dir / f"{n}{suffix}", work)
    (work / "manifest.yaml").write_text(yaml.safe_dump({"cases": cases}))
    args = ["eval", "diagnosis", "--no-gpu", "--manifest", str(work / "manifest.yaml")]
    done = kopt([*args, "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["summary"]["auto"]["all"] == {"cases": 3, "top1": 1.0, "top3": 1.0}
    assert report["summary"]["auto"]["h200-verified"]["cases"] == 2 and report["unverified"] == ["matmul_fp16_upcast"]
    assert report["summary"]["L1"]["truth L1"]["top1"] == 1.0 and not report["gpu_evidence"]
    rows = {(r["case"], r["mode"]): r for r in report["rows"]}
    # its strided walk is grounded at L1 since every case's runtime stride (2048-16384) is known never to be 1
    assert rows[("transpose_strided", "auto")]["stopped_at"] == "L1"
    assert not rows[("matmul_fp16_upcast", "auto")]["h200_verified"] and rows[("matmul_fp32_ieee", "L1")]["h200_verified"]
    table = kopt(args, tmp_path)
    assert table.returncode == 0 and "not yet H200-verified" in table.stdout and "matmul_fp16_upcast" in table.stdout
    assert "miss (auto): transpose_strided" not in table.stdout
