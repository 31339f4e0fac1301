"""Bench on a real GPU (skipped without CUDA; run on the H200)."""

from pathlib import Path

import pytest
import torch

from kopt.harness.bench import bench
from kopt.harness.validate import validate

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


def test_examples_validate_on_cuda_including_held_out():
    for name in ("vector_add", "softmax", "matmul"):
        result = validate(ROOT / "examples" / f"{name}.py")
        assert result.ok and result.device == "cuda" and any(c.held_out for c in result.cases), result.message


def test_bench_reports_kernel_time_on_the_roofline(tmp_path, monkeypatch):
    monkeypatch.setenv("KOPT_HOME", str(tmp_path))
    result = bench(ROOT / "examples" / "vector_add.py", cases=[0])
    assert result.ok, result.message
    (case,) = result.cases
    assert 0 < case.kernel_ms <= case.event_ms * 1.05 and case.runs >= 25 and case.input_sets >= 2
    assert list(case.kernels) == ["add_kernel"] and 0 < case.roofline_fraction <= 1.1
    assert result.ceilings["copy_gbps"] > 500 and (tmp_path / "ceilings.json").is_file()
