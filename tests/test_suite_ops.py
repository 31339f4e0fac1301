"""The operator suite (evals/suite/): every task's initial kernel agrees with its PyTorch reference
on the Triton CPU interpreter, on its SMALL_CASES and on shrunken copies of its HELD_OUT shapes, and
every task file carries the metadata a campaign needs (family, 5 GPU cases with odd sizes, roofline).

Two child processes (this file, run as a script, with TRITON_INTERPRET=1) check the operators, each taking the next
unchecked one when it is done, so the two stay busy whatever each operator costs (two fixed halves left one child
with twice the other's work); one bad kernel cannot poison the others: a child that crashes or hangs fails the
operator it was on, and a fresh child goes on with the rest."""

from __future__ import annotations

import json
import math
import os
import queue
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parents[1] / "evals" / "suite"
OPS = sorted(p.stem for p in SUITE.glob("*.py") if not p.name.startswith("_"))
FAMILIES = {"elementwise", "reduction", "norm", "softmax", "matmul", "attention", "conv", "scan", "gather",
            "scatter", "transpose", "pooling", "quant", "histogram", "loss", "misc"}
REQUIRED_FAMILIES = FAMILIES  # the suite must cover every family at least once
CHILDREN = 2
OP_TIMEOUT_S = 300  # one operator on the interpreter (the slowest takes ~10 s of CPU); a child over it is killed
MAX_SMALL_PRODUCT = 50_000


def shrink(case: dict, uses_dot: bool) -> dict:
    """A held-out case made interpreter-sized: sizes over 64 become 17..63, then the largest of those is
    halved (kept odd) until the case has at most MAX_SMALL_PRODUCT size units; small sizes (heads, head
    dims, taps, groups) stay. The Triton 3.6 interpreter multiplies bf16 bit patterns in tl.dot (it
    stores bf16 as uint16), so a kernel with tl.dot is checked in fp16 there; the GPU runs bf16 cases."""
    sizes = {k: v for k, v in case.items() if isinstance(v, int) and not isinstance(v, bool)}
    big = {k: 17 + v % 47 for k, v in sizes.items() if v > 64}
    small = {**case, **big}

    def product() -> int:
        return math.prod(v for k, v in small.items() if k in sizes)

    while big and product() > MAX_SMALL_PRODUCT and max(small[k] for k in big) > 3:
        key = max(big, key=lambda k: small[k])
        small[key] = max(3, small[key] // 2) | 1
    if uses_dot and small.get("dtype") == "bfloat16":
        small["dtype"] = "float16"
    return small


def _compare(task, out, ref) -> list[str]:
    import torch

    outs = out if isinstance(out, tuple) else (out,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    if len(outs) != len(refs):
        return [f"entry returned {len(outs)} outputs, reference {len(refs)}"]
    errors = []
    for i, (o, r) in enumerate(zip(outs, refs)):
        if o.dtype != r.dtype or o.shape != r.shape:
            errors.append(f"output {i}: {o.dtype}{tuple(o.shape)} vs reference {r.dtype}{tuple(r.shape)}")
            continue
        name = str(o.dtype).removeprefix("torch.")
        atol, rtol = task.tolerance(name)
        if o.is_floating_point() and not torch.isfinite(o).all():
            errors.append(f"output {i}: NaN/Inf")
            continue
        try:
            torch.testing.assert_close(o, r, atol=atol, rtol=rtol, equal_nan=False)
        except AssertionError as exc:
            errors.append(f"output {i} ({name}, atol={atol}, rtol={rtol}): {str(exc).splitlines()[1:4]}")
    return errors


def check_metadata(task) -> list[str]:
    m = task.module
    errors = []
    family = getattr(m, "FAMILY", None)
    if family not in FAMILIES:
        errors.append(f"FAMILY={family!r} is not one of the families")
    elif family not in (m.__doc__ or ""):
        errors.append("the module docstring does not name the family")
    if len(task.cases) != 5:
        errors.append(f"{len(task.cases)} CASES, want 5")
    if len(task.held_out) != 2:
        errors.append(f"{len(task.held_out)} HELD_OUT, want 2")
    if not task.small_cases or not 2 <= len(task.small_cases) <= 3:
        errors.append("SMALL_CASES must hold 2-3 tiny shapes")
    sizes = [v for c in task.cases for v in c.values() if isinstance(v, int) and v > 1]
    if not any(v & (v - 1) for v in sizes):
        errors.append("no CASE has a non-power-of-two size")
    for case in task.cases + task.held_out:
        for fn in (task.flops, task.bytes_moved):
            value = fn(case) if fn else None
            if not isinstance(value, int) or value <= 0:
                errors.append(f"{getattr(fn, '__name__', 'flops/bytes_moved')}({case}) = {value!r}")
    if family in ("matmul", "attention") and task.dtype_flops not in ("fp16", "bf16", "fp32", "tf32"):
        errors.append(f"DTYPE_FLOPS={task.dtype_flops!r}")
    return errors


def check_op(name: str) -> dict:
    """Child-process body for one operator; any exception becomes an error of that operator."""
    try:
        return _check_op(name)
    except Exception as exc:  # report, then go on with the next operator
        return {"op": name, "errors": [f"{type(exc).__name__}: {exc}"[:1500]]}


def _check_op(name: str) -> dict:
    """Load the task, check metadata, run entry vs reference on the interpreter."""
    import torch

    from kopt.task import load_task

    task = load_task(SUITE / f"{name}.py")
    errors = check_metadata(task)
    uses_dot = "tl.dot(" in task.path.read_text()
    cases = [("small", c) for c in task.small_cases or []] + [("held_out", shrink(c, uses_dot)) for c in task.held_out]
    for seed, (kind, case) in enumerate(cases):
        inputs = task.make_inputs(case, "cpu", seed)
        again = task.make_inputs(case, "cpu", seed)
        if not all(torch.equal(a, b) for a, b in zip(inputs, again) if isinstance(a, torch.Tensor)):
            errors.append(f"{kind} {case}: make_inputs is not deterministic for a seed")
        if any(isinstance(a, torch.Tensor) and a.is_floating_point() and (a == 0).all() for a in inputs):
            errors.append(f"{kind} {case}: an input is all zeros")
        originals = [a.clone() if isinstance(a, torch.Tensor) else a for a in inputs]
        out = task.entry(*inputs)
        if not all(torch.equal(a, b) for a, b in zip(inputs, originals) if isinstance(a, torch.Tensor)):
            errors.append(f"{kind} {case}: entry modified its inputs")
        ref = task.reference(*originals)
        errors += [f"{kind} {case}: {e}" for e in _compare(task, out, ref)]
    return {"op": name, "family": getattr(task.module, "FAMILY", None), "errors": errors}


class Child:
    """A checker process that reads operator names on stdin and prints each one's result (one torch/triton import
    for all); its stderr goes to a file, read only when it fails."""

    def __init__(self):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True, env=dict(os.environ, TRITON_INTERPRET="1"))

    def check(self, name: str) -> dict | None:
        """`name`'s result; None when the child died, or was killed after OP_TIMEOUT_S on it."""
        timer = threading.Timer(OP_TIMEOUT_S, self.proc.kill)
        timer.start()
        try:
            self.proc.stdin.write(name + "\n")
            self.proc.stdin.flush()
            for line in self.proc.stdout:
                if line.startswith("{"):
                    return json.loads(line)
        except OSError:  # the child is gone
            pass
        finally:
            timer.cancel()
        return None

    def failure(self, name: str) -> dict:
        """The error of the operator the child failed on (it is ended, if it was not)."""
        self.proc.kill()
        self.proc.wait()
        self.stderr.seek(0)
        why = self.stderr.read().decode(errors="replace").strip()[-1500:]
        self.stderr.close()
        killed = f" (killed after {OP_TIMEOUT_S} s)" if self.proc.returncode == -9 else ""
        return {"op": name, "errors": [f"child exited {self.proc.returncode}{killed}: {why}"]}

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()
        self.stderr.close()


def _check_all(names: list[str]) -> dict[str, dict]:
    """Every operator's result, from CHILDREN children that each take the next unchecked name when done."""
    todo: queue.SimpleQueue[str] = queue.SimpleQueue()
    for name in names:
        todo.put(name)
    results: dict[str, dict] = {}

    def drain() -> None:
        child = None
        try:
            while True:
                try:
                    name = todo.get_nowait()
                except queue.Empty:
                    return
                child = child or Child()
                result = child.check(name)
                if result is None:
                    result, child = child.failure(name), None
                results[name] = result
        finally:
            if child is not None:
                child.close()

    with ThreadPoolExecutor(max_workers=CHILDREN) as pool:
        for done in [pool.submit(drain) for _ in range(CHILDREN)]:
            done.result()
    return results


@pytest.fixture(scope="module")
def results() -> dict[str, dict]:
    return _check_all(OPS)


def test_suite_is_large_and_covers_every_family(results):
    assert len(OPS) >= 40
    families = {r.get("family") for r in results.values()}
    assert REQUIRED_FAMILIES <= families, REQUIRED_FAMILIES - families


@pytest.mark.parametrize("op", OPS)
def test_op_matches_reference_on_interpreter(results, op):
    assert results[op]["errors"] == []


def test_a_wrong_kernel_is_caught(tmp_path):
    """The checker itself: a task whose entry is off by one ulp-scale amount fails."""
    bad = tmp_path / "bad.py"
    bad.write_text((SUITE / "silu.py").read_text().replace("y = x / (1.0 + tl.exp(-x))", "y = x / (1.0 + tl.exp(-x)) * 1.01"))
    env = dict(os.environ, TRITON_INTERPRET="1")
    code = f"import sys; sys.argv=['x']; sys.path.insert(0, {str(Path(__file__).parent)!r}); " \
           f"import test_suite_ops as t; t.SUITE = __import__('pathlib').Path({str(tmp_path)!r}); " \
           f"print(t.check_op('bad')['errors'])"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "output 0" in proc.stdout, proc.stderr[-1000:]


if __name__ == "__main__":
    for op_name in sys.stdin:
        print(json.dumps(check_op(op_name.strip())), flush=True)
