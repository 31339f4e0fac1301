"""A sandboxed compile ignores the caller's TRITON_INTERPRET=1 (set by anyone debugging with the interpreter, or by
an in-process CPU validation): through the warm worker and cold alike it still returns the compiled kernels, where
an interpreted task would launch no kernel to compile and `ask --kernel` would come back without a single fact."""

from pathlib import Path

import pytest

from kopt.harness.compile import compile_sandboxed

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("worker", ["1", "0"])
def test_compile_sandboxed_compiles_under_triton_interpret(tmp_path, monkeypatch, worker):
    task = tmp_path / f"vector_add_{worker}.py"
    task.write_text((ROOT / "examples" / "vector_add.py").read_text())
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("KOPT_COMPILE_WORKER", worker)
    kernels = compile_sandboxed(task, stages=["ptx"], timeout_s=240)
    assert [k.name for k in kernels] == ["add_kernel"]
    assert "ld.global.v4.b32" in kernels[0].asm["ptx"]
