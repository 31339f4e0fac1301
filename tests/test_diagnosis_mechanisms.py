"""Mechanisms behind slow kernels written elsewhere (issue 22): a matmul written as a broadcast product, fp64 math,
many runtime divisions per element, a serial chain down a long axis, a reduction the grid does not split, and an
entry whose kernels re-read inputs, round-trip intermediates or launch once per small tensor. Small kernels of our
own, Triton's real binder, compiler (sm_90, no GPU) and interpreter; findings rank causes above what they explain."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kopt.config import load_settings
from kopt.diagnose import launch_causes, launch_facts
from kopt.diagnose.escalate import diagnose, symptom
from kopt.diagnose.l1 import triage
from kopt.diagnose.l1_detectors import detect_signals
from kopt.patterns import load_patterns
from kopt.signals import SIGNALS
from kopt.task import load_task
from kopt.vocabulary import Evidence, Finding

FIXTURES = Path(__file__).parent / "fixtures" / "l1"

HEADER = '''
import torch
import triton
import triton.language as tl
'''

COL_SUMSQ = HEADER + '''

@triton.jit
def col_sumsq_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=(rows[:, None] < M) & (cols[None, :] < N), other=0.0)
        acc += x * x
    tl.store(y_ptr + cols, tl.sum(acc, axis=0), mask=cols < N)


def entry(x):
    M, N = x.shape
    y = torch.empty((N,), device=x.device, dtype=torch.float32)
    col_sumsq_kernel[(triton.cdiv(N, 128),)](x, y, M, N, BLOCK_M=64, BLOCK_N=128)
    return y


def reference(x):
    return (x * x).sum(0)


def make_inputs(case, device, seed):
    return (torch.randn(case["M"], case["N"]).to(device),)


CASES = [{"M": 65536, "N": 1024}, {"M": 16384, "N": 4096}]
FEW_CASES = "a diagnosis test: its cases only need to show the mechanism"
'''

# min-max scaling: one kernel finds the extremes, a second reads x again to scale it
TWO_READS = HEADER + '''

@triton.jit
def minmax_kernel(x_ptr, lo_ptr, hi_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_min(lo_ptr, tl.min(x, axis=0))
    tl.atomic_max(hi_ptr, tl.max(x, axis=0))


@triton.jit
def scale_kernel(x_ptr, lo_ptr, hi_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    lo = tl.load(lo_ptr)
    hi = tl.load(hi_ptr)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs, (x - lo) / (hi - lo), mask=offs < n)


def entry(x):
    lo = torch.full((1,), float("inf"), device=x.device)
    hi = torch.full((1,), float("-inf"), device=x.device)
    y = torch.empty_like(x)
    grid = (triton.cdiv(x.numel(), 4096),)
    minmax_kernel[grid](x, lo, hi, x.numel(), BLOCK=4096)
    scale_kernel[grid](x, lo, hi, y, x.numel(), BLOCK=4096)
    return y


def reference(x):
    return (x - x.min()) / (x.max() - x.min())


def make_inputs(case, device, seed):
    return (torch.randn(case["n"]).to(device),)


CASES = [{"n": 1 << 26}, {"n": 1 << 24}]
FEW_CASES = "a diagnosis test: its cases only need to show the mechanism"
'''

# y = relu(x * w) as two kernels: the product goes to memory and comes back
ROUND_TRIP = HEADER + '''

@triton.jit
def mul_kernel(x_ptr, w_ptr, t_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(t_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * tl.load(w_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def relu_kernel(t_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.maximum(tl.load(t_ptr + offs, mask=offs < n), 0.0), mask=offs < n)


def entry(x, w):
    t = torch.empty_like(x)
    y = torch.empty_like(x)
    grid = (triton.cdiv(x.numel(), 4096),)
    mul_kernel[grid](x, w, t, x.numel(), BLOCK=4096)
    relu_kernel[grid](t, y, x.numel(), BLOCK=4096)
    return y


def reference(x, w):
    return torch.relu(x * w)


def make_inputs(case, device, seed):
    return torch.randn(case["n"]).to(device), torch.randn(case["n"]).to(device)


CASES = [{"n": 1 << 26}]
FEW_CASES = "a diagnosis test: its cases only need to show the mechanism"
'''

# a list of small tensors, one launch each; the start offset is drawn as a Python int (fake tensors cannot)
PER_TENSOR = HEADER + '''

@triton.jit
def absmax_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_max(out_ptr, tl.max(tl.abs(tl.load(x_ptr + offs, mask=offs < n, other=0.0)), axis=0))


def entry(*xs):
    out = torch.zeros(len(xs), device=xs[0].device)
    for i, x in enumerate(xs):
        absmax_kernel[(triton.cdiv(x.numel(), 1024),)](x, out[i:], x.numel(), BLOCK=1024)
    return out


def reference(*xs):
    return torch.stack([x.abs().max() for x in xs])


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    base = int(torch.randint(1, 64, (1,), generator=g))
    return tuple(torch.randn(base * 1024 + i).to(device) for i in range(case["tensors"]))


CASES = [{"tensors": 40}]
FEW_CASES = "a diagnosis test: its cases only need to show the mechanism"
'''


# the kernel works on an fp32 copy of a bf16 input, and the result is cast back in torch
CAST_AROUND = HEADER + '''

@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, 0.5 * x * (1 + tl.erf(x * 0.7071067811865476)), mask=offs < n)


def entry(x):
    x32 = x.float()
    y = torch.empty_like(x32)
    gelu_kernel[(triton.cdiv(x32.numel(), 4096),)](x32, y, x32.numel(), BLOCK=4096)
    return y.to(x.dtype)


def reference(x):
    return torch.nn.functional.gelu(x.float()).to(x.dtype)


def make_inputs(case, device, seed):
    return (torch.randn(case["n"]).to(torch.bfloat16).to(device),)


CASES = [{"n": 1 << 26}]
FEW_CASES = "a diagnosis test: its cases only need to show the mechanism"
'''


# a whole row per program on one warp: 8192 floats give each of 32 threads 256 values
ROW_ON_ONE_WARP = HEADER + '''

@triton.jit
def row_scale_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * N + cols, mask=cols < N, other=0.0)
    tl.store(y_ptr + tl.program_id(0) * N + cols, x / tl.max(tl.abs(x), axis=0), mask=cols < N)


def entry(x):
    M, N = x.shape
    y = torch.empty_like(x)
    row_scale_kernel[(M,)](x, y, N, BLOCK=triton.next_power_of_2(N), num_warps=1)
    return y


def reference(x):
    return x / x.abs().amax(dim=1, keepdim=True)


def make_inputs(case, device, seed):
    return (torch.randn(case["M"], case["N"]).to(device),)


CASES = [{"M": 4096, "N": 8192}, {"M": 4096, "N": 1000}]
FEW_CASES = "a diagnosis test: its cases only need to show the mechanism"
'''


# an fp16 matmul whose K loop is launched with STAGES stages
STAGED_MATMUL = HEADER + '''

@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, K, N, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :]),
                     tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :]), acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def entry(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    mm_kernel[(M // 128, N // 128)](a, b, c, K, N, BM=128, BN=128, BK=64, num_stages=STAGES)
    return c


def reference(a, b):
    return (a.float() @ b.float()).half()


def make_inputs(case, device, seed):
    return (torch.randn(case["M"], case["K"]).half().to(device), torch.randn(case["K"], case["N"]).half().to(device))


CASES = [{"M": 4096, "N": 4096, "K": 4096}]
FEW_CASES = "a diagnosis test: its cases only need to show the mechanism"
'''


# one program per (token, head): each moves one 64-value head vector, whatever a block size could be
PER_HEAD = HEADER + '''

@triton.jit
def head_scale_kernel(x_ptr, s_ptr, y_ptr, H, HEAD_DIM: tl.constexpr):
    row = tl.program_id(0) * H + tl.program_id(1)
    d = tl.arange(0, HEAD_DIM)
    x = tl.load(x_ptr + row * HEAD_DIM + d)
    tl.store(y_ptr + row * HEAD_DIM + d, x * tl.load(s_ptr + tl.program_id(1)))


def entry(x, s):
    T, H, D = x.shape
    y = torch.empty_like(x)
    head_scale_kernel[(T, H)](x, s, y, H, HEAD_DIM=D)
    return y


def reference(x, s):
    return x * s[None, :, None]


def make_inputs(case, device, seed):
    return torch.randn(case["T"], case["H"], case["D"]).to(device), torch.randn(case["H"]).to(device)


CASES = [{"T": 32768, "H": 32, "D": 64}, {"T": 8192, "H": 16, "D": 64}]
FEW_CASES = "a diagnosis test: its cases only need to show the mechanism"
'''


PER_SAMPLE_SUM = HEADER + '''

@triton.jit
def row_sumsq_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * N + offs, mask=offs < N, other=0.0)
        acc += x * x
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


def entry(x):
    B, N = x.shape
    y = torch.empty((B,), device=x.device, dtype=torch.float32)
    row_sumsq_kernel[(B,)](x, y, N, BLOCK=4096)
    return y


def reference(x):
    return (x * x).sum(1)


def make_inputs(case, device, seed):
    return (torch.randn(case["B"], case["N"]).to(device),)


CASES = [{"B": 8, "N": 1 << 24}, {"B": 16, "N": 3 << 22}]
FEW_CASES = "a diagnosis test: its cases only need to show the mechanism"
'''

GATHER_AFTER = HEADER + '''

@triton.jit
def scale_rows_kernel(x_ptr, t_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * V + cols, mask=cols < V, other=0.0)
        tl.store(t_ptr + row * V + cols, x * 2.0, mask=cols < V)


@triton.jit
def pick_kernel(t_ptr, idx_ptr, y_ptr, M, V, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    i = tl.load(idx_ptr + rows, mask=rows < M, other=0)
    tl.store(y_ptr + rows, tl.load(t_ptr + rows * V + i, mask=rows < M), mask=rows < M)


def entry(x, idx):
    M, V = x.shape
    t = torch.empty_like(x)
    scale_rows_kernel[(M,)](x, t, V, BLOCK=4096)
    y = torch.empty((M,), device=x.device, dtype=x.dtype)
    pick_kernel[(triton.cdiv(M, 256),)](t, idx, y, M, V, BLOCK=256)
    return y


def reference(x, idx):
    return 2.0 * x.gather(1, idx[:, None])[:, 0]


def make_inputs(case, device, seed):
    M, V = case["M"], case["V"]
    return (torch.randn(M, V).to(device), torch.randint(0, V, (M,)).to(device))


CASES = [{"M": 4096, "V": 32000}, {"M": 8192, "V": 50257}]
FEW_CASES = "a diagnosis test: its cases only need to show the mechanism"
'''

BATCH_GEMV = HEADER + '''

@triton.jit
def gemv_kernel(x_ptr, w_ptr, y_ptr, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    b = tl.program_id(1)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + tl.arange(0, BLOCK_K)
        xv = tl.load(x_ptr + b * K + kk)
        w = tl.load(w_ptr + rn[:, None] * K + kk[None, :])
        acc += tl.sum(w * xv[None, :], axis=1)
    tl.store(y_ptr + b * N + rn, acc)


def entry(x, w):
    B, K = x.shape
    y = torch.empty((B, w.shape[0]), device=x.device, dtype=torch.float32)
    gemv_kernel[(triton.cdiv(w.shape[0], 64), B)](x, w, y, w.shape[0], K, BLOCK_N=64, BLOCK_K=128)
    return y


def reference(x, w):
    return x @ w.T


def make_inputs(case, device, seed):
    return (torch.randn(case["B"], case["K"]).to(device), torch.randn(case["N"], case["K"]).to(device))


CASES = [{"B": 4, "N": 8192, "K": 8192}, {"B": 8, "N": 14336, "K": 4096}]
FEW_CASES = "a diagnosis test: its cases only need to show the mechanism"
'''


ROW_BLOCKS = HEADER + '''

@triton.jit
def gate_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    row = tl.program_id(1)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N)
    tl.store(y_ptr + row * N + cols, x * tl.sigmoid(x), mask=cols < N)


def entry(x):
    T, N = x.shape
    y = torch.empty_like(x)
    gate_kernel[(triton.cdiv(N, 64), T)](x, y, N, BLOCK=64)
    return y


def reference(x):
    return x * torch.sigmoid(x)


def make_inputs(case, device, seed):
    return (torch.randn(case["T"], case["N"]).to(device),)


CASES = [{"T": 16384, "N": 11008}, {"T": 4096, "N": 14336}]
FEW_CASES = "a diagnosis test: its cases only need to show the mechanism"
'''

TOKEN_MAX = HEADER + '''

@triton.jit
def token_max_kernel(x_ptr, y_ptr, T, E, BLOCK_T: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    best = tl.full([BLOCK_T], float("-inf"), dtype=tl.float32)
    for j in range(E):
        best = tl.maximum(best, tl.load(x_ptr + rows * E + j, mask=rows < T, other=float("-inf")))
    tl.store(y_ptr + rows, best, mask=rows < T)


def entry(x):
    T, E = x.shape
    y = torch.empty(T, device=x.device, dtype=x.dtype)
    token_max_kernel[(triton.cdiv(T, 128),)](x, y, T, E, BLOCK_T=128)
    return y


def reference(x):
    return x.max(dim=1).values


def make_inputs(case, device, seed):
    return (torch.randn(case["T"], case["E"]).to(device),)


CASES = [{"T": 1 << 20, "E": 64}, {"T": 300_000, "E": 160}]
FEW_CASES = "a diagnosis test: its cases only need to show the mechanism"
'''

def _task(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def _l1(path: Path):
    return diagnose(path, level="L1", gpu=False, settings=load_settings()).findings


def _signals(kernel: str) -> set[str]:
    return {s.name for s in detect_signals(HEADER + textwrap.dedent(kernel))[0]}


def test_a_broadcast_product_summed_over_k_is_a_matmul_without_tensor_cores():
    (finding,) = [f for f in triage(FIXTURES / "outer_product_matmul.py") if f.id == "no_tensor_cores"]
    assert "matrix product" in finding.message and finding.kernel_lines == [17]
    assert "tl.dot applies" in finding.conditions[0]


def test_a_matrix_vector_product_is_not_a_missed_matmul():
    gemv = '''
    @triton.jit
    def gemv_kernel(w_ptr, x_ptr, y_ptr, K, BN: tl.constexpr, BK: tl.constexpr):
        rn = tl.program_id(0) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        w = tl.load(w_ptr + rn[:, None] * K + rk[None, :])
        x = tl.load(x_ptr + rk)
        tl.store(y_ptr + rn, tl.sum(w * x[None, :], axis=1))
    '''
    assert "broadcast_matmul" not in _signals(gemv)


def test_fp64_math_is_a_compute_bound_cause_not_a_bare_symptom():
    findings = _l1(FIXTURES / "fp64_softplus.py")
    assert findings[0].id == "compute_bound" and not symptom(findings[0])
    assert "tl.float64" in findings[0].message and "exp, log" in findings[0].message
    assert "explains masked_access" in findings[0].message  # 10_000_019 elements: the odd mask bound is secondary
    profiled = Finding("compute_bound", "L2", "sm throughput 92%", 0.8, [Evidence("L2", "ncu", "sm 92%")])
    assert symptom(profiled)  # ncu alone says what, not why


def test_many_runtime_divisions_per_element_outrank_the_alignment_they_cost():
    findings = _l1(FIXTURES / "torus_blur.py")
    ids = [f.id for f in findings]
    assert ids[0] == "modulo_indexing" and "misaligned_access" in ids  # case 1 (3001 x 5003) loses divisibility
    assert "6 integer %/// by runtime values (H, W)" in findings[0].message
    assert "explains misaligned_access" in findings[0].message
    assert "secondary to modulo_indexing" in findings[ids.index("misaligned_access")].message


def test_one_or_two_divisions_leave_the_alu_cost_alone():
    few = '''
    @triton.jit
    def bias_kernel(x_ptr, b_ptr, y_ptr, n, N, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(y_ptr + offs, x + tl.load(b_ptr + offs % N, mask=offs < n), mask=offs < n)
    '''
    assert _signals(few) >= {"modulo_offsets"} and "runtime_divmod" not in _signals(few)


def test_a_serial_chain_down_a_long_axis_is_the_cause_of_its_tiny_grid():
    findings = _l1(FIXTURES / "column_sums_by_row.py")
    ids = [f.id for f in findings]
    assert ids[:2] == ["serial_reduction", "low_occupancy"]  # 4096 / 256 = 16 programs
    assert any("one row per iteration" in e.summary for e in findings[0].evidence)
    assert "secondary to serial_reduction" in findings[1].message


def test_a_scan_stepped_one_position_per_trip_is_a_scalar_loop_explaining_its_chain_and_grid():
    findings = _l1(FIXTURES / "running_max_rows.py")  # a running max stored every row: a scan, not a reduction
    ids = [f.id for f in findings]
    assert ids[0] == "scalar_loop" and "chunked_scan" in SIGNAL_PATTERNS["stepped_scan"]
    assert any("stores the running acc each time" in e.summary for e in findings[0].evidence)
    assert "low_occupancy" in ids[1:]
    assert "serial_chain" not in {s.name for s in detect_signals((FIXTURES / "running_max_rows.py").read_text())[0]}
    assert all("secondary to scalar_loop" in f.message for f in findings if f.id in ("low_occupancy", "serial_reduction"))


def test_a_blocked_loop_is_no_serial_chain():
    blocked = '''
    @triton.jit
    def running_sum_kernel(x_ptr, y_ptr, T, C, BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
        cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
        carry = tl.zeros((BLOCK_C,), dtype=tl.float32)
        for t0 in range(0, T, BLOCK_T):
            rows = t0 + tl.arange(0, BLOCK_T)
            tile = tl.load(x_ptr + rows[:, None] * C + cols[None, :])
            tl.store(y_ptr + rows[:, None] * C + cols[None, :], tl.cumsum(tile, axis=0) + carry[None, :])
            carry += tl.sum(tile, axis=0)
    '''
    assert "serial_chain" not in _signals(blocked)


def test_a_reduction_the_grid_does_not_split_is_named_beside_the_tiny_grid(tmp_path):
    path = _task(tmp_path, "col_sumsq", COL_SUMSQ)
    found = {f.id: f for f in _l1(path)}
    serial, tiny = found["serial_reduction"], found["low_occupancy"]
    loop = next(i for i, line in enumerate(path.read_text().splitlines(), 1) if "for m0 in" in line)
    assert "walks the whole M axis" in serial.message and serial.kernel_lines == [loop]
    assert tiny.confidence > serial.confidence > 0.6  # 8 and 32 programs: the grid names the symptom first


def test_a_reduction_over_a_grid_of_one_program_per_item_is_the_cause(tmp_path):
    path = _task(tmp_path, "row_sumsq", PER_SAMPLE_SUM)
    found = _l1(path)
    ids = [f.id for f in found]
    assert ids.index("serial_reduction") < ids.index("low_occupancy")  # no tile size adds a program: split the walk
    assert launch_causes.entity_grid(str(path), "row_sumsq_kernel")


def test_a_tiny_grid_reading_an_intermediate_back_is_secondary_to_the_fusion(tmp_path):
    path = _task(tmp_path, "scale_pick", GATHER_AFTER)
    findings = _l1(path)
    tiny = next(f for f in findings if f.id == "low_occupancy")
    assert findings[0].id == "unfused_ops" and "pick_kernel" in tiny.message
    assert "secondary to unfused_ops" in tiny.message
    assert any("only reads the intermediate back" in e.summary for e in findings[0].evidence)


def test_a_weight_streamed_once_per_batch_row_is_a_redundant_load(tmp_path):
    path = _task(tmp_path, "batch_gemv", BATCH_GEMV)
    assert "axis_invariant_tile" in _signals(BATCH_GEMV.split("def entry")[0].replace(HEADER, ""))
    top = _l1(path)[0]
    assert top.id == "redundant_loads" and top.confidence >= launch_facts.REREAD_CONFIRMED
    assert "grid axis 1 is 4-8 wide over the cases" in top.message


def test_a_dot_or_one_axis_grid_streams_no_axis_invariant_tile():
    dot = BATCH_GEMV.split("def entry")[0].replace(HEADER, "").replace(
        "acc += tl.sum(w * xv[None, :], axis=1)", "acc += tl.sum(tl.dot(w, tl.trans(w)), axis=1)")
    one_axis = BATCH_GEMV.split("def entry")[0].replace(HEADER, "").replace("b = tl.program_id(1)", "b = 0")
    assert "axis_invariant_tile" not in _signals(dot) | _signals(one_axis)


def test_polling_a_predecessor_in_a_while_loop_is_a_chain_not_a_lock():
    chained = '''
    @triton.jit
    def chained_sum_kernel(x_ptr, y_ptr, flag_ptr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        total = tl.sum(tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK)), axis=0)
        prefix = 0.0
        if pid > 0:
            while tl.atomic_add(flag_ptr + pid - 1, 0) == 0:
                pass
            prefix = tl.load(y_ptr + pid - 1, volatile=True)
        tl.store(y_ptr + pid, prefix + total)
        tl.atomic_xchg(flag_ptr + pid, 1)
    '''
    lock = '''
    @triton.jit
    def locked_add_kernel(x_ptr, y_ptr, lock_ptr, BLOCK: tl.constexpr):
        total = tl.sum(tl.load(x_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)), axis=0)
        while tl.atomic_cas(lock_ptr, 0, 1) == 1:
            pass
        tl.store(y_ptr, tl.load(y_ptr) + total)
        tl.atomic_xchg(lock_ptr, 0)
    '''
    assert "spin_wait" in _signals(chained) and "spin_lock" not in _signals(chained)
    assert "spin_lock" in _signals(lock) and "spin_wait" not in _signals(lock)


def test_an_input_read_by_two_kernels_is_unfused(tmp_path):
    path = _task(tmp_path, "minmax_scale", TWO_READS)
    facts = launch_facts.capture(load_task(path), "sm_90")
    (unfused,) = [f for f in launch_facts.findings(facts, str(path)) if f.id == "unfused_ops"]
    assert "an input of 268 MB is read by 2 launches (minmax_kernel, scale_kernel)" in unfused.message
    moved, needed = unfused.evidence[0].data["moved"], unfused.evidence[0].data["needed"]
    assert abs(moved / needed - 1.5) < 1e-3  # x twice and y once, where x and y once each would do
    small = _task(tmp_path, "minmax_small", TWO_READS.replace('CASES = [{"n": 1 << 26}, {"n": 1 << 24}]',
                                                              'CASES = [{"n": 1 << 18}]'))
    facts = launch_facts.capture(load_task(small), "sm_90")  # 1 MB read twice: less time than a launch takes
    assert not [f for f in launch_facts.findings(facts, str(small)) if f.id == "unfused_ops"]


def test_an_intermediate_written_and_read_back_is_unfused_and_ranks_first(tmp_path):
    path = _task(tmp_path, "mul_relu", ROUND_TRIP)
    findings = _l1(path)
    assert findings[0].id == "unfused_ops"
    assert "an intermediate of 268 MB is written by mul_kernel and read back by relu_kernel" in findings[0].message


def test_one_kernel_per_fused_entry_is_not_unfused(tmp_path):
    path = _task(tmp_path, "col_sumsq", COL_SUMSQ)
    facts = launch_facts.capture(load_task(path), "sm_90")
    assert "unfused_ops" not in {f.id for f in launch_facts.findings(facts, str(path))}


def test_a_launch_per_small_tensor_is_unfused_even_with_data_dependent_inputs(tmp_path):
    path = _task(tmp_path, "absmax_each", PER_TENSOR)
    facts = launch_facts.capture(load_task(path), "sm_90")
    assert facts.skipped == {} and len(facts.launches) == 40  # int(torch.randint(...)): inputs made for real
    (unfused,) = [f for f in launch_facts.findings(facts, str(path)) if f.id == "unfused_ops"]
    assert "40 launches" in unfused.message
    assert _l1(path)[0].id == "unfused_ops"


@pytest.mark.parametrize("name, case", [("outer_product_matmul", {"M": 40, "N": 24, "K": 20}),
                                        ("running_max_rows", {"T": 9, "C": 300}),
                                        ("column_sums_by_row", {"T": 9, "C": 300}),
                                        ("torus_blur", {"H": 5, "W": 7}),
                                        ("fp64_softplus", {"n": 1000})])
def test_the_fixtures_compute_what_they_claim_in_the_interpreter(name, case):
    code = ("import importlib.util, torch\n"
            f"spec = importlib.util.spec_from_file_location('t', {str(FIXTURES / (name + '.py'))!r})\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            f"x = m.make_inputs({case!r}, 'cpu', 0)\n"
            "torch.testing.assert_close(m.entry(*x), m.reference(*x), rtol=1e-2, atol=1e-2); print('ok')\n")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]


def test_a_grid_of_one_program_per_head_explains_the_small_tile_it_compiles_to(tmp_path):
    path = _task(tmp_path, "head_scale", PER_HEAD)
    findings = diagnose(path, level="L3", gpu=False, settings=load_settings()).findings
    ids = [f.id for f in findings]
    assert ids[0] == "too_many_programs" and "one program per item of the grid's axes" in findings[0].message
    assert "small_block" in ids and "secondary to too_many_programs" in findings[ids.index("small_block")].message


def test_a_grid_that_shrinks_as_the_block_grows_is_not_per_item():
    path = FIXTURES / "small_block_add.py"
    assert not launch_causes.entity_grid(str(path), "add_kernel")


def test_an_fp64_accumulator_alone_claims_no_alu_bound(tmp_path):
    path = tmp_path / "sum64.py"
    path.write_text(HEADER + textwrap.dedent('''
    @triton.jit
    def sum64_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float64)
        tl.atomic_add(y_ptr, tl.sum(x, axis=0))
    '''))
    (finding,) = [f for f in triage(path) if f.id == "compute_bound"]
    assert finding.confidence < 0.4 and not any(e.data.get("explains") for e in finding.evidence)


def test_torch_casts_around_the_kernel_are_unfused_traffic(tmp_path):
    path = _task(tmp_path, "gelu_cast", CAST_AROUND)
    facts = launch_facts.capture(load_task(path), "sm_90")
    assert set(facts.torch_ops[0]) == {"_to_copy"}  # x.float() and y.to(bf16); empty_like moves nothing
    (unfused,) = [f for f in launch_facts.findings(facts, str(path)) if f.id == "unfused_ops"]
    assert "torch ops move 805 MB outside the kernels (_to_copy 805 MB)" in unfused.message


def test_a_tile_past_the_registers_of_its_threads_is_a_spill_before_compiling(tmp_path):
    path = _task(tmp_path, "row_scale", ROW_ON_ONE_WARP)
    facts = launch_facts.capture(load_task(path), "sm_90")
    (spill,) = launch_causes.spill_findings(facts, str(path))
    assert [e.data["case"] for e in spill.evidence] == [0]  # N=1000: 1024 values on 32 threads fit
    assert "8192-value tile on 32 threads: 256 values per thread" in spill.message


@pytest.mark.parametrize("stages, flagged", [(1, True), (3, False)])
def test_a_dot_loop_launched_single_staged_is_unpipelined_before_compiling(tmp_path, stages, flagged):
    path = _task(tmp_path, "mm", STAGED_MATMUL.replace("STAGES", str(stages)))
    facts = launch_facts.capture(load_task(path), "sm_90")
    found = launch_causes.pipelining_findings(facts, str(path))
    assert bool(found) == flagged
    assert not flagged or "num_stages=1 on 1 of 1 cases" in found[0].message


def test_inputs_made_for_real_stay_within_a_budget(tmp_path):
    huge = PER_TENSOR.replace('CASES = [{"tensors": 40}]', 'CASES = [{"tensors": 40}, {"tensors": 2, "rows": 100_000}]')
    huge = huge.replace("torch.randn(base * 1024 + i)", "torch.randn(case.get('rows', 1), base * 1024 + i)")
    path = _task(tmp_path, "absmax_huge", huge)
    facts = launch_facts.capture(load_task(path), "sm_90")  # case 1 would be 100_000 x ~1M floats per tensor
    assert set(facts.skipped) == {1} and "MemoryError: over the 4 GB" in facts.skipped[1]
    assert {l.case for l in facts.launches} == {0}


def test_many_tiny_programs_over_a_grid_tiled_by_a_small_block_are_the_block(tmp_path):
    findings = _l1(_task(tmp_path, "row_gate", ROW_BLOCKS))  # cdiv(N, 64) x T programs of 64 elements
    ids = [f.id for f in findings]
    assert ids[0] == "small_block" and "too_many_programs" in ids
    assert "secondary to small_block" in next(f for f in findings if f.id == "too_many_programs").message
    per_head = _l1(_task(tmp_path, "head_scale", PER_HEAD))  # one program per (token, head): the grid, not a block
    assert per_head[0].id == "too_many_programs"
    # a block no source rule calls small (128 elements), whose programs each still move only 1 KB: the launch says it
    wider = _l1(_task(tmp_path, "row_gate_128", ROW_BLOCKS.replace("64", "128")))
    assert wider[0].id == "small_block" and "grid counts tiles of a hard-coded BLOCK=128" in wider[0].message
    assert "secondary to small_block" in next(f for f in wider if f.id == "too_many_programs").message


def test_a_chain_over_an_axis_one_tile_could_hold_is_a_scalar_loop(tmp_path):
    findings = _l1(_task(tmp_path, "token_max", TOKEN_MAX))  # one expert column per trip, E <= 160 in every case
    assert findings[0].id == "scalar_loop" and "E is at most 160 in every case" in findings[0].message
    assert "secondary to scalar_loop" in next(f for f in findings if f.id == "serial_reduction").message
    long_axis = _l1(FIXTURES / "column_sums_by_row.py")  # T is 16384-100000: split it
    assert long_axis[0].id == "serial_reduction"
    # a tile of rows per trip is the lesser reading of a long chain: it stays well under the split
    (rows,) = [f for f in long_axis if f.id == "scalar_loop"]
    assert "takes one row per trip" in rows.message and rows.confidence <= long_axis[0].confidence / 2


def test_a_persistent_loop_carrying_only_counters_is_no_serial_chain():
    persistent = '''
    @triton.jit
    def persistent_scale_kernel(x_ptr, sizes_ptr, y_ptr, n_groups, NUM_PROGRAMS: tl.constexpr, BLOCK: tl.constexpr):
        tile = tl.program_id(0)
        start = 0
        for g in range(n_groups):
            size = tl.load(sizes_ptr + g)
            tiles = tl.cdiv(size, BLOCK)
            while tile < start + tiles:
                offs = start * BLOCK + (tile - start) * BLOCK + tl.arange(0, BLOCK)
                tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2.0)
                tile += NUM_PROGRAMS
            start = start + tiles
    '''
    assert not {"serial_chain", "stepped_scan"} & _signals(persistent)


def test_a_while_loop_streaming_tiles_is_a_loop_the_pipeliner_skips():
    findings = _l1(FIXTURES / "ragged_segment_sums.py")  # while t < end over a ragged segment's rows
    assert findings[0].id == "no_software_pipelining"
    assert "counted for loops" in findings[0].evidence[0].summary and "range(start, end" in findings[0].conditions[0]
    spin = [f.id for f in _l1(FIXTURES / "chained_block_sums.py")]  # a while loop polling a flag is a chain, not this
    assert "no_software_pipelining" not in spin


def test_two_passes_over_a_row_through_a_row_base_are_redundant_loads():
    two_passes = '''
    @triton.jit
    def lse_kernel(x_ptr, y_ptr, V, stride, BLOCK: tl.constexpr):
        base = x_ptr + tl.program_id(0) * stride
        m = tl.full([BLOCK], float("-inf"), tl.float32)
        for start in range(0, V, BLOCK):
            m = tl.maximum(m, tl.load(base + start + tl.arange(0, BLOCK)))
        top = tl.max(m, axis=0)
        acc = tl.zeros([BLOCK], tl.float32)
        for start in range(0, V, BLOCK):
            acc += tl.exp(tl.load(base + start + tl.arange(0, BLOCK)) - top)
        tl.store(y_ptr + tl.program_id(0), tl.log(tl.sum(acc, axis=0)) + top)
    '''
    assert "two_pass_loads" in _signals(two_passes) and SIGNALS["two_pass_loads"].finding == "redundant_loads"
    gathered = '''
    @triton.jit
    def gather_kernel(idx_ptr, t_ptr, y_ptr, n, D, BLOCK: tl.constexpr):
        total = tl.zeros([BLOCK], tl.float32)
        for i in range(n):
            total += tl.load(idx_ptr + i * BLOCK + tl.arange(0, BLOCK)).to(tl.float32)
        for i in range(n):
            row = tl.load(idx_ptr + i)
            tl.store(y_ptr + i * D + tl.arange(0, BLOCK), tl.load(t_ptr + row * D + tl.arange(0, BLOCK)) + total)
    '''
    assert "two_pass_loads" not in _signals(gathered)  # the second loop reads the table through loaded indices


def test_a_worst_case_grid_without_an_early_exit_runs_idle_programs():
    findings = _l1(FIXTURES / "worst_case_segments.py")  # rows masked against a loaded segment end, no return
    assert findings[0].id == "too_many_programs" and "early_exit_idle_programs" in SIGNAL_PATTERNS["idle_programs"]
    assert "masked off" in findings[0].evidence[0].summary
    source = (FIXTURES / "worst_case_segments.py").read_text()
    exits = source.replace("    rmask = rows < end  # expect: idle_programs\n",
                           "    if start + tl.program_id(1) * BLOCK_M >= end:\n        return\n    rmask = rows < end\n")
    assert "return" in exits and "idle_programs" not in {s.name for s in detect_signals(exits)[0]}


SIGNAL_PATTERNS = {s: [p.id for p in load_patterns() if s in p.symptoms.get("source", [])] for s in SIGNALS}




def test_a_dot_loop_of_few_trips_inside_another_loop_never_fills_its_pipeline(tmp_path):
    findings = _l1(FIXTURES / "tap_matmul.py")  # 9 taps x ceil(C / 64) = 1-2 channel blocks each
    assert findings[0].id == "no_software_pipelining" and "runs 1-2 trips in every case" in findings[0].message
    long_c = (FIXTURES / "tap_matmul.py").read_text().replace('"C": 64', '"C": 4096').replace('"C": 96', '"C": 2048')  # 32-64 trips: steady state
    assert "no_software_pipelining" not in [f.id for f in _l1(_task(tmp_path, "tap_matmul_long", long_c))[:1]]


def test_a_persistent_gemm_over_descriptors_is_not_a_constant_grid_nor_a_while_loop_pipeline():
    persistent = '''
    @triton.jit
    def grouped_kernel(desc_ptr, groups, NUM_SM: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        tile = tl.program_id(0)
        done = 0
        for g in range(groups):
            n = tl.load(desc_ptr + g * 4 + 1)
            k = tl.load(desc_ptr + g * 4 + 2)
            tiles = tl.cdiv(n, BN)
            while tile >= done and tile < done + tiles:
                a_ptr = tl.load(desc_ptr + g * 4).to(tl.pointer_type(tl.float16))
                rn = (tile - done) * BN + tl.arange(0, BN)
                acc = tl.zeros((BM, BN), dtype=tl.float32)
                for k0 in range(0, k, BK):
                    rk = k0 + tl.arange(0, BK)
                    a = tl.load(a_ptr + tl.arange(0, BM)[:, None] * k + rk[None, :])
                    b = tl.load(a_ptr + rk[:, None] * n + rn[None, :])
                    acc = tl.dot(a, b, acc)
                tl.store(a_ptr + tl.arange(0, BM)[:, None] * n + rn[None, :], acc.to(tl.float16))
                tile += NUM_SM
            done += tiles


    def entry(desc, groups, x):
        if x.device.type == "cuda":
            num_sm = torch.cuda.get_device_properties(x.device).multi_processor_count
        else:
            num_sm = 4
        grouped_kernel[(num_sm,)](desc, groups, NUM_SM=num_sm, BM=64, BN=64, BK=64)
    '''
    signals = _signals(persistent)  # the grid is the device's SM count; the K loop inside the while is counted
    assert not {"constant_grid", "while_tile_loop", "loop_invariant_load"} & signals


def test_digits_of_a_flat_index_times_a_stride_are_modulo_indexing_not_a_strided_lane_axis():
    shuffle = '''
    @triton.jit
    def shuffle_kernel(x_ptr, y_ptr, total, C, H, W, R: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        ow = offs % (W * R)
        t = offs // (W * R)
        c = t % C
        n = t // C
        j = ow % R
        iw = ow // R
        src = ((n * C + c) * R + j) * H * W + iw
        tl.store(y_ptr + offs, tl.load(x_ptr + src, mask=offs < total), mask=offs < total)
    '''
    assert "strided_access" not in _signals(shuffle) and "runtime_divmod" in _signals(shuffle)
    transposed = '''
    @triton.jit
    def column_kernel(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + (offs + 1) * stride))
    '''
    assert "strided_access" in _signals(transposed)


def test_row_decoding_before_the_k_loop_is_paid_once_per_program():
    implicit_gemm = '''
    @triton.jit
    def conv_kernel(x_ptr, w_ptr, y_ptr, H, W, C, F, BM: tl.constexpr, BF: tl.constexpr, BC: tl.constexpr):
        m = tl.program_id(0) * BM + tl.arange(0, BM)
        n = m // (H * W)
        oh = (m % (H * W)) // W
        ow = m % W
        f = tl.arange(0, BF)
        acc = tl.zeros((BM, BF), dtype=tl.float32)
        for c0 in range(0, C, BC):
            cc = c0 + tl.arange(0, BC)
            a = tl.load(x_ptr + (((n * H + oh) * W + ow) * C)[:, None] + cc[None, :])
            acc = tl.dot(a, tl.load(w_ptr + cc[:, None] * F + f[None, :]), acc)
        tl.store(y_ptr + m[:, None] * F + f[None, :], acc)
    '''
    assert "runtime_divmod" not in _signals(implicit_gemm)


def test_rank_one_updates_summed_in_a_loop_are_a_matmul_without_tensor_cores():
    outer = '''
    @triton.jit
    def outer_kernel(x_ptr, w_ptr, y_ptr, K, M: tl.constexpr, N: tl.constexpr):
        rm = tl.arange(0, M)
        rn = tl.arange(0, N)
        acc = tl.zeros((M, N), dtype=tl.float32)
        for k in range(K):
            xv = tl.load(x_ptr + k * M + rm).to(tl.float32)
            wv = tl.load(w_ptr + k * N + rn)
            acc += xv[:, None] * wv[None, :]
        tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc)
    '''
    assert "broadcast_matmul" in _signals(outer) and SIGNALS["broadcast_matmul"].finding == "no_tensor_cores"
    scaled = outer.replace("acc += xv[:, None] * wv[None, :]", "acc += xv[:, None] * acc")  # not two loaded vectors
    assert "broadcast_matmul" not in _signals(scaled)



def test_a_row_re_read_by_each_of_its_column_block_programs_is_redundant():
    reread = '''
    @triton.jit
    def row_scale_kernel(x_ptr, y_ptr, V, BLOCK: tl.constexpr):
        row = tl.program_id(1)
        total = tl.zeros([BLOCK], tl.float32)
        for start in range(0, V, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            total += tl.load(x_ptr + row * V + cols, mask=cols < V, other=0.0)
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * V + cols, mask=cols < V)
        tl.store(y_ptr + row * V + cols, x / tl.sum(total, axis=0), mask=cols < V)
    '''
    assert "axis_invariant_tile" in _signals(reread)  # `cols` after the loop is the block's, not the loop's
    gemv = '''
    @triton.jit
    def gemv_kernel(w_ptr, x_ptr, y_ptr, K, N, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
        b = tl.program_id(1)
        acc = tl.zeros([BLOCK_N], tl.float32)
        for k0 in range(0, K, BLOCK_K):
            rk = k0 + tl.arange(0, BLOCK_K)
            w = tl.load(w_ptr + b * K * N + rk[:, None] * N + rn[None, :])
            acc += tl.sum(w * tl.load(x_ptr + rk)[:, None], axis=0)
        tl.store(y_ptr + b * N + rn, acc)
    '''
    assert "axis_invariant_tile" not in _signals(gemv)  # x is the broadcast operand beside the weight stream


def test_programs_that_see_an_axis_only_through_a_division_stream_the_same_tile():
    """Grouped-query decode: query head h reads KV head h // GROUP, so GROUP programs stream the same cache rows."""
    grouped = '''
    @triton.jit
    def decode_kernel(q_ptr, k_ptr, o_ptr, S, GROUP: tl.constexpr, D: tl.constexpr, BLOCK_S: tl.constexpr):
        b = tl.program_id(0)
        h = tl.program_id(1)
        kv = h // GROUP
        d = tl.arange(0, D)
        q = tl.load(q_ptr + (b * 64 + h) * D + d)
        acc = tl.zeros([D], tl.float32)
        for s0 in range(0, S, BLOCK_S):
            s = s0 + tl.arange(0, BLOCK_S)
            k = tl.load(k_ptr + ((b * 8 + kv) * S + s[:, None]) * D + d[None, :], mask=s[:, None] < S)
            acc += tl.sum(k * q[None, :], axis=0)
        tl.store(o_ptr + (b * 64 + h) * D + d, acc)
    '''
    (signal,) = [s for s in detect_signals(HEADER + textwrap.dedent(grouped))[0] if s.name == "axis_invariant_tile"]
    assert signal.data["axis"] == 1 and signal.data["grouped"] == "h // GROUP" and "only through" in signal.detail
    one_per_head = grouped.replace("kv = h // GROUP", "kv = h")
    assert "axis_invariant_tile" not in _signals(one_per_head)
    beside = '''
    @triton.jit
    def masked_pool_kernel(x_ptr, m_ptr, out_ptr, T, D, BLOCK_T: tl.constexpr):
        pid = tl.program_id(0)
        b = pid // D
        d = pid % D
        acc = tl.zeros([BLOCK_T], tl.float32)
        for t0 in range(0, T, BLOCK_T):
            t = t0 + tl.arange(0, BLOCK_T)
            w = tl.load(m_ptr + b * T + t, mask=t < T, other=0.0)
            acc += w * tl.load(x_ptr + (b * T + t) * D + d, mask=t < T, other=0.0)
        tl.store(out_ptr + pid, tl.sum(acc, axis=0))
    '''
    assert "axis_invariant_tile" not in _signals(beside)  # the mask row rides beside each program's own column


CHANNEL_STATS = HEADER + '''
@triton.jit
def channel_stats_kernel(x_ptr, out_ptr, N, C, HW, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for n in range(0, N):
        for start in range(0, HW, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + (n * C + c) * HW + offs, mask=offs < HW, other=0.0)
    tl.store(out_ptr + c, tl.sum(acc, axis=0) / (N * HW))


def entry(x):
    N, C, H, W = x.shape
    out = torch.empty(C, dtype=torch.float32, device=x.device)
    channel_stats_kernel[(C,)](x, out, N, C, H * W, BLOCK=1024)
    return out


def reference(x):
    return x.mean(dim=(0, 2, 3))


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(case["N"], case["C"], case["H"], case["W"], generator=g).to(device),)


CASES = [{"N": 32, "C": 64, "H": 112, "W": 112}, {"N": 8, "C": 48, "H": 200, "W": 200}]
SMALL_CASES = [{"N": 2, "C": 3, "H": 5, "W": 7}]
'''


def test_a_short_chain_whose_positions_stream_in_tiles_stays_a_serial_reduction(tmp_path):
    """N <= 32 would fit one tile, but each of its positions is a plane an inner loop streams: no scalar loop."""
    ids = [f.id for f in _l1(_task(tmp_path, "channel_stats", CHANNEL_STATS))]
    assert ids[0] == "serial_reduction" and "scalar_loop" not in ids


def test_a_scalar_loop_indexed_by_a_name_derived_from_the_loop_variable_is_still_one():
    """A backward recurrence walks t = T - 1 - i: one scalar load and store per trip, whatever the index is called."""
    backward = '''
    @triton.jit
    def returns_kernel(r_ptr, out_ptr, T, gamma):
        base = tl.program_id(0) * T
        g = tl.zeros([], dtype=tl.float32)
        for i in range(0, T):
            t = T - 1 - i
            g = tl.load(r_ptr + base + t) + gamma * g
            tl.store(out_ptr + base + t, g)
    '''
    (signal,) = [s for s in detect_signals(HEADER + textwrap.dedent(backward))[0] if s.name == "scalar_loop"]
    assert "(r_ptr + base + t)" in signal.detail
