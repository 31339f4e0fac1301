import torch
import triton
import triton.language as tl


@triton.jit
def _ln_wgrad_kernel(
    x_ptr, dy_ptr, mean_ptr, rstd_ptr, dw_ptr, db_ptr,
    M, N, stride_x, stride_dy, ROWS_PER_PROG,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # dw[n] = sum_m dy[m, n] * (x[m, n] - mean[m]) * rstd[m];  db[n] = sum_m dy[m, n]
    pid_n = tl.program_id(0)
    pid_s = tl.program_id(1)
    row_start = pid_s * ROWS_PER_PROG
    row_end = tl.minimum(row_start + ROWS_PER_PROG, M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    dw_acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    db_acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for m0 in range(row_start, row_end, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        row_mask = rows < row_end
        mask = row_mask[:, None] & col_mask[None, :]
        x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + rows[:, None] * stride_dy + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        mean = tl.load(mean_ptr + rows, mask=row_mask, other=0.0)
        rstd = tl.load(rstd_ptr + rows, mask=row_mask, other=0.0)
        xhat = (x - mean[:, None]) * rstd[:, None]
        dw_acc += dy * xhat
        db_acc += dy
    tl.store(dw_ptr + pid_s * N + cols, tl.sum(dw_acc, axis=0), mask=col_mask)
    tl.store(db_ptr + pid_s * N + cols, tl.sum(db_acc, axis=0), mask=col_mask)


def entry(x, dy, mean, rstd):
    M, N = x.shape
    BLOCK_M, BLOCK_N = 32, 128
    rows_per_prog = 16 * BLOCK_M
    splits = triton.cdiv(M, rows_per_prog)
    partial = torch.empty((2, splits, N), device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(N, BLOCK_N), splits)
    _ln_wgrad_kernel[grid](
        x, dy, mean, rstd, partial[0], partial[1], M, N, x.stride(0), dy.stride(0), rows_per_prog,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4,
    )
    dw, db = partial.sum(1).unbind(0)
    return dw, db


def reference(x, dy, mean, rstd):
    xhat = (x.float() - mean[:, None]) * rstd[:, None]
    dyf = dy.float()
    return (dyf * xhat).sum(0), dyf.sum(0)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    M, N = case["M"], case["N"]
    x = (torch.randn((M, N), generator=g, dtype=torch.float32) * 1.5 + 0.3).to(torch.bfloat16)
    dy = torch.randn((M, N), generator=g, dtype=torch.float32).to(torch.bfloat16)
    xf = x.float()
    mean = xf.mean(1)
    rstd = torch.rsqrt(xf.var(1, unbiased=False) + 1e-5)
    return (x.to(device), dy.to(device), mean.to(device), rstd.to(device))


CASES = [
    {"M": 16384, "N": 4096},
    {"M": 32768, "N": 1024},
    {"M": 8192, "N": 8192},
    {"M": 30000, "N": 2048},
    {"M": 12000, "N": 5120},
    {"M": 65536, "N": 768},
]
SMALL_CASES = [
    {"M": 100, "N": 200},
    {"M": 67, "N": 128},
    {"M": 1030, "N": 5},
]
TOLERANCES = {"float32": (5e-3, 1e-3)}


def bytes_moved(case):
    M, N = case["M"], case["N"]
    return 2 * 2 * M * N + 2 * 4 * M + 2 * 4 * N


def flops(case):
    M, N = case["M"], case["N"]
    return 5 * M * N
