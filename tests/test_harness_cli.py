"""The harness commands as a user runs them: real `kopt` subprocesses."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KOPT = str(Path(sys.executable).parent / "kopt")


def _kopt(*args, cwd):
    return subprocess.run([KOPT, *args], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env={**os.environ, "KOPT_HOME": str(cwd / "home")})


def test_compile_prints_ptx_and_json(tmp_path):
    proc = _kopt("compile", str(ROOT / "examples" / "vector_add.py"), "--stage", "ptx", "--target", "sm_90", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "ld.global.v4" in proc.stdout and "add_kernel" in proc.stdout
    assert list((tmp_path / ".kopt" / "cache" / "compile").glob("*.json"))  # the workspace cache
    proc = _kopt("compile", str(ROOT / "examples" / "matmul.py"), "--stage", "sass", "--json", cwd=tmp_path)
    (kernel,) = json.loads(proc.stdout)["items"]
    assert kernel["name"] == "matmul_kernel" and "HGMMA" in kernel["asm"]["sass"] and list(kernel["asm"]) == ["sass"]


def test_compile_trajectory_lists_passes(tmp_path):
    proc = _kopt("compile", str(ROOT / "examples" / "vector_add.py"), "--trajectory", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "ConvertTritonToTritonGPU" in proc.stdout and "passes, in order" in proc.stdout
    assert "IR Dump" not in proc.stdout + proc.stderr


def test_validate_json_and_failure_exit(tmp_path):
    proc = _kopt("validate", str(ROOT / "examples" / "softmax.py"), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["ok"] and result["device"] == "cpu" and len(result["cases"]) == 5
    proc = _kopt("validate", str(ROOT / "examples" / "vector_add.py"), "--candidate",
                 str(ROOT / "tests" / "fixtures" / "tasks" / "off_by_one.py"), cwd=tmp_path)
    assert proc.returncode == 1 and "FAIL" in proc.stdout
    assert proc.stderr.count("\n") == 1 and "incorrect" in proc.stderr


def test_bench_without_a_gpu_is_one_clear_line(tmp_path):
    proc = _kopt("bench", str(ROOT / "examples" / "vector_add.py"), cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.strip() == "kopt: error: bench needs a CUDA GPU and none is visible (compile and validate work without one)"


def test_bad_case_index_and_target_are_user_errors(tmp_path):
    proc = _kopt("compile", str(ROOT / "examples" / "vector_add.py"), "--case", "9", cwd=tmp_path)
    assert proc.returncode == 1 and "no case 9" in proc.stderr
    proc = _kopt("compile", str(ROOT / "examples" / "vector_add.py"), "--target", "volta", cwd=tmp_path)
    assert proc.returncode == 1 and "unknown target 'volta'" in proc.stderr
