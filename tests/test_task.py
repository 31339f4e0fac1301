"""Task loading: the native format, the KernelBench adapter, and bad files as one clear line."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kopt.errors import TaskError
from kopt.task import load_candidate, load_task

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "tasks"
KOPT = str(Path(sys.executable).parent / "kopt")
GOOD = (ROOT / "examples" / "vector_add.py").read_text()


def _line_of(prefix: str) -> int:
    return next(i for i, line in enumerate(GOOD.splitlines(), 1) if line.startswith(prefix))


REF_LINE, CASES_LINE = _line_of("def reference"), _line_of("CASES =")


def test_examples_load_with_their_kernels_and_cases():
    for name, kernel in [("vector_add", "add_kernel"), ("strided_scale", "scale_rows_kernel"),
                         ("softmax", "softmax_kernel"), ("matmul", "matmul_kernel")]:
        task = load_task(ROOT / "examples" / f"{name}.py")
        assert task.kind == "triton" and task.name == name
        assert list(task.kernels) == [kernel]
        line = task.kernel_lines[kernel]
        assert task.path.read_text().splitlines()[line - 1].startswith(f"def {kernel}(")
        assert len(task.cases) >= 5 and task.small_cases and task.held_out
        assert task.flops and task.bytes_moved
    matmul = load_task(ROOT / "examples" / "matmul.py")
    assert matmul.tolerance("float16") == (1e-2, 1e-2) and matmul.dtype_flops == "fp16"
    assert matmul.tolerance("float32") == (1e-5, 1e-5) and matmul.tolerance("int32") == (0.0, 0.0)


def test_kernelbench_module_loads_through_the_adapter():
    import torch

    task = load_task(FIXTURES / "kb_relu.py")
    assert task.kind == "kernelbench" and len(task.cases) == 1 and "relu_kernel" in task.kernels
    (x,) = task.make_inputs(task.cases[0], "cpu", 3)
    (x2,) = task.make_inputs(task.cases[0], "cpu", 3)
    assert torch.equal(x, x2) and x.abs().sum() > 0
    expected = task.reference(x)
    assert expected.shape == (16, 64) and (expected >= 0).all() and (expected > 0).any()


def test_candidate_keeps_the_tasks_reference_and_cases():
    task = load_task(ROOT / "examples" / "vector_add.py")
    cand = load_candidate(FIXTURES / "off_by_one.py", task)
    assert cand.entry is not task.entry and cand.reference is task.reference and cand.cases == task.cases
    assert "add_kernel" in cand.kernels


@pytest.mark.parametrize("text, expected", [
    (GOOD.replace("def reference(x, y):", "def reference(x, y)"), f":{REF_LINE}: syntax error"),
    (GOOD.replace("def reference(x, y):\n    return x + y\n", ""), "missing reference"),
    (GOOD.replace("def make_inputs(", "def make_inputz("), "missing make_inputs"),
    (GOOD[:GOOD.index("CASES =")] + "CASES = [{'n': 1}, {'n': 2}]\n", f":{CASES_LINE}: CASES has 2 entries"),
    (GOOD.replace("import torch\n", "import torch\nraise RuntimeError('boom')\n"), ":4: importing the task failed"),
])
def test_bad_task_files_raise_one_line_naming_file_and_line(tmp_path, text, expected):
    path = tmp_path / "bad_task.py"
    path.write_text(text)
    with pytest.raises(TaskError) as info:
        load_task(path)
    message = str(info.value)
    assert str(path) in message and expected in message and "\n" not in message


def test_cli_reports_a_bad_task_in_one_line_and_exit_1(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text(GOOD.replace("def reference(x, y):", "def reference(x, y)"))
    for command in (["compile", str(path)], ["validate", str(path)]):
        proc = subprocess.run([KOPT, *command], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "KOPT_DEBUG": "0"}, cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and f"{path}:{REF_LINE}: syntax error" in lines[0] and "Traceback" not in proc.stderr
