"""A child whose outputs pass the limit on what it may write gets one clear line, not a traceback: the real
validate() of a task on the interpreter, with the containment's file-size limit lowered to 1 MiB."""

import textwrap

from kopt.harness import containment
from kopt.harness.validate import validate

TASK = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    def entry(x):
        y = torch.empty_like(x)
        copy_kernel[(triton.cdiv(x.numel(), 1 << 16),)](x, y, x.numel(), BLOCK=1 << 16)
        return y

    def reference(x):
        return x.clone()

    def make_inputs(case, device, seed):
        g = torch.Generator().manual_seed(seed)
        return (torch.randn(case["n"], generator=g).to(device),)

    CASES = [{"n": 1 << 18}]  # 1 MiB of float32 a call; validation makes several calls
    FEW_CASES = "a test of the output channel: one shape is enough"
    SMALL_CASES = CASES
''')


def test_outputs_past_the_file_limit_fail_with_one_clear_line(tmp_path, monkeypatch):
    task = tmp_path / "copy.py"
    task.write_text(TASK)
    monkeypatch.setattr(containment, "FILE_SIZE", 1 << 20)
    result = validate(task)
    assert not result.ok and result.reason == "crash"
    assert "the outputs passed the 1 MiB a sandboxed child may write" in result.message
    assert "Traceback" not in result.message and "File \"" not in result.message


def test_the_same_task_passes_under_the_real_limit(tmp_path):
    task = tmp_path / "copy.py"
    task.write_text(TASK)
    assert validate(task).ok
