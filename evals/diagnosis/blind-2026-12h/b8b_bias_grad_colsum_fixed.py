import torch, triton, triton.language as tl

# Bias gradient of a linear layer: db[n] = sum_m dy[m, n].


@triton.jit
def _bias_grad_kernel(dy_ptr, part_ptr, M, N, stride_m, rows_per_split,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_s = tl.program_id(1)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    row_start = pid_s * rows_per_split
    row_end = tl.minimum(row_start + rows_per_split, M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for m0 in range(row_start, row_end, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < row_end) & cmask[None, :]
        g = tl.load(dy_ptr + rows[:, None] * stride_m + cols[None, :], mask=mask, other=0.0)
        acc += g.to(tl.float32)
    tl.store(part_ptr + pid_s * N + cols, tl.sum(acc, axis=0), mask=cmask)


def entry(dy):
    M, N = dy.shape
    BLOCK_M, BLOCK_N = 64, 128
    n_col = triton.cdiv(N, BLOCK_N)
    splits = max(1, min(triton.cdiv(M, BLOCK_M), 512 // n_col))
    rows_per_split = triton.cdiv(triton.cdiv(M, splits), BLOCK_M) * BLOCK_M
    splits = triton.cdiv(M, rows_per_split)
    part = torch.empty(splits, N, device=dy.device, dtype=torch.float32)
    _bias_grad_kernel[(n_col, splits)](dy, part, M, N, dy.stride(0), rows_per_split,
                                       BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
    return part.sum(dim=0)


def reference(dy):
    return dy.float().sum(dim=0)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    dy = torch.randn(case["M"], case["N"], generator=g, dtype=torch.float32).to(torch.bfloat16)
    return (dy.to(device),)


CASES = [
    {"M": 16384, "N": 4096},
    {"M": 8192, "N": 12288},
    {"M": 32768, "N": 2048},
    {"M": 12000, "N": 5120},
    {"M": 4000, "N": 14336},
    {"M": 20000, "N": 3000},
]
SMALL_CASES = [{"M": 100, "N": 70}, {"M": 64, "N": 33}]
TOLERANCES = {"float32": (1e-3, 1e-3)}


def bytes_moved(case):
    return case["M"] * case["N"] * 2 + case["N"] * 4


def flops(case):
    return case["M"] * case["N"]
