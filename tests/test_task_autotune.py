"""@triton.autotune and @triton.heuristics kernels end to end on a kernel of our own: validate on the interpreter
(the autotuner keeps its first config), L3's compile says which config it lowered and how it was chosen, and
the launch-config recipes widen the config list instead of refusing."""

import textwrap

import pytest
import torch

from kopt.harness.compile import compile_task
from kopt.harness.validate import validate
from kopt.rewrite.cst import NotApplicable
from kopt.rewrite.recipes import propose
from kopt.task import load_task

TASK = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl


    @triton.autotune(
        configs=[
            triton.Config({"BLOCK": 64}, num_warps=2, num_stages=2),
            triton.Config({"BLOCK": 128}, num_warps=4, num_stages=3),
        ],
        key=["n_cols"],
    )
    @triton.heuristics({"EVEN": lambda args: args["n_cols"] % args["BLOCK"] == 0})
    @triton.jit
    def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr, EVEN: tl.constexpr):
        row = tl.program_id(0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            if EVEN:
                acc += tl.load(x_ptr + row * n_cols + offs)
            else:
                acc += tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
        tl.store(out_ptr + row, tl.sum(acc))


    def entry(x):
        out = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
        row_sum_kernel[(x.shape[0],)](x, out, x.shape[1])
        return out


    def reference(x):
        return x.sum(1)


    def make_inputs(case, device, seed):
        g = torch.Generator(device=device).manual_seed(seed)
        return (torch.randn(case["rows"], case["cols"], device=device, generator=g),)


    CASES = [{"rows": 64, "cols": 4096}, {"rows": 1000, "cols": 1000}, {"rows": 7, "cols": 65536},
             {"rows": 4096, "cols": 128}, {"rows": 33, "cols": 777}]
    SMALL_CASES = [{"rows": 3, "cols": 128}, {"rows": 2, "cols": 100}]
    TOLERANCES = {"float32": (1e-4, 1e-5)}
''')


@pytest.fixture
def task_path(tmp_path):
    path = tmp_path / "tuned_row_sum.py"
    path.write_text(TASK)
    return path


def test_an_autotuned_heuristics_kernel_validates_on_the_interpreter(task_path):
    task = load_task(task_path)
    assert list(task.kernels) == ["row_sum_kernel"]
    result = validate(task_path, seed=4)
    assert result.ok, result.message
    assert len(result.cases) == 2


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU path: no autotuner pick to read")
def test_l3_says_it_compiled_the_first_config_without_a_gpu(task_path, tmp_path):
    (kernel,) = compile_task(load_task(task_path), case=0, target="sm_90", stages=["ttgir"], cache_dir=tmp_path / "c")
    assert kernel.constexprs["BLOCK"] == 64 and kernel.options["num_warps"] == 2
    assert "first of 2 configs" in kernel.autotune and "unknown without a GPU" in kernel.autotune


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: the autotuner must tune for real")
def test_l3_compiles_the_config_the_autotuner_picked_on_the_gpu(task_path, tmp_path):
    task = load_task(task_path)
    (kernel,) = compile_task(task, case=0, stages=["ttgir"], cache_dir=tmp_path / "c")
    tuner = task.module.row_sum_kernel
    picked = next(iter(tuner.cache.values()))
    assert "the autotuner's pick of 2 on this GPU" in kernel.autotune
    assert kernel.constexprs["BLOCK"] == picked.kwargs["BLOCK"] and kernel.options["num_warps"] == picked.num_warps


def test_launch_config_recipes_widen_the_autotune_config_list(task_path, tmp_path):
    source = task_path.read_text()
    proposal = propose("launch_config_search", source)
    (variant,) = proposal.variants
    assert "autotune config(s) added to its 2" in proposal.summary
    tuned = variant.source
    assert tuned.count("triton.Config(") > 2 and tuned.count("triton.Config({\"BLOCK\": 64}, num_warps=2") == 1
    assert "triton.Config({'BLOCK': 64}, num_warps=4, num_stages=2)" in tuned  # a new config, listed first
    assert tuned.index("num_warps=4, num_stages=2)") < tuned.index('{"BLOCK": 64}, num_warps=2')
    assert tuned.replace(tuned[tuned.index("configs=["):tuned.index("key=")], "") == \
        source.replace(source[source.index("configs=["):source.index("key=")], "")  # only the list changed
    stages = propose("num_stages_search", source)
    assert stages.variants[0].config == {"BLOCK": 64, "num_warps": 2, "num_stages": 1}  # only stages moved
    assert stages.variants[0].source.count("triton.Config(") == 2 + 4  # two stage steps around each config
    candidate = tmp_path / "widened.py"
    candidate.write_text(tuned)
    result = validate(task_path, candidate, seed=4)
    assert result.ok, result.message
    assert propose("autotune", source).recipe == "autotune"  # the autotune recipe widens it too


def test_a_computed_config_list_is_refused_with_its_line(task_path):
    computed = task_path.read_text().replace(
        'configs=[\n        triton.Config({"BLOCK": 64}, num_warps=2, num_stages=2),\n'
        '        triton.Config({"BLOCK": 128}, num_warps=4, num_stages=3),\n    ],',
        "configs=[triton.Config({'BLOCK': b}, num_warps=4) for b in (64, 128)],")
    assert "for b in" in computed
    with pytest.raises(NotApplicable, match="not a literal list"):
        propose("launch_config_search", computed)
