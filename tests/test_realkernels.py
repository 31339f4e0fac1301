"""The real-kernel dev set's converter and manifest (evals/realkernels): every kernel pinned and paired with a
task file, the converter building a runnable task from a wheel of our own (relative imports made absolute, the
package a sibling of the task), and, when the third-party cache has been fetched, a real task validating."""

import zipfile

import pytest

from evals.realkernels import fetch
from kopt.campaign import suite_ops
from kopt.harness.validate import validate

KERNEL_MODULE = '''"""A third-party module: kernels and a launcher that imports its package's helpers relatively."""

import torch
import triton
import triton.language as tl

from .helpers import block_for


@triton.jit
def _double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs, mask=mask), mask=mask)


def double(x):
    y = torch.empty_like(x)
    block = block_for(x.numel())
    _double_kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK=block)
    return y
'''

TASK = '''"""Our task part: entry, reference, inputs, cases."""

import torch

from toypkg.ops.double import double  # kopt: inline


def entry(x):
    return double(x)


def reference(x):
    return 2 * x


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    return (torch.randn(case["n"], device=device, generator=g),)


CASES = [{"n": 1 << 20}, {"n": 1000}, {"n": 4097}, {"n": 33}, {"n": 1 << 16}]
SMALL_CASES = [{"n": 100}, {"n": 33}]
'''


def test_the_manifest_pins_at_least_twenty_kernels_each_with_a_task():
    manifest = fetch.load_manifest()
    kernels = manifest["kernels"]
    assert len(kernels) >= 20 and len({k["name"] for k in kernels}) == len(kernels)
    assert len({k["family"] for k in kernels}) >= 8
    for package in manifest["packages"].values():
        assert len(package["sha256"]) == 64 and package["version"] in package["wheel"] and package["license"]
    for kernel in kernels:
        text = (fetch.HERE / "tasks" / f"{kernel['name']}.py").read_text()
        inline = [line for line in text.splitlines() if fetch.INLINE_MARK in line]
        assert inline == [f"from {kernel['module']} import {kernel['launcher']}  {fetch.INLINE_MARK}"], kernel["name"]
        assert kernel["why"] and kernel["kernels"]


def test_relative_imports_become_absolute():
    source = "from .utils import a\nfrom ..common import b\nif x:\n    from . import c\nfrom .x.y import d\n"
    assert fetch.absolute_imports(source, "pkg.ops.mod") == (
        "from pkg.ops.utils import a\nfrom pkg.common import b\nif x:\n    from pkg.ops import c\n"
        "from pkg.ops.x.y import d\n")


def test_the_converter_builds_a_task_that_validates_on_the_interpreter(tmp_path, monkeypatch):
    wheel = tmp_path / "toypkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("toypkg/__init__.py", "")
        archive.writestr("toypkg/ops/__init__.py", "")
        archive.writestr("toypkg/ops/helpers.py", "def block_for(n):\n    return 256 if n > 1000 else 64\n")
        archive.writestr("toypkg/ops/double.py", KERNEL_MODULE)
        archive.writestr("toypkg-1.0.dist-info/METADATA", "Name: toypkg\n")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "toy_double.py").write_text(TASK)
    monkeypatch.setattr(fetch, "HERE", tmp_path)
    monkeypatch.setattr(fetch, "TASKS_OUT", tmp_path / "out")
    fetch.unpack(wheel)
    assert not (tmp_path / "out" / "toypkg-1.0.dist-info").exists()
    built = fetch.build_task({"name": "toy_double", "module": "toypkg.ops.double", "family": "elementwise-fwd"},
                             {"name": "toypkg", "version": "1.0", "license": "MIT", "wheel": wheel.name})
    text = built.read_text()
    assert "from toypkg.ops.helpers import block_for" in text and fetch.INLINE_MARK not in text
    assert text.index("def _double_kernel") < text.index("def entry")
    # an operator of `kopt eval suite --suite <its folder>`, so the LLM campaign can run on the real kernels
    assert [(op.name, op.family) for op in suite_ops(built.parent)] == [("toy_double", "elementwise_fwd")]
    result = validate(built, seed=3)
    assert result.ok, result.message


def test_a_task_without_its_inline_import_is_refused(tmp_path, monkeypatch):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "bad.py").write_text(TASK.replace(f"  {fetch.INLINE_MARK}", ""))
    (tmp_path / "out" / "toypkg" / "ops").mkdir(parents=True)
    (tmp_path / "out" / "toypkg" / "ops" / "double.py").write_text(KERNEL_MODULE)
    monkeypatch.setattr(fetch, "HERE", tmp_path)
    monkeypatch.setattr(fetch, "TASKS_OUT", tmp_path / "out")
    with pytest.raises(fetch.FetchError, match="no `# kopt: inline` import"):
        fetch.build_task({"name": "bad", "module": "toypkg.ops.double", "family": "elementwise"},
                         {"name": "toypkg", "version": "1.0", "license": "MIT", "wheel": "w"})


@pytest.mark.slow
def test_a_real_in_place_kernel_validates_against_our_reference():
    """liger's cross entropy writes the gradient into the logits: MUTATED compares them. The wheel is fetched from
    PyPI by its pinned hash when the cache lacks it (CI has the package registry)."""
    task = fetch.TASKS_OUT / "cross_entropy_fwd.py"
    if not task.is_file():
        fetch.fetch(["cross_entropy_fwd"])
    result = validate(task, seed=1)
    assert result.ok, result.message
    assert len(result.cases) == 3 and result.warnings == []
