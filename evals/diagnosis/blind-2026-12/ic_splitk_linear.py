"""Split-K fp16 linear y = x @ W^T (W in nn.Linear [N, K] layout) for skinny M, fp32 output accumulated with atomics. Planted: per-split K range computed as K // split_k, so the compiler cannot prove 16-byte alignment of the A/W tile addresses."""
import torch
import triton
import triton.language as tl


@triton.jit
def _splitk_linear_kernel(x_ptr, w_ptr, y_ptr, M, N, K,
                          stride_xm, stride_wn, stride_ym, split_k,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_mn = tl.program_id(0)
    pid_k = tl.program_id(1)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid_mn // num_pid_n
    pid_n = pid_mn % num_pid_n

    # this program reduces over K[k_lo, k_hi)
    k_per_split = K // split_k
    k_lo = pid_k * k_per_split
    k_hi = tl.where(pid_k == split_k - 1, K, k_lo + k_per_split)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + (k_lo + offs_k)[None, :]
    w_ptrs = w_ptr + offs_n[:, None] * stride_wn + (k_lo + offs_k)[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(k_lo, k_hi, BLOCK_K):
        k_mask = (k + offs_k) < k_hi
        a = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & k_mask[None, :], other=0.0)
        b = tl.load(w_ptrs, mask=(offs_n[:, None] < N) & k_mask[None, :], other=0.0)
        acc = tl.dot(a, tl.trans(b), acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    tl.atomic_add(y_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N), sem="relaxed")


def _split_k(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K):
    tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    split = 1
    while tiles * split < 2 * 132 and split < 16 and K // (split * 2) >= 4 * BLOCK_K:
        split *= 2
    return split


def entry(x, w):
    M, K = x.shape
    N = w.shape[0]
    y = torch.zeros(M, N, device=x.device, dtype=torch.float32)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 128
    SPLIT_K = _split_k(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), SPLIT_K)
    _splitk_linear_kernel[grid](x, w, y, M, N, K, x.stride(0), w.stride(0), y.stride(0), SPLIT_K,
                                BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                                num_warps=4, num_stages=4)
    return y


def reference(x, w):
    return x.float() @ w.float().t()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g).to(torch.float16)
    w = (torch.randn(N, K, generator=g) / K ** 0.5).to(torch.float16)
    return x.to(device), w.to(device)


CASES = [
    {"M": 32, "N": 4096, "K": 14336},
    {"M": 64, "N": 8192, "K": 8192},
    {"M": 17, "N": 5120, "K": 13824},
    {"M": 100, "N": 5120, "K": 10240},
]
SMALL_CASES = [
    {"M": 5, "N": 24, "K": 2000},
    {"M": 33, "N": 70, "K": 4160},
]
TOLERANCES = {"float32": (2e-3, 2e-3)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * (M * K + N * K) + 4 * M * N


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
