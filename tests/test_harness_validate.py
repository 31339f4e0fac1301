"""Validation and the sandbox, through real child processes running the Triton interpreter on CPU."""

import math
import time
from pathlib import Path

import pytest
import torch

from kopt.errors import TaskError
from kopt.harness.sandbox import run_sandboxed
from kopt.harness.validate import compare, poisoned_allocations, validate

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "tasks"
VECTOR_ADD = ROOT / "examples" / "vector_add.py"


@pytest.mark.parametrize("name", ["vector_add", "strided_scale", "softmax", "matmul"])
def test_examples_pass_on_the_interpreter(name):
    result = validate(ROOT / "examples" / f"{name}.py", timeout_s=300)
    assert result.ok, result.message
    assert result.device == "cpu" and len(result.cases) == 5 and all(c.ok for c in result.cases)
    assert len({c.seed for c in result.cases}) == 5
    assert result.held_out_note  # SMALL_CASES stand in for the GPU-sized held-out shapes


def test_interpreter_catches_a_planted_off_by_one():
    result = validate(FIXTURES / "off_by_one.py", seed=11)
    assert not result.ok and result.reason == "incorrect"
    assert "NaN/Inf where the reference is finite" in result.message and "unwritten output" in result.message
    assert all(not c.ok for c in result.cases)
    assert all(c.seed == 11 + i for i, c in enumerate(result.cases))


def test_candidate_is_checked_against_the_tasks_reference():
    assert validate(VECTOR_ADD, FIXTURES / "off_by_one.py").reason == "incorrect"
    assert validate(VECTOR_ADD, VECTOR_ADD).ok


def test_kernelbench_modelnew_matches_model_with_copied_weights():
    result = validate(FIXTURES / "kb_relu.py")
    assert result.ok, result.message
    assert len(result.cases) == 1 and result.cases[0].max_abs < 1e-5


def test_sandbox_ends_a_hanging_kernel_within_its_limit():
    start = time.monotonic()
    result = validate(FIXTURES / "hang.py", timeout_s=8)
    assert time.monotonic() - start < 8 + 3
    assert not result.ok and result.reason == "timeout" and "8 s" in result.message


def test_sandbox_reports_a_segfault_as_a_crash():
    result = validate(VECTOR_ADD, FIXTURES / "segfault.py", timeout_s=60)
    assert not result.ok and result.reason == "crash" and "SIGSEGV" in result.message


def test_an_exception_in_candidate_code_names_its_line(tmp_path):
    text = (ROOT / "examples" / "vector_add.py").read_text()
    bad = tmp_path / "cand.py"
    bad.write_text(text.replace("    n = out.numel()\n", "    n = out.numel() // undefined_var\n"))
    line = next(i for i, l in enumerate(bad.read_text().splitlines(), 1) if "undefined_var" in l)
    result = validate(VECTOR_ADD, bad)
    assert result.reason == "exception" and result.message.startswith(f"{bad}:{line}: NameError")


def test_a_broken_task_file_raises_task_error_and_a_broken_candidate_fails(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("def entry(:\n")
    with pytest.raises(TaskError, match="broken.py:1: syntax error"):
        validate(broken)
    result = validate(VECTOR_ADD, broken)
    assert not result.ok and result.reason == "exception" and "syntax error" in result.message


def test_run_sandboxed_rejects_unknown_ops_without_raising():
    outcome = run_sandboxed("nonsense", VECTOR_ADD, timeout_s=60)
    assert outcome["ok"] is False and outcome["reason"] == "exception" and "nonsense" in outcome["message"]


def test_poisoned_allocations_fill_floats_with_nan_and_ints_with_a_sentinel():
    with poisoned_allocations():
        f = torch.empty(4)
        i = torch.empty_like(torch.zeros(3, dtype=torch.int32))
        s = torch.empty_strided((2, 2), (2, 1), dtype=torch.float16)
        n = f.new_empty(5)
    assert torch.isnan(f).all() and torch.isnan(s).all() and torch.isnan(n).all()
    assert (i == torch.iinfo(torch.int32).max).all()
    assert not torch.isnan(torch.empty(4).fill_(0)).any()  # restored


def _tol(dtype):
    return {"float32": (1e-5, 1e-5), "float16": (1e-3, 1e-3)}.get(dtype, (0.0, 0.0))


def test_compare_applies_dtype_tolerances_and_catches_nan_shape_and_dtype():
    ref = torch.tensor([1.0, -2.0, 3.0])
    assert compare(ref + 5e-6, ref, _tol)["ok"]
    bad = compare(ref + torch.tensor([0.0, 0.0, 1e-3]), ref, _tol)
    assert not bad["ok"] and "1 of 3 elements" in bad["reason"] and "(2,)" in bad["reason"]
    assert math.isclose(bad["max_abs"], 1e-3, rel_tol=1e-3)
    nan = compare(torch.tensor([1.0, float("nan"), 3.0]), ref, _tol)
    assert not nan["ok"] and "NaN/Inf" in nan["reason"] and "(1,)" in nan["reason"]
    assert compare(torch.tensor([1.0, float("inf")]), torch.tensor([1.0, float("inf")]), _tol)["ok"]
    assert "expected (3,)" in compare(ref[:2], ref, _tol)["reason"]
    assert "torch.float16" in compare(ref.half(), ref, _tol)["reason"]
    assert not compare(torch.tensor([1, 2]), torch.tensor([1, 3]), _tol)["ok"]
    assert "2 outputs" in compare((ref, ref), ref, _tol)["reason"]


def test_the_channel_reads_data_only_and_stops_at_a_forged_frame():
    import io
    import pickle
    import struct

    from kopt.harness.channel import read_frames, write_frame

    stream = io.BytesIO()
    write_frame(stream, {"out": torch.ones(3), "launches": ["add_kernel"]})
    forged = pickle.dumps(TaskError("pickled objects run code when loaded"), protocol=2)
    stream.write(struct.pack("<Q", len(forged)) + forged)
    stream.seek(0)
    frames, note = read_frames(stream)
    assert len(frames) == 1 and torch.equal(frames[0]["out"], torch.ones(3))
    assert note == "an unreadable frame (UnpicklingError)"


def test_a_candidate_that_ends_early_with_status_0_is_a_cheat_not_a_pass(tmp_path):
    text = VECTOR_ADD.read_text()
    quitter = tmp_path / "quitter.py"
    quitter.write_text(text.replace("    return out\n", "    if n > 1:\n        raise SystemExit(0)\n    return out\n", 1))
    import kopt.harness.integrity

    assert validate(VECTOR_ADD, quitter).cheat == "denied_name"  # the static check sees it first
    original = kopt.harness.integrity.check_file
    kopt.harness.integrity.check_file = lambda *a, **k: None
    try:
        result = validate(VECTOR_ADD, quitter, seed=3)
    finally:
        kopt.harness.integrity.check_file = original
    assert not result.ok and result.reason == "cheat" and result.cheat == "missing_outputs"
    assert "after 2 of 10 outputs" in result.message  # both calls of the first shape, then the exit


def test_a_gpu_out_of_memory_in_kopts_own_compare_falls_back_to_the_cpu(monkeypatch):
    """A busy GPU (a campaign's other jobs) must not turn a correct candidate into an `incorrect` one."""
    import kopt.harness.validate as v

    def busy() -> str:
        raise torch.OutOfMemoryError("CUDA out of memory (test)")

    monkeypatch.setattr(v, "_compare_device", busy)
    x = torch.randn(64)
    assert v.safe_compare(x, x.clone(), lambda dtype: (1e-6, 1e-6))["ok"]
    assert not v.safe_compare(x + 1, x, lambda dtype: (1e-6, 1e-6))["ok"]
