"""Deterministic recipes on real task files: what they change (and only that), why they refuse, and
that their candidates still compile with Triton and validate through the interpreter."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from kopt.harness.guard import check_candidate
from kopt.rewrite.cst import NotApplicable
from kopt.rewrite.recipes import Context, propose

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def src(name: str) -> str:
    return (EXAMPLES / f"{name}.py").read_text()


def changed_lines(before: str, after: str) -> list[str]:
    return [l for l in difflib.unified_diff(before.splitlines(), after.splitlines(), n=0, lineterm="")
            if l[:1] in "+-" and not l.startswith(("+++", "---"))]


def validate_source(tmp_path: Path, task: Path, source: str):
    from kopt.harness.validate import validate

    candidate = tmp_path / f"cand_{task.stem}.py"
    candidate.write_text(source)
    return validate(task, candidate, timeout_s=300, seed=1)


ROWS = '''"""Rows of x scaled by a shared weight row (a loop-invariant load, int64 offsets)."""

import torch
import triton
import triton.language as tl


@triton.jit
def scaled_rows_kernel(x_ptr, w_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    for r in range(0, 4):
        w = tl.load(w_ptr + cols, mask=cols < n_cols)  # the same row every iteration
        row = (pid * 4 + r).to(tl.int64)
        m = (cols < n_cols) & (row < n_rows)
        x = tl.load(x_ptr + row * n_cols + cols, mask=m)
        tl.store(out_ptr + row * n_cols + cols, x * w, mask=m)


def entry(x, w):
    out = torch.empty_like(x)
    rows, cols = x.shape
    scaled_rows_kernel[(triton.cdiv(rows, 4),)](x, w, out, rows, cols, BLOCK=triton.next_power_of_2(cols))
    return out


def reference(x, w):
    return x * w[None, :]


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(case["rows"], case["cols"], device=device, generator=g)
    return x, torch.randn(case["cols"], device=device, generator=g)


CASES = [{"rows": 1, "cols": 1}, {"rows": 5, "cols": 33}, {"rows": 8, "cols": 64}, {"rows": 13, "cols": 100},
         {"rows": 3, "cols": 7}]
'''

DOT = '''import torch
import triton
import triton.language as tl


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs[:, None] * N + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * N + offs[None, :])
    tl.store(c_ptr + offs[:, None] * N + offs[None, :], tl.dot(a, b, input_precision="ieee"))
'''


def test_launch_config_search_changes_only_the_launch(tmp_path):
    before = src("vector_add")
    proposal = propose("launch_config_search", before, Context(params={"BLOCK": [512, 2048, 4096], "num_warps": [4, 8]}))
    assert 2 <= len(proposal.variants) <= 8
    for v in proposal.variants:
        diff = changed_lines(before, v.source)
        assert len(diff) == 2 and "add_kernel[grid](x, y, out, n, BLOCK_SIZE=" in diff[1], diff
        assert "num_stages" not in v.source  # the kernel has no loop: nothing to pipeline
    assert proposal.variants[0].config == {"BLOCK_SIZE": 2048, "num_warps": 8, "num_stages": 3}
    assert {v.config["BLOCK_SIZE"] for v in proposal.variants} == {512, 2048, 4096}


def test_launch_config_search_leaves_computed_blocks_alone():
    before = src("softmax")
    with pytest.raises(NotApplicable, match=r"BLOCK_SIZE is not a literal \(line 23: block = triton.next_power_of_2"):
        propose("launch_config_search", before, Context(params={"BLOCK": [512, 1024]}))
    # warps never change results: a computed num_warps may become a literal, the computed block stays
    proposal = propose("launch_config_search", before)
    assert {v.label for v in proposal.variants} == {"num_warps=4", "num_warps=8"}
    for v in proposal.variants:
        (minus, plus) = changed_lines(before, v.source)
        assert plus.endswith(f"BLOCK_SIZE=block, num_warps={v.config['num_warps']})")


def test_launch_config_search_adds_warps_only_with_the_tile_to_feed_them():
    """strided_scale launches BLOCK 256 with 4 warps (2 elements a thread): 8 warps over the same 256 leave one
    element a thread (x0.73 on the H200), so warps alone are not a candidate; more warps with a bigger tile are."""
    before = src("strided_scale")
    with pytest.raises(NotApplicable, match="adds warps the tile cannot keep busy"):
        propose("launch_config_search", before, Context(params={"num_warps": [4, 8, 16]}))
    proposal = propose("launch_config_search", before, Context(params={"BLOCK": [256, 512, 1024, 2048, 4096],
                                                                       "num_warps": [4, 8]}))
    for v in proposal.variants:
        assert v.config["BLOCK"] / (32 * v.config["num_warps"]) >= 2, v.label
    assert proposal.variants[0].config == {"BLOCK": 1024, "num_warps": 8, "num_stages": 3}  # the H200's winner
    # vector_add's BLOCK_SIZE 1024 feeds 8 warps a full 128-bit vector of fp32 each (4 elements): still a candidate
    warps = propose("launch_config_search", src("vector_add"), Context(params={"num_warps": [4, 8, 16]}))
    assert [v.config["num_warps"] for v in warps.variants] == [8]


def test_matmul_launch_search_keeps_shared_memory_in_bounds():
    proposal = propose("launch_config_search", src("matmul"),
                       Context(params={"BLOCK_M": [64, 128, 256], "BLOCK_N": [64, 128, 256], "BLOCK_K": [32, 64, 128],
                                       "num_stages": [3, 4, 5]}))
    for v in proposal.variants:
        c = v.config
        assert (c["num_stages"] - 1) * (c["BLOCK_M"] + c["BLOCK_N"]) * c["BLOCK_K"] * 2 <= 220 * 1024
        assert f"BLOCK_M, BLOCK_N, BLOCK_K = {c['BLOCK_M']}, {c['BLOCK_N']}, {c['BLOCK_K']}" in v.source


def test_autotune_makes_the_grid_follow_the_config_and_compiles():
    from kopt.harness.compile import compile_task
    from kopt.task import load_task

    proposal = propose("autotune", src("matmul"))
    tuned = proposal.variants[0].source
    assert "@triton.autotune(" in tuned and "key=['M', 'N', 'K']" in tuned
    assert 'grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)' in tuned
    assert "BLOCK_M=BLOCK_M" not in tuned
    assert "a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))\n" in tuned
    assert all(v.config for v in proposal.variants[1:])  # each config also as a fixed launch
    path = Path(__import__("tempfile").mkdtemp()) / "matmul_autotuned.py"
    path.write_text(tuned)
    kernels = compile_task(load_task(path), case=0, target="sm_90", stages=["ttgir"])
    assert kernels[0].name == "matmul_kernel" and "ttg." in kernels[0].asm["ttgir"]


def test_autotune_refuses_a_grid_that_ignores_the_block():
    before = src("vector_add").replace('grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)',
                                       "grid = (triton.cdiv(n, 1024),)")
    with pytest.raises(NotApplicable, match="does not use the block variable"):
        propose("autotune", before)


def test_grouped_order_validates_through_the_interpreter(tmp_path):
    before = src("matmul")
    after = propose("grouped_order", before, Context(params={"GROUP_SIZE_M": 4})).variants[0].source
    assert "group_size_m = min(num_pid_m - first_pid_m, 4)" in after
    assert "    pid_m = pid // num_pid_n\n" not in after
    assert check_candidate(before, after) is None
    result = validate_source(tmp_path, EXAMPLES / "matmul.py", after)
    assert result.ok, result.message
    with pytest.raises(NotApplicable, match="already uses a grouped program order"):
        propose("grouped_order", after)


def test_persistent_grid_validates_through_the_interpreter(tmp_path):
    after = propose("persistent_grid", src("softmax")).variants[0].source
    assert "for row in tl.range(tl.program_id(0), num_tiles, tl.num_programs(0)):" in after
    assert "softmax_kernel[(min(rows, _num_programs()),)]" in after
    result = validate_source(tmp_path, EXAMPLES / "softmax.py", after)
    assert result.ok, result.message
    with pytest.raises(NotApplicable, match="has loops"):
        propose("persistent_grid", src("matmul"))


def test_hoist_and_int32_compose_and_validate(tmp_path):
    task = tmp_path / "rows.py"
    task.write_text(ROWS)
    cases = [{"rows": 13, "cols": 100}]
    hoisted = propose("hoist_invariant", ROWS).variants[0].source
    assert "  # the same row every iteration" in hoisted  # the comment travels with the statement
    lines = hoisted.splitlines()
    assert lines.index("    w = tl.load(w_ptr + cols, mask=cols < n_cols)  # the same row every iteration") < \
        lines.index("    for r in range(0, 4):")
    narrowed = propose("int32_indexing", hoisted, Context(cases=cases)).variants[0].source
    assert "row = (pid * 4 + r)\n" in narrowed and "tl.int64" not in narrowed
    with pytest.raises(NotApplicable, match="2\\*\\*31"):
        propose("int32_indexing", ROWS, Context(cases=[{"rows": 1 << 16, "cols": 1 << 16}]))
    result = validate_source(tmp_path, task, narrowed)
    assert result.ok, result.message


def test_dot_precision_never_loosens_a_tolerance():
    strict = Context(params={"input_precision": "tf32"}, tolerance=lambda dtype: (1e-5, 1e-5))
    with pytest.raises(NotApplicable, match="tighter than tf32 allows .* never loosened"):
        propose("dot_precision", DOT, strict)
    loose = Context(params={"input_precision": "tf32"}, tolerance=lambda dtype: (1e-2, 1e-2))
    after = propose("dot_precision", DOT, loose).variants[0].source
    assert 'tl.dot(a, b, input_precision="tf32")' in after
    x3 = propose("dot_precision", DOT, Context(params={"input_precision": "tf32x3"}, tolerance=lambda d: (1e-5, 1e-5)))
    assert 'input_precision="tf32x3"' in x3.variants[0].source
    with pytest.raises(NotApplicable, match="no tl.dot with input_precision='ieee'"):
        propose("dot_precision", after, loose)


def test_hints_and_eviction_policies():
    hinted = propose("alignment_hints", src("vector_add")).variants[0].source
    assert ("offsets = tl.max_contiguous(tl.multiple_of(pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE), BLOCK_SIZE), "
            "BLOCK_SIZE)") in hinted
    with pytest.raises(NotApplicable, match="not proven true"):
        propose("alignment_hints", hinted)
    evicted = propose("eviction_policy", src("strided_scale")).variants[0].source
    assert 'x = tl.load(x_ptr + row * stride_x + cols, mask=mask, eviction_policy="evict_first")' in evicted
    assert 's = tl.load(s_ptr + row, eviction_policy="evict_last")' in evicted


def test_refusals_say_why():
    for recipe, source, reason in [
        ("num_stages_search", src("vector_add"), "has no loop that loads"),
        ("contiguous_reorder", src("strided_scale"), "not a mechanical rewrite"),
        ("split_block", src("softmax"), "no literal block size"),
        ("grouped_order", src("vector_add"), "no 1-D-grid kernel"),
        ("no_such_recipe", src("vector_add"), "no deterministic recipe named"),
        ("autotune", "def broken(:\n", "does not parse"),
    ]:
        with pytest.raises(NotApplicable, match=reason):
            propose(recipe, source)


def test_guard_rejects_changes_to_what_judges_the_candidate():
    before = src("vector_add")
    assert "changes `reference`" in check_candidate(before, before.replace("return x + y", "return x - y"))
    assert "changes `HELD_OUT`" in check_candidate(before, before.replace('{"n": 12_345_678}', '{"n": 8}'))
    assert "no `entry`" in check_candidate(before, before.replace("def entry(", "def entry2("))
    assert check_candidate(before, before.replace("BLOCK_SIZE=1024", "BLOCK_SIZE=2048")) is None


def test_ctrl_c_while_libcst_reads_positions_stays_an_interrupt(monkeypatch):
    """libcst's position pass cleans up in a `finally` that raises KeyError when Ctrl-C lands mid-pass; kopt optimize
    must still see the interrupt (run marked interrupted, exit 130), not an internal error."""
    import libcst

    from kopt.rewrite.cst import Source

    def interrupted(self, state, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(libcst.Name, "_codegen_impl", interrupted)
    with pytest.raises(KeyboardInterrupt):
        Source("def scale(x):\n    return x * 2\n")  # interrupted inside a function body: libcst's KeyError case
