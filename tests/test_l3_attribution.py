"""L3 attribution end to end: real tasks through the real harness compile (sm_90, no GPU) into findings."""

import json
from pathlib import Path

import pytest

from kopt.diagnose.l3 import attribute
from kopt.harness.compile import compile_task
from kopt.task import load_task

ROOT = Path(__file__).parents[1]
PLANTED = ROOT / "tests" / "fixtures" / "ir" / "planted_l3.py"


def _line(path: Path, text: str) -> int:
    """The 1-based line holding `text`, so the assertions survive edits above it."""
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if text in ln)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("compile-cache")


@pytest.fixture(scope="module")
def planted(cache):
    kernels = compile_task(load_task(PLANTED), cache_dir=cache)
    return attribute(kernels, PLANTED)


def _task_findings(cache, tmp_path, name, source, line_text):
    """Compile a task written here and return the L3 findings at the line holding `line_text`, most confident first."""
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    report = attribute(compile_task(load_task(path), cache_dir=cache), path)
    line = _line(path, line_text)
    return [f for f in report.findings if line in f.kernel_lines]


def _findings(report, kernel_line_text):
    line = _line(PLANTED, kernel_line_text)
    return [f for f in report.findings if line in f.kernel_lines], line


def test_strided_fastest_dim_is_uncoalesced_and_names_the_stride(planted):
    found, line = _findings(planted, "x = tl.load(x_ptr + offs * stride, mask=mask)")
    top = found[0]
    assert top.id == "uncoalesced_access" and top.level == "L3"
    assert f"line {line}" in top.message and "`stride`" in top.message and "32-bit" in top.message
    assert {e.source for e in top.evidence} >= {"ttgir", "ptx", "sass"}
    assert {e.data["kernel"] for e in top.evidence} == {"strided_copy_kernel"}
    assert any("unit-stride" in c for c in top.conditions)
    fact = next(f for f in planted.facts_at(line) if f["kind"] == "load")
    assert fact["vector_bytes"] == 4 and fact["strided_dims"] == {"0": ["stride"]}


def test_gather_and_modulo_offsets(planted):
    gather, _ = _findings(planted, "tl.store(out_ptr + offs, tl.load(x_ptr + idx))")
    assert gather[0].id == "uncoalesced_access" and "gather" in gather[0].message
    wrap, _ = _findings(planted, "tl.load(x_ptr + offs % period)")
    assert wrap[0].id == "modulo_indexing"


def test_transpose_costs_a_layout_conversion_through_shared_memory(planted):
    found, line = _findings(planted, "tl.store(out_ptr + rn[:, None] * M + rm[None, :], tl.trans(tile))")
    conv = next(f for f in found if f.id == "layout_conversion")
    assert "16384 B" in conv.message and "shared memory" in conv.message
    facts = planted.facts_at(line)
    assert any(f["kind"] == "convert_layout" and f["tensor_bytes"] == 16384 for f in facts)
    # the load and store themselves are fully vectorized: the conversion is the cost
    assert all(f["vector_bytes"] == 16 for f in facts if f["kind"] in ("load", "store"))


def test_fp32_ieee_dot_on_fma_and_unpipelined_loop(planted):
    found, _ = _findings(planted, 'acc += tl.dot(a, b, input_precision="ieee")')
    ids = [f.id for f in found]
    assert ids[0] == "fp32_dot_ieee" and "no_tensor_cores" in ids
    loop, _ = _findings(planted, "a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])")
    pipe = next(f for f in loop if f.id == "no_software_pipelining")
    assert "num_stages=1" in pipe.message
    loop_line = _line(PLANTED, "for k in range(0, K, BK):")  # the scf.for's loc sits after its closing brace
    loop = next(f for f in planted.facts_at(loop_line) if f["kind"] == "loop")
    assert loop["loads"] == 2 and not loop["pipelined"] and loop["has_dot"] and loop["num_stages"] == 1


def test_wgmma_dot_with_a_narrow_operand_load(planted):
    line = _line(PLANTED, "acc += tl.dot(a, b)\n".strip())
    dot = next(f for f in planted.facts_at(line) if f["kind"] == "dot")
    assert dot["lowering"].startswith("wgmma") and dot["operand_dtype"] == "f16"
    found, _ = _findings(planted, "a = tl.load(a_ptr + rm[:, None] * sam + (k + rk)[None, :] * sak)")
    ids = [f.id for f in found]
    assert ids[0] == "uncoalesced_access" and "no_software_pipelining" in ids
    assert "too narrow for cp.async" in next(f for f in found if f.id == "no_software_pipelining").message


def test_resources_and_report_are_json(planted):
    names = {k["kernel"] for k in planted.kernels}
    assert names == {"transpose_kernel", "strided_copy_kernel", "gather_kernel", "wrap_copy_kernel",
                     "dot_ieee_kernel", "strided_dot_kernel"}
    for k in planted.kernels:
        assert k["registers"] and 0 < k["occupancy"]["occupancy"] <= 1
    json.dumps(planted.to_dict())


def test_clean_vector_add_has_no_memory_findings(cache):
    path = ROOT / "examples" / "vector_add.py"
    report = attribute(compile_task(load_task(path), cache_dir=cache), path)
    assert not [f for f in report.findings if f.id in ("non_vectorized_load", "misaligned_access",
                                                        "uncoalesced_access", "masked_access")]
    load = report.facts_at(_line(path, "x = tl.load(x_ptr + offsets, mask=mask)"))[0]
    assert load["vector_bytes"] == 16 and load["size_per_thread"] == 4 and load["mask_bounds"] == {"n_elements": 16}


def test_view_at_an_offset_is_misaligned(cache):
    path = ROOT / "examples" / "strided_scale.py"
    report = attribute(compile_task(load_task(path), cache_dir=cache), path)
    line = _line(path, "x = tl.load(x_ptr + row * stride_x + cols, mask=mask)")
    mis = next(f for f in report.findings if f.id == "misaligned_access")
    assert line in mis.kernel_lines and "`x_ptr`" in mis.message
    assert any("divisible by 16" in c for c in mis.conditions)
    assert any("`stride_x`" in why for why in report.facts_at(line)[0]["why"])


def test_missing_ttgir_is_a_note_not_a_crash(cache):
    path = ROOT / "examples" / "vector_add.py"
    kernel = compile_task(load_task(path), cache_dir=cache)[0]
    kernel.asm = {"ptx": kernel.asm["ptx"]}
    report = attribute([kernel], path)
    assert report.findings == [] and "no TTGIR" in report.notes[0]


TRIANGULAR = '''
import torch
import triton
import triton.language as tl


@triton.jit
def tril_rowsum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n, BLOCK):
        c = start + cols
        keep = (rows[:, None] < n) & (c[None, :] <= rows[:, None])
        x = tl.load(x_ptr + rows[:, None] * n + c[None, :], mask=keep, other=0.0)
        acc += tl.sum(x.to(tl.float32), axis=1)
    tl.store(out_ptr + rows, acc, mask=rows < n)


def entry(x):
    out = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
    tril_rowsum_kernel[(triton.cdiv(x.shape[0], 64),)](x, out, x.shape[0], BLOCK=64)
    return out


def reference(x):
    return torch.tril(x).float().sum(dim=1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(case["n"], case["n"], generator=g).to(torch.float16).to(device),)


CASES = [{"n": 4096}, {"n": 2048}, {"n": 8192}, {"n": 1024}, {"n": 6144}]
'''


def test_a_triangular_load_mask_is_masked_access(cache, tmp_path):
    """`c <= rows` compares two index ranges: the mask can change between neighbouring elements, so the load goes
    2-byte whatever the bounds' divisibility (n is 16-divisible in every case): masked_access names that mask."""
    found = _task_findings(cache, tmp_path, "tril_rowsum", TRIANGULAR,
                           "x = tl.load(x_ptr + rows[:, None] * n + c[None, :], mask=keep, other=0.0)")
    assert found and found[0].id == "masked_access" and "two index ranges" in found[0].message


PACKED_NIBBLES = '''
import torch
import triton
import triton.language as tl


@triton.jit
def nibble_rowsum_kernel(q_ptr, out_ptr, n_rows, K, stride_q, BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    acc = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        packed = tl.load(q_ptr + rows[:, None] * stride_q + (k // 2)[None, :], mask=rows[:, None] < n_rows, other=0)
        q = (packed.to(tl.uint8) >> ((k % 2) * 4).to(tl.uint8)[None, :]) & 0xF
        acc += tl.sum(q.to(tl.float32), axis=1)
    tl.store(out_ptr + rows, acc, mask=rows < n_rows)


def entry(q, K):
    out = torch.empty(q.shape[0], device=q.device, dtype=torch.float32)
    nibble_rowsum_kernel[(triton.cdiv(q.shape[0], 16),)](q, out, q.shape[0], K, q.stride(0), BLOCK_R=16, BLOCK_K=128)
    return out


def reference(q, K):
    return ((q & 0xF) + (q >> 4)).float().sum(dim=1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, 256, (case["n"], case["K"] // 2), generator=g, dtype=torch.uint8).to(device), case["K"])


CASES = [{"n": 4096, "K": 4096}, {"n": 2048, "K": 8192}, {"n": 8192, "K": 2048}, {"n": 1024, "K": 4096}, {"n": 6144, "K": 4096}]
'''


def test_a_division_that_takes_the_contiguous_dim_is_modulo_indexing(cache, tmp_path):
    """`k // 2` on the dim that would be contiguous leaves AxisInfo no contiguous dim, so the layout falls back to the
    strided rows and the load goes 1 byte wide: the division is the reason, ahead of the strided rows it causes."""
    found = _task_findings(cache, tmp_path, "nibble_rowsum", PACKED_NIBBLES, "packed = tl.load(q_ptr + rows[:, None] * "
                           "stride_q + (k // 2)[None, :], mask=rows[:, None] < n_rows, other=0)")
    assert found and found[0].id == "modulo_indexing" and "no dim is known contiguous" in found[0].message
    assert "uncoalesced_access" in {f.id for f in found[1:]}


TABLE_COPY = '''
import torch
import triton
import triton.language as tl


@triton.jit
def table_copy_kernel(table_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(1)
    src = tl.load(table_ptr + row).to(tl.pointer_type(tl.float16))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + row * n + offs, x, mask=offs < n)


def entry(x):
    rows, n = x.shape
    table = torch.tensor([x[i].data_ptr() for i in range(rows)], dtype=torch.int64, device=x.device)
    y = torch.empty_like(x)
    table_copy_kernel[(triton.cdiv(n, 1024), rows)](table, y, n, BLOCK=1024)
    return y


def reference(x):
    return x.clone()


def make_inputs(case, device, seed):
    return (torch.randn(case["rows"], case["n"]).half().to(device),)


CASES = [{"rows": 64, "n": 4096}, {"rows": 32, "n": 8192}, {"rows": 128, "n": 2048}, {"rows": 16, "n": 16384}, {"rows": 8, "n": 65536}]
'''


def test_a_base_pointer_read_from_a_table_is_misaligned_not_a_gather(cache, tmp_path):
    """The tile is contiguous from a pointer loaded from memory: the compiler knows nothing of its alignment, so the
    load goes 2-byte; the fix is tl.multiple_of on the loaded pointer, not reordering a gather."""
    found = _task_findings(cache, tmp_path, "table_copy", TABLE_COPY, "x = tl.load(src + offs, mask=offs < n, other=0.0)")
    assert found and found[0].id == "misaligned_access" and "read from memory" in found[0].message
    assert "uncoalesced_access" not in {f.id for f in found}


SCATTER_COUNTS = '''
import torch
import triton
import triton.language as tl


@triton.jit
def bincount_kernel(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    b = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(hist_ptr + b, 1, mask=offs < n)


def entry(x):
    hist = torch.zeros(256, device=x.device, dtype=torch.int32)
    bincount_kernel[(triton.cdiv(x.numel(), 1024),)](x, hist, x.numel(), BLOCK=1024)
    return hist


def reference(x):
    return torch.bincount(x.long(), minlength=256).int()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, 256, (case["n"],), generator=g, dtype=torch.int32).to(device),)


CASES = [{"n": 1 << 20}, {"n": 1 << 16}, {"n": 3 << 18}, {"n": 1 << 12}, {"n": 1 << 22}]
'''


def test_a_scattered_atomic_is_a_fact_not_a_width_finding(cache, tmp_path):
    """Triton issues one red per element of an atomic: its cost is contention, which L1 names; L3 records the
    atomic's lowering at its line but makes no width finding of it."""
    line_text = "tl.atomic_add(hist_ptr + b, 1, mask=offs < n)"
    found = _task_findings(cache, tmp_path, "bincount", SCATTER_COUNTS, line_text)
    widths = {"non_vectorized_load", "uncoalesced_access", "misaligned_access", "masked_access", "small_block"}
    assert found and not widths & {f.id for f in found}  # its index's layout conversion is still one
    path = tmp_path / "bincount.py"
    report = attribute(compile_task(load_task(path), cache_dir=cache), path)
    facts = report.facts_at(_line(path, line_text), str(path))
    atomic = [f for f in facts if f["kind"] == "atomic"]
    assert len(atomic) == 1 and atomic[0]["summary"].startswith("atomic of `hist_ptr`")
    assert atomic[0]["mask"] and atomic[0]["summary"].endswith("; masked")
