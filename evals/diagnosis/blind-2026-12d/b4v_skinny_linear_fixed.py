import torch, triton, triton.language as tl


@triton.jit
def skinny_linear_kernel(x_ptr, w_ptr, y_ptr, M, N, K,
                         stride_xm, stride_wn, stride_ym,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # y[m, n] = sum_k x[m, k] * w[n, k]  for a handful of decode tokens
    pid_n = tl.program_id(0)
    rm = tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    mmask = rm < M
    nmask = rn < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        kmask = kk < K
        x = tl.load(x_ptr + rm[:, None] * stride_xm + kk[None, :],
                    mask=mmask[:, None] & kmask[None, :], other=0.0)
        w = tl.load(w_ptr + rn[None, :] * stride_wn + kk[:, None],
                    mask=nmask[None, :] & kmask[:, None], other=0.0)
        acc = tl.dot(x, w, acc)
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=mmask[:, None] & nmask[None, :])


def entry(x, w):
    M, K = x.shape
    N = w.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BLOCK_N, BLOCK_K = 32, 256
    BLOCK_M = max(16, triton.next_power_of_2(M))
    grid = (triton.cdiv(N, BLOCK_N),)
    skinny_linear_kernel[grid](x, w, y, M, N, K, x.stride(0), w.stride(0), y.stride(0),
                               BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4)
    return y


def reference(x, w):
    return (x.float() @ w.float().t()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g).to(torch.float16)
    w = (torch.randn(N, K, generator=g) / (K ** 0.5)).to(torch.float16)
    return x.to(device), w.to(device)


CASES = [
    {"M": 8, "N": 8192, "K": 8192},
    {"M": 4, "N": 14336, "K": 4096},
    {"M": 16, "N": 4096, "K": 14336},
    {"M": 6, "N": 13824, "K": 5120},
    {"M": 12, "N": 7000, "K": 6000},
]
SMALL_CASES = [{"M": 3, "N": 70, "K": 300}, {"M": 5, "N": 33, "K": 64}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * (N * K + M * K + M * N)


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


DTYPE_FLOPS = "fp16"
