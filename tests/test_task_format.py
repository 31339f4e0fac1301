"""Task-format gaps that real third-party kernels need (issue 22 item 3), each on a small kernel of our own
through the real loader and the real validate() on the Triton interpreter: in-place outputs (MUTATED), the
nothing-returned warning, a poisoned reference on deep copies, cases that are not size dicts, FEW_CASES,
sibling imports, and a task's own code exempt from the rules its candidates meet."""

import textwrap
from pathlib import Path

import pytest

from kopt.errors import TaskError
from kopt.harness.validate import validate
from kopt.task import load_task

HEAD = '''
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    n = case[0] if isinstance(case, list) else case["n"]
    return (torch.randn(n, device=device, generator=g),)
'''

CASES = "CASES = [[1000], [1], [4097], [33], [64]]\n"


def write(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(HEAD + textwrap.dedent(body))
    return path


IN_PLACE = '''
def entry(x):
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x, x, x.numel(), BLOCK=256)


def reference(x):
    x.mul_(2.0)
'''


def test_an_in_place_entry_is_compared_on_its_mutated_input(tmp_path):
    good = write(tmp_path, "inplace.py", IN_PLACE + 'MUTATED = ["x"]\n' + CASES)
    assert load_task(good).mutated == [0]
    result = validate(good, seed=3)
    assert result.ok, result.message
    assert result.warnings == [] and len(result.cases) == 5
    # a candidate that forgets to write: the mutated input is what is compared, so it fails
    lazy = tmp_path / "lazy.py"
    lazy.write_text(good.read_text().replace("scale_kernel[(triton.cdiv(x.numel(), 256),)](x, x, x.numel(), BLOCK=256)",
                                             "scale_kernel[(1,)](x, x, min(x.numel(), 16), BLOCK=16)"))
    bad = validate(good, lazy, seed=3)
    assert not bad.ok and bad.reason == "incorrect", bad.message


def test_an_entry_that_returns_nothing_draws_a_warning_naming_what_it_wrote(tmp_path):
    undeclared = write(tmp_path, "undeclared.py", IN_PLACE + CASES)
    result = validate(undeclared, seed=3)
    assert any("MUTATED = [0]" in w for w in result.warnings), result.warnings
    idle = write(tmp_path, "idle.py", '''
def entry(x):
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)


def reference(x):
    return None
''' + CASES)
    assert any("mutated no input" in w for w in validate(idle, seed=3).warnings)


def test_mutated_must_name_entry_parameters(tmp_path):
    wrong = write(tmp_path, "wrong.py", IN_PLACE + 'MUTATED = ["y"]\n' + CASES)
    with pytest.raises(TaskError, match=r"wrong.py:\d+: MUTATED names 'y', not a parameter of entry \(x\)"):
        load_task(wrong)


def test_the_reference_runs_on_deep_copies_with_poisoned_allocations(tmp_path):
    """make_inputs hands out a cached nested structure; a reference that writes into it must not change the
    next call's inputs, and a reference that reads an unwritten torch.empty fails instead of passing."""
    cached = write(tmp_path, "cached.py", '''
_CACHE = {}


def make_inputs(case, device, seed):
    key = (case["n"], seed)
    if key not in _CACHE:
        g = torch.Generator(device=device).manual_seed(seed)
        _CACHE[key] = ({"x": torch.randn(case["n"], device=device, generator=g)},)
    return _CACHE[key]


def entry(box):
    x = box["x"]
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    return out


def reference(box):
    box["x"].mul_(2.0)  # in place on what it was given
    return box["x"]


CASES = [{"n": 10}, {"n": 1000}, {"n": 4097}, {"n": 33}, {"n": 64}]
''')
    assert validate(cached, seed=5).ok
    sloppy = write(tmp_path, "sloppy.py", '''
def entry(x):
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    return out


def reference(x):
    out = torch.empty(x.numel())
    out[1:] = x[1:] * 2
    return out  # element 0 was never written: NaN, not whatever the allocator left there
''' + CASES)
    result = validate(sloppy, seed=5)
    assert not result.ok and "expected nan" in result.message, result.message


def test_cases_may_be_tuples_and_fewer_than_five_need_a_reason(tmp_path):
    body = '''
def entry(x):
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    return out


def reference(x):
    return x * 2
'''
    tuples = write(tmp_path, "tuples.py", body + "CASES = [(1000,), (1,), (4097,), (33,), (64,)]\n")
    task = load_task(tuples)
    assert task.cases == [[1000], [1], [4097], [33], [64]]  # as the children receive them
    assert validate(tuples, seed=1).ok
    from kopt.rounds.report import case_label

    assert [case_label(c) for c in task.cases[:2]] == ["[1000]", "[1]"]  # a run report labels them as they read
    few = write(tmp_path, "few.py", body + "CASES = [(1000,), (4097,), (1000,), (4097,), (1000,)]\n")
    with pytest.raises(TaskError, match="CASES has 2 distinct entries; at least 5.*FEW_CASES"):
        load_task(few)
    few.write_text(few.read_text() + 'FEW_CASES = "the model has two hidden sizes"\n')
    assert len(load_task(few).cases) == 5


def test_a_task_imports_its_siblings_and_its_own_code_is_its_baseline(tmp_path):
    """The kernel lives in a sibling package (as a fetched third-party one does) and the task's launcher does
    torch work outside a kernel: the task validates; a candidate adding torch compute of its own is a cheat,
    one keeping the task's own lines is judged on its outputs."""
    pkg = tmp_path / "thirdparty"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "ops.py").write_text(HEAD)
    task = tmp_path / "sibling.py"
    task.write_text(textwrap.dedent('''
        import torch
        import triton
        from thirdparty.ops import scale_kernel, make_inputs


        def entry(x):
            out = torch.empty_like(x)
            scale_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
            return out.sum() * 0 + out  # a launcher's own torch op


        def reference(x):
            return x * 2


        CASES = [[1000], [1], [4097], [33], [64]]
    '''))
    assert "scale_kernel" in load_task(task).kernels
    assert validate(task, seed=2).ok
    keeps = tmp_path / "keeps.py"
    keeps.write_text(task.read_text())
    assert validate(task, keeps, seed=2).ok
    adds = tmp_path / "adds.py"
    adds.write_text(task.read_text().replace("return x * 2", "return x * 2\n\n\ndef helper(x):\n    return x.exp()"))
    result = validate(task, adds, seed=2)
    assert not result.ok and result.reason == "cheat" and "exp" in result.message


def test_the_int32_proof_bounds_cases_of_any_shape():
    from kopt.rewrite.cst import NotApplicable
    from kopt.rewrite.recipes import Context, propose

    source = HEAD.replace("offs = tl.program_id(0) * BLOCK", "offs = tl.program_id(0).to(tl.int64) * BLOCK")
    narrowed = propose("int32_indexing", source, Context(cases=[[4096, 4096], {"shape": (8, 1024, 64)}]))
    assert "tl.int64" not in narrowed.variants[0].source and "16,777,216" in narrowed.summary
    with pytest.raises(NotApplicable, match="sizes multiply to 4,294,967,296"):
        propose("int32_indexing", source, Context(cases=[[4096, 4096], [65536, 65536]]))
    with pytest.raises(NotApplicable, match="holds no integer sizes"):
        propose("int32_indexing", source, Context(cases=[[4096], "llama-7b"]))
