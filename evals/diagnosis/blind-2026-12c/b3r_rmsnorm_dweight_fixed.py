import torch, triton, triton.language as tl


@triton.jit
def rmsnorm_dweight_kernel(
    dy_ptr, x_ptr, rstd_ptr, partial_ptr,
    M, N, stride_dy, stride_x, rows_per_split,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # partial[s, n] = sum_{m in split s} dy[m, n] * x[m, n] * rstd[m]
    pid_n = tl.program_id(0)
    pid_s = tl.program_id(1)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    row_start = pid_s * rows_per_split
    row_end = tl.minimum(row_start + rows_per_split, M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for m0 in range(row_start, row_end, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        rmask = rows < row_end
        mask = rmask[:, None] & cmask[None, :]
        dy = tl.load(dy_ptr + rows[:, None] * stride_dy + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        r = tl.load(rstd_ptr + rows, mask=rmask, other=0.0)
        acc += dy * x * r[:, None]
    dw = tl.sum(acc, axis=0)
    tl.store(partial_ptr + pid_s * N + cols, dw, mask=cmask)


def entry(dy, x, rstd):
    M, N = x.shape
    BLOCK_M, BLOCK_N = 32, 128
    n_col = triton.cdiv(N, BLOCK_N)
    split = max(1, min(triton.cdiv(M, 4 * BLOCK_M), triton.cdiv(1024, n_col)))
    rows_per_split = triton.cdiv(triton.cdiv(M, split), BLOCK_M) * BLOCK_M
    split = triton.cdiv(M, rows_per_split)
    partial = torch.empty((split, N), device=x.device, dtype=torch.float32)
    rmsnorm_dweight_kernel[(n_col, split)](
        dy, x, rstd, partial, M, N, dy.stride(0), x.stride(0), rows_per_split,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
    )
    return partial.sum(dim=0)


def reference(dy, x, rstd):
    return (dy.float() * x.float() * rstd[:, None]).sum(dim=0)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N = case["M"], case["N"]
    x = torch.randn((M, N), generator=g, dtype=torch.float32)
    dy = torch.randn((M, N), generator=g, dtype=torch.float32)
    xb = x.to(torch.bfloat16)
    rstd = torch.rsqrt(xb.float().pow(2).mean(dim=1) + 1e-6)
    return (dy.to(torch.bfloat16).to(device), xb.to(device), rstd.to(device))


CASES = [
    {"M": 16384, "N": 4096},
    {"M": 8192, "N": 5120},
    {"M": 32768, "N": 2048},
    {"M": 12000, "N": 7168},
    {"M": 20480, "N": 3000},
    {"M": 65536, "N": 1536},
]
SMALL_CASES = [{"M": 100, "N": 300}, {"M": 45, "N": 128}, {"M": 600, "N": 200}]
TOLERANCES = {"float32": (1e-3, 1e-4)}


def bytes_moved(case):
    M, N = case["M"], case["N"]
    return 2 * 2 * M * N + 4 * M + 4 * N


def flops(case):
    M, N = case["M"], case["N"]
    return 3 * M * N
