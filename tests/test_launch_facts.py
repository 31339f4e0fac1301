"""Per-case launch facts and the ranking they feed: real task files, Triton's real binder and compiler (sm_90, no
GPU), inputs faked so that even a 400 GB case is captured without allocating it."""

import importlib.util
import textwrap
from pathlib import Path

import pytest

from kopt.config import load_settings
from kopt.diagnose import launch_facts
from kopt.diagnose.escalate import diagnose
from kopt.diagnose.l3 import attribute
from kopt.harness.compile import compile_task
from kopt.task import load_task

COL_SUM = '''
"""Column sums: one program per 128 columns walks every row (the campaign's col_sum)."""
import torch
import triton
import triton.language as tl


@triton.jit
def col_sum_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(x.to(tl.float32), axis=0)
    tl.store(y_ptr + cols, acc.to(y_ptr.dtype.element_ty), mask=cols < N)


def entry(x):
    M, N = x.shape
    y = torch.empty((N,), device=x.device, dtype=x.dtype)
    col_sum_kernel[(triton.cdiv(N, 128),)](x, y, M, N, BLOCK_M=32, BLOCK_N=128)
    return y


def reference(x):
    return x.sum(0)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(case["M"], case["N"], generator=g).to(getattr(torch, case["dtype"])).to(device),)


CASES = [
    {"M": 8192, "N": 4096, "dtype": "float32"},
    {"M": 32768, "N": 1024, "dtype": "float16"},
    {"M": 3001, "N": 5003, "dtype": "float16"},
    {"M": 1_000_000, "N": 100_000, "dtype": "float32"},
    {"M": 64, "N": 999_999, "dtype": "float16"},
]
'''

SWIGLU = '''
"""silu(gate) * up over a flat buffer."""
import torch
import triton
import triton.language as tl


@triton.jit
def swiglu_kernel(gate_ptr, up_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    g = tl.load(gate_ptr + offs, mask=mask).to(tl.float32)
    u = tl.load(up_ptr + offs, mask=mask).to(tl.float32)
    tl.store(y_ptr + offs, (g * tl.sigmoid(g) * u).to(y_ptr.dtype.element_ty), mask=mask)


def entry(gate, up):
    y = torch.empty_like(gate)
    n = gate.numel()
    swiglu_kernel[(triton.cdiv(n, 1024),)](gate, up, y, n, BLOCK=1024)
    return y


def reference(gate, up):
    return torch.nn.functional.silu(gate) * up


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    shape = (case["M"], case["N"])
    return torch.randn(shape, generator=g).to(device), torch.randn(shape, generator=g).to(device)


CASES = [
    {"M": 4096, "N": 4096},
    {"M": 8192, "N": 2048},
    {"M": 777, "N": 13825},
    {"M": 2048, "N": 8192},
    {"M": 1023, "N": 5461},
]
'''


def _task(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


@pytest.fixture()
def col_sum(tmp_path):
    return _task(tmp_path, "col_sum", COL_SUM)


def test_every_case_is_captured_without_allocating_its_inputs(col_sum):
    facts = launch_facts.capture(load_task(col_sum), "sm_90")  # case 3 is 400 GB of fp32: only fake tensors fit
    assert facts.skipped == {} and facts.sms == 132
    assert [(l.case, l.programs) for l in facts.launches] == [(0, 32), (1, 8), (2, 40), (3, 782), (4, 7813)]
    assert facts.launches[0].ints == {"M": 8192, "N": 4096}
    assert {"M", "N", "x_ptr", "y_ptr"} <= facts.launches[0].address_args
    assert facts.launches[0].misaligned() == []
    assert facts.launches[2].misaligned() == ["M", "N"]  # 3001 x 5003: Triton drops tt.divisibility=16 on both
    assert facts.launches[4].misaligned() == ["N"]


def test_an_entry_that_asks_the_device_launches_what_it_launches_on_the_target_gpu(tmp_path):
    """A persistent grid sized from torch.cuda's SM count behind an `is_cuda` check: captured as the target GPU runs it
    (132 programs on sm_90), not as the CPU fallback (4), so no tiny grid is claimed."""
    persistent = COL_SUM.replace(
        "    col_sum_kernel[(triton.cdiv(N, 128),)](x, y, M, N, BLOCK_M=32, BLOCK_N=128)",
        "    sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 4\n"
        "    col_sum_kernel[(sms,)](x, y, M, N, BLOCK_M=32, BLOCK_N=128)")
    path = _task(tmp_path, "col_sum_sms", persistent)
    facts = launch_facts.capture(load_task(path), "sm_90")
    assert facts.skipped == {} and {l.programs for l in facts.launches} == {132}
    (low,) = [f for f in launch_facts.findings(facts, str(path)) if f.id == "low_occupancy"]
    assert "thin grid" in low.message and "about 4 warps per SM" in low.message  # one 4-warp program per SM


def test_a_tiny_grid_on_some_cases_is_low_occupancy_naming_them(col_sum):
    facts = launch_facts.capture(load_task(col_sum), "sm_90")
    found = {f.id: f for f in launch_facts.findings(facts, str(col_sum))}
    tiny = found["low_occupancy"]
    assert "tiny grid: 3 of 5 cases" in tiny.message and "as few as 8" in tiny.message
    assert [e.data["case"] for e in tiny.evidence] == [0, 1, 2]
    assert all(e.source == "launch" for e in tiny.evidence)
    misaligned = found["misaligned_access"]
    assert "case 2, case 4 lose 16-divisibility" in misaligned.message and "case 0, case 1, case 3 keep it" in misaligned.message
    assert any(c.startswith("case 0, case 1, case 3 are aligned already: keep their code path") for c in misaligned.conditions)


def test_measured_roofline_sinks_a_cause_whose_cases_are_already_fast(col_sum):
    facts = launch_facts.capture(load_task(col_sum), "sm_90")
    plain = {f.id: f.confidence for f in launch_facts.findings(facts, str(col_sum))}
    fast_odd = {f.id: f.confidence for f in launch_facts.findings(
        facts, str(col_sum), roofline={0: 0.05, 1: 0.04, 2: 0.9, 3: 0.3, 4: 0.92})}
    assert fast_odd["misaligned_access"] < plain["misaligned_access"]
    assert fast_odd["low_occupancy"] == plain["low_occupancy"]


def test_an_odd_mask_bound_alone_is_masked_access(tmp_path):
    path = _task(tmp_path, "swiglu", SWIGLU)
    facts = launch_facts.capture(load_task(path), "sm_90")
    assert [l.case for l in facts.launches if l.misaligned()] == [2, 4]
    assert facts.launches[0].mask_only == {"n_elements"}
    (finding,) = launch_facts.findings(facts, str(path))
    assert finding.id == "masked_access" and "`n_elements` (used in mask bounds)" in finding.message


def test_escalation_compiles_the_odd_case_and_confirms_its_narrow_accesses(tmp_path):
    path = _task(tmp_path, "swiglu", SWIGLU)
    diag = diagnose(path, gpu=False, settings=load_settings())
    levels = {r.level: r.status for r in diag.levels}
    assert levels["L3"] == "used"  # a width cause found at L1 alone does not stop the escalation
    top = diag.findings[0]
    assert top.id == "masked_access" and top.level == "L3"
    narrowed = [e for e in top.evidence if e.level == "L3" and e.data.get("case") == 2]
    assert narrowed and all(e.data["vector_bytes"] < e.data["aligned_bytes"] == 16 for e in narrowed)
    assert "case 2 (M=777, N=13825) compiles its accesses narrower" in top.message


def test_a_once_per_program_store_cannot_outrank_the_loop_loads(col_sum):
    task = load_task(col_sum)
    report = attribute(compile_task(task, target="sm_90"), col_sum)
    store = next(f for facts in report.lines.values() for f in facts if f.get("kind") == "store")
    assert store["traffic_share"] < 0.01 and store["vector_bytes"] < 16
    narrow = [f for f in report.findings if f.id in ("small_block", "non_vectorized_load")]
    assert narrow and all(f.confidence < 0.3 for f in narrow)
    diag = diagnose(col_sum, gpu=False, settings=load_settings())
    assert diag.findings[0].id == "low_occupancy" and "tiny grid" in diag.findings[0].message


def test_many_programs_that_each_move_little_are_too_many_programs():
    path = Path(__file__).parent / "fixtures" / "l1" / "scatter_rows.py"
    facts = launch_facts.capture(load_task(path), "sm_90")
    found = {f.id: f for f in launch_facts.findings(facts, str(path))}
    tiny = found["too_many_programs"]
    assert [e.data["case"] for e in tiny.evidence] == [0, 3]  # 4096 and 65536 programs of one 128-float row each
    assert [e.data["programs"] for e in tiny.evidence] == [4096, 65536]
    assert all(e.data["tensor_bytes"] / e.data["programs"] < 1024 for e in tiny.evidence)


ROOT = Path(__file__).parents[1]


def test_modulo_counts_only_on_per_element_offsets_of_the_vector_dim():
    def modulo(path, case=0):
        report = attribute(compile_task(load_task(path), case=case, target="sm_90"), path)
        return [f for f in report.findings if f.id == "modulo_indexing"]

    # `%`/`//` on program ids (the grouped tile order) leave the loads' contiguous dim alone
    assert modulo(ROOT / "evals" / "suite" / "matmul_fp32.py") == []
    gelu = ROOT / "evals" / "diagnosis" / "gelu_modulo.py"
    # a flat index split per element by N=4096: AxisInfo sees through it, the loads stay 128-bit
    assert modulo(gelu) == []
    # by N=4999 (case 3) the split breaks contiguity: the loads it feeds narrow, and the modulo is named
    flat = modulo(gelu, case=3)
    assert flat and "modulo/division" in flat[0].message and "32-bit" in flat[0].message


def test_an_unconfirmed_source_modulo_sinks_after_l3():
    gelu = ROOT / "evals" / "diagnosis" / "gelu_modulo.py"
    l1 = {f.id: f for f in diagnose(gelu, level="L1", gpu=False, settings=load_settings()).findings}
    full = {f.id: f for f in diagnose(gelu, level="L3", gpu=False, settings=load_settings()).findings}
    assert full["modulo_indexing"].level == "L1" and "not confirmed at L3" in full["modulo_indexing"].message
    assert full["modulo_indexing"].confidence < l1["modulo_indexing"].confidence


def test_a_ragged_last_wave_is_a_tail_effect_given_the_resident_blocks(col_sum):
    facts = launch_facts.capture(load_task(col_sum), "sm_90")
    # 7813 programs (case 4) on 132 SMs x 40 resident blocks = 1.48 waves: half the last wave idles
    (tail,) = launch_facts.tail_findings(facts, {"col_sum_kernel": 40}, str(col_sum))
    assert tail.id == "tail_effect" and [e.data["case"] for e in tail.evidence] == [4]
    assert "1.5 waves of 5280 resident programs" in tail.message
    # with 8 resident blocks the same grid runs 7.4 waves: the ragged last one costs little
    assert launch_facts.tail_findings(facts, {"col_sum_kernel": 8}, str(col_sum)) == []


def test_launch_evidence_points_at_the_launch_line(col_sum):
    facts = launch_facts.capture(load_task(col_sum), "sm_90")
    line = next(i for i, ln in enumerate(col_sum.read_text().splitlines(), 1) if "col_sum_kernel[(" in ln)
    assert {l.site for l in facts.launches} == {f"{col_sum.resolve()}:{line}"}
    tiny = next(f for f in launch_facts.findings(facts, str(col_sum)) if f.id == "low_occupancy")
    assert tiny.evidence[0].location == f"{col_sum.resolve()}:{line}"


def test_a_width_cause_never_compiled_ranks_below_the_grounded_findings(col_sum):
    diag = diagnose(col_sum, level="L1", gpu=False, settings=load_settings())
    found = {f.id: f for f in diag.findings}
    assert diag.findings[0].id == "low_occupancy" and diag.findings[0].confidence >= 0.6
    # 2 of 5 cases: below a grounded finding on its own breadth, and never above the cap for an uncompiled width cause
    assert found["misaligned_access"].confidence <= 0.59 and diag.findings.index(found["misaligned_access"]) > 0


def test_a_width_cause_on_every_case_is_capped_while_uncompiled(tmp_path):
    odd = COL_SUM.split("CASES = [")[0] + '''CASES = [{"M": 3001, "N": 5003, "dtype": "float16"}, {"M": 1001, "N": 999, "dtype": "float32"},
         {"M": 777, "N": 12345, "dtype": "float16"}, {"M": 65, "N": 99_999, "dtype": "float16"},
         {"M": 5000, "N": 3, "dtype": "float32"}]
'''
    diag = diagnose(_task(tmp_path, "odd_col_sum", odd), level="L1", gpu=False, settings=load_settings())
    (finding,) = [f for f in diag.findings if f.id == "misaligned_access"]
    assert finding.confidence == 0.59 and "not compiled" in finding.message


DISPATCH = '''
import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * D + cols, mask=cols < D, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


@triton.jit
def wide_row_sum_kernel(x_ptr, out_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, D, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        tl.atomic_add(out_ptr + row, tl.sum(tl.load(x_ptr + row * D + cols, mask=cols < D, other=0.0), axis=0))


def entry(x):
    rows, d = x.shape
    out = torch.zeros(rows, device=x.device, dtype=torch.float32)
    if d > LIMIT:
        wide_row_sum_kernel[(rows,)](x, out, d, BLOCK=1024)
    else:
        row_sum_kernel[(rows,)](x, out, d, BLOCK=triton.next_power_of_2(d))
    return out


def reference(x):
    return x.float().sum(dim=1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(case["rows"], case["d"], generator=g).to(device),)


CASES = [{"rows": 4096, "d": 1024}, {"rows": 8192, "d": 512}, {"rows": 1000, "d": 2048}]
FEW_CASES = "a dispatch test"
'''


@pytest.mark.parametrize("limit", [65536, 256])
def test_a_finding_on_a_kernel_no_case_launches_sinks(tmp_path, limit):
    """The wide-row kernel's atomics in a loop are a strong L1 signal; when the cases' sizes never select that
    kernel (LIMIT above every case) the finding costs nothing here and sinks below the launched kernel's."""
    path = _task(tmp_path, f"dispatch{limit}", DISPATCH.replace("LIMIT", str(limit)))
    diag = diagnose(path, level="L1", gpu=False, settings=load_settings())
    atomic = next(f for f in diag.findings if f.id == "atomic_contention")
    if limit > 2048:
        assert atomic.confidence <= 0.1 and "no case launches wide_row_sum_kernel" in atomic.message
    else:
        assert atomic.confidence >= 0.5 and diag.findings[0].id == "atomic_contention"


TILE_BOUND = '''
import torch
import triton
import triton.language as tl


@triton.jit
def rotate_kernel(x_ptr, cos_ptr, out_ptr, sl, H: tl.constexpr, HD: tl.constexpr, PAD_H: tl.constexpr,
                  PAD_HD: tl.constexpr):
    pid = tl.program_id(0)
    pos = pid % sl
    h = tl.arange(0, PAD_H)[:, None]
    d = tl.arange(0, PAD_HD // 2)[None, :]
    c = tl.load(cos_ptr + pos * HD + d, mask=d < HD // 2)
    offs = pid * H * HD + h * HD + d
    m = (h < H) & (d < HD // 2)
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x * c, mask=m)


def entry(x, cos, sl):
    tokens, h, hd = x.shape
    out = torch.zeros_like(x)
    rotate_kernel[(tokens,)](x, cos, out, sl, H=h, HD=hd, PAD_H=triton.next_power_of_2(h),
                             PAD_HD=triton.next_power_of_2(hd))
    return out


def reference(x, cos, sl):
    tokens, h, hd = x.shape
    pos = torch.arange(tokens, device=x.device) % sl
    out = torch.zeros_like(x)
    out[..., : hd // 2] = x[..., : hd // 2] * cos[pos, : hd // 2][:, None, :]
    return out


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["tokens"], case["H"], case["HD"], generator=g).to(torch.bfloat16)
    cos = torch.randn(case["sl"], case["HD"], generator=g).to(torch.bfloat16)
    return x.to(device), cos.to(device), case["sl"]


CASES = [{"tokens": 4096, "H": 32, "HD": 128, "sl": 1024}, {"tokens": 4000, "H": 8, "HD": 64, "sl": 1000}]
FEW_CASES = "a tile-width test"
'''


def test_a_case_whose_tile_sets_its_width_does_not_confirm_misalignment(tmp_path):
    """Case 1 loses 16-divisibility on `sl` and compiles 32-bit accesses where case 0 has 128-bit, but its 8 x 32
    bf16 tile gives each of 128 threads only 4 bytes: the tile, not alignment, sets the width (a rope kernel's
    small-head case), so L3 does not confirm misaligned_access."""
    path = _task(tmp_path, "tile_bound", TILE_BOUND)
    diag = diagnose(path, gpu=False, settings=load_settings())
    (finding,) = [f for f in diag.findings if f.id == "misaligned_access"]
    assert finding.level == "L1" and "not confirmed at L3" in finding.message and finding.confidence < 0.4


TINY_TILE = '''
import torch
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def entry(x):
    out = torch.empty_like(x)
    double_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128, num_warps=4)
    return out


def reference(x):
    return x * 2


def make_inputs(case, device, seed):
    return (torch.randn(case["n"], generator=torch.Generator().manual_seed(seed)).to(device),)


CASES = [{"n": 1_000_003}]
FEW_CASES = "a width test"
'''


def test_an_access_its_tile_keeps_narrow_is_small_block_not_its_mask(tmp_path):
    """128 fp32 elements over 128 threads give each thread 4 bytes: the accesses are 32-bit whatever the mask
    bound `n` (not known divisible by 16), so L3 names the tile (small_block), not the mask."""
    path = _task(tmp_path, "tiny_tile", TINY_TILE)
    report = attribute(compile_task(load_task(path), target="sm_90"), path)
    access = [f for facts in report.lines.values() for f in facts if f.get("kind") in ("load", "store")]
    assert access and all(f["thread_bytes"] <= f["vector_bytes"] < 16 and f["mask_bounds"] for f in access)
    ids = [f.id for f in report.findings]
    assert ids[0] == "small_block" and not set(ids) & {"masked_access", "misaligned_access"}


PER_CHANNEL = '''
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, w_ptr, y_ptr, n, C, HW, K, split, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    c = (offs // HW) % C  # the channel of every element
    start = tl.program_id(1) * (K // split)  # a scalar quotient: an offset of unknown alignment
    x = tl.load(x_ptr + start + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * tl.load(w_ptr + c), mask=offs < n)
'''


def test_a_per_element_divisor_is_no_alignment_argument_but_a_scalar_quotient_is(tmp_path):
    """`(offs // HW) % C` makes the division the cost (modulo_indexing), not HW's or C's 16-divisibility: they are no
    address arguments. `K // split` on scalars is an offset whose alignment follows K and split: both stay."""
    path = _task(tmp_path, "per_channel", PER_CHANNEL)
    spec = importlib.util.spec_from_file_location("per_channel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    addresses, mask_only = launch_facts.address_args(module.scale_kernel.fn)
    assert {"K", "split", "n", "x_ptr", "w_ptr", "y_ptr"} <= addresses and not addresses & {"HW", "C"}
    assert mask_only == {"n"}


def test_a_strided_access_is_checked_against_the_stride_each_case_passes(tmp_path):
    """The flat transpose multiplies the lanes' digit `offs % M` by the runtime N: an uncoalesced read unless N is 1,
    and the cases say which: N of 96-2048 confirms it (grounded at L1); N of 1 in every case refutes it."""
    fixture = (Path(__file__).parent / "fixtures" / "l1" / "flat_batched_transpose.py").read_text()
    strided = diagnose(_task(tmp_path, "strided", fixture), level="L1", gpu=False, settings=load_settings())
    (finding,) = [f for f in strided.findings if f.id == "uncoalesced_access"]
    assert finding.confidence >= 0.7 and "N is 96-2048 in every case, never 1" in finding.message
    assert any(e.source == "launch" and e.data.get("stride") == "N" for e in finding.evidence)
    flat = fixture.split("CASES = ")[0] + 'CASES = [{"B": 8, "M": 1024, "N": 1}, {"B": 3, "M": 999, "N": 1}]\n'
    ones = diagnose(_task(tmp_path, "ones", flat + 'FEW_CASES = "a stride test"\n'), level="L1", gpu=False,
                    settings=load_settings())
    (finding,) = [f for f in ones.findings if f.id == "uncoalesced_access"]
    assert finding.confidence < 0.2 and "N is 1 in every case" in finding.message


BINS = '''
import triton
import triton.language as tl


@triton.jit
def bins_kernel(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    b = tl.minimum(tl.maximum(x.to(tl.int32), 0), 63)
    tl.atomic_add(hist_ptr + b, 1, mask=offs < n)
'''


def test_an_index_loaded_from_a_tensor_does_not_make_the_tensor_written(tmp_path):
    """A histogram's bins come from x, so x is in the atomic's address expression, but the atomic writes only hist: x
    read as data is no intermediate the kernel writes and reads back (it once was, and unfused_ops led)."""
    path = _task(tmp_path, "bins", BINS)
    spec = importlib.util.spec_from_file_location("bins", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _, _, loaded, stored = launch_facts._access_args(module.bins_kernel.fn)
    assert stored == {"hist_ptr"} and loaded == {"x_ptr", "BLOCK"}


UPSAMPLE = '''
import torch
import triton
import triton.language as tl


@triton.jit
def upsample_kernel(x_ptr, out_ptr, n_out, r, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.minimum(offs, n_out - 1) // r)
    tl.store(out_ptr + offs, x, mask=offs < n_out)


def entry(x, r):
    out = torch.empty(x.numel() * r, device=x.device, dtype=x.dtype)
    upsample_kernel[(triton.cdiv(out.numel(), 1024),)](x, out, out.numel(), r, BLOCK=1024)
    return out


def reference(x, r):
    return x.repeat_interleave(r)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(case["n"], generator=g).to(device), case["r"]


CASES = [{"n": 100003, "r": 3}, {"n": 77777, "r": 5}, {"n": 4099, "r": 7}]
FEW_CASES = "a width-cause test"
'''


def test_with_no_aligned_case_a_load_narrowed_by_its_division_does_not_confirm_misalignment(tmp_path):
    """Every case's odd `n_out` costs the masked store its width, but the load's offsets pass through `// r`: L3
    names the division first, so the load is not cited as narrowed by the launch fact; the store is."""
    path = _task(tmp_path, "upsample", UPSAMPLE)
    diag = diagnose(path, level="L3", gpu=False, settings=load_settings())
    lines = path.read_text().splitlines()
    load_line, store_line = (next(i for i, ln in enumerate(lines, 1) if text in ln) for text in ("x = tl.load", "tl.store"))
    confirmed = [f for f in diag.findings if f.id in ("masked_access", "misaligned_access") and f.level == "L3"
                 and any(e.data.get("case") is not None for e in f.evidence)]
    assert confirmed and all(load_line not in f.kernel_lines for f in confirmed)
    assert any(store_line in f.kernel_lines for f in confirmed)
