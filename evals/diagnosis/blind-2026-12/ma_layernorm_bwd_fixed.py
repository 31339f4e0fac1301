"""LayerNorm backward (dx, dweight, dbias) for bf16 activations with saved fp32 mean/rstd. Planted: the row-parallel kernel reduces dweight/dbias over the row axis with per-row fp32 atomics, so every row program hammers the same 2N addresses (atomic contention)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _layernorm_bwd_kernel(
    x_ptr, dy_ptr, w_ptr, mean_ptr, rstd_ptr,
    dx_ptr, dw_part_ptr, db_part_ptr,
    stride_row, M, N, rows_per_program,
    BLOCK_N: tl.constexpr,
):
    # each program owns a contiguous chunk of rows and keeps its dweight/dbias partial sums in registers
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw_acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    db_acc = tl.zeros([BLOCK_N], dtype=tl.float32)

    row_start = pid * rows_per_program
    row_end = tl.minimum(row_start + rows_per_program, M)
    for row in range(row_start, row_end):
        x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * stride_row + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.load(mean_ptr + row)
        rstd = tl.load(rstd_ptr + row)

        xhat = tl.where(mask, (x - mean) * rstd, 0.0)
        wdy = w * dy
        c1 = tl.sum(xhat * wdy, axis=0) / N
        c2 = tl.sum(wdy, axis=0) / N
        dx = (wdy - (xhat * c1 + c2)) * rstd
        tl.store(dx_ptr + row * stride_row + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)

        dw_acc += dy * xhat
        db_acc += dy

    tl.store(dw_part_ptr + pid * N + cols, dw_acc, mask=mask)
    tl.store(db_part_ptr + pid * N + cols, db_acc, mask=mask)


@triton.jit
def _column_sum_kernel(
    dw_part_ptr, db_part_ptr, dw_ptr, db_ptr,
    P, N,
    BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # reduce the [P, N] partial buffers over P with coalesced [BLOCK_P, BLOCK_N] tiles
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    dw = tl.zeros([BLOCK_P, BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_P, BLOCK_N], dtype=tl.float32)
    for p0 in range(0, P, BLOCK_P):
        rows = p0 + tl.arange(0, BLOCK_P)
        m = (rows < P)[:, None] & cmask[None, :]
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(dw_part_ptr + offs, mask=m, other=0.0)
        db += tl.load(db_part_ptr + offs, mask=m, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0), mask=cmask)
    tl.store(db_ptr + cols, tl.sum(db, axis=0), mask=cmask)


def entry(x, dy, weight, mean, rstd):
    M, N = x.shape
    dx = torch.empty_like(x)
    BLOCK_N = triton.next_power_of_2(N)
    num_warps = min(max(BLOCK_N // 256, 4), 16)
    rows_per_program = 32
    P = triton.cdiv(M, rows_per_program)
    dw_part = torch.empty((P, N), device=x.device, dtype=torch.float32)
    db_part = torch.empty((P, N), device=x.device, dtype=torch.float32)
    _layernorm_bwd_kernel[(P,)](
        x, dy, weight, mean, rstd, dx, dw_part, db_part,
        x.stride(0), M, N, rows_per_program,
        BLOCK_N=BLOCK_N, num_warps=num_warps,
    )
    dw = torch.empty(N, device=x.device, dtype=torch.float32)
    db = torch.empty(N, device=x.device, dtype=torch.float32)
    BLOCK_P, BLOCK_NC = 32, 64
    _column_sum_kernel[(triton.cdiv(N, BLOCK_NC),)](
        dw_part, db_part, dw, db, P, N,
        BLOCK_P=BLOCK_P, BLOCK_N=BLOCK_NC, num_warps=4,
    )
    return dx, dw, db


def reference(x, dy, weight, mean, rstd):
    xf, dyf, wf = x.float(), dy.float(), weight.float()
    N = x.shape[1]
    xhat = (xf - mean[:, None]) * rstd[:, None]
    wdy = wf * dyf
    c1 = (xhat * wdy).sum(dim=1, keepdim=True) / N
    c2 = wdy.sum(dim=1, keepdim=True) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd[:, None]
    dw = (dyf * xhat).sum(dim=0)
    db = dyf.sum(dim=0)
    return dx.to(x.dtype), dw, db


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N = case["M"], case["N"]
    x = (torch.randn(M, N, generator=g) * 2.0 + 0.5).to(torch.bfloat16)
    dy = torch.randn(M, N, generator=g).to(torch.bfloat16)
    weight = (1.0 + 0.1 * torch.randn(N, generator=g)).to(torch.bfloat16)
    xf = x.float()
    mean = xf.mean(dim=1)
    rstd = torch.rsqrt(xf.var(dim=1, unbiased=False) + 1e-5)
    return x.to(device), dy.to(device), weight.to(device), mean.to(device), rstd.to(device)


CASES = [
    {"M": 16384, "N": 4096},
    {"M": 8192, "N": 8192},
    {"M": 32768, "N": 1024},
    {"M": 12289, "N": 2560},
]

SMALL_CASES = [
    {"M": 33, "N": 48},
    {"M": 70, "N": 200},
]

TOLERANCES = {"bfloat16": (2e-2, 2e-2), "float32": (2e-2, 1e-3)}


def bytes_moved(case):
    M, N = case["M"], case["N"]
    return 3 * M * N * 2 + N * (2 + 8) + M * 8


def flops(case):
    return 12 * case["M"] * case["N"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
