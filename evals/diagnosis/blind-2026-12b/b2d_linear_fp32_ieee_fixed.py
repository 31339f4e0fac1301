"""fp32 linear layer y = x @ W^T + b; fixed: tl.dot uses TF32 tensor cores (input_precision="tf32")."""
import torch
import triton
import triton.language as tl


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                  stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    gsize = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % gsize
    pid_n = (pid % group) // gsize
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_rem), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_n[None, :] < N) & (offs_k[:, None] < k_rem), other=0.0)
        # TF32 tensor cores, fp32 accumulate
        acc = tl.dot(a, w, acc, input_precision="tf32")
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc += bias[None, :]
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def entry(x, w, b):
    M, K = x.shape
    N = w.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=torch.float32)
    BM, BN, BK = 128, 128, 32
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    linear_kernel[grid](x, w, b, y, M, N, K,
                        x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
                        BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8, num_warps=8, num_stages=3)
    return y


def reference(x, w, b):
    return torch.nn.functional.linear(x, w, b)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g, dtype=torch.float32)
    w = torch.randn(N, K, generator=g, dtype=torch.float32) / K ** 0.5
    b = torch.randn(N, generator=g, dtype=torch.float32)
    return (x.to(device), w.to(device), b.to(device))


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 3072, "K": 768},
    {"M": 2048, "N": 11008, "K": 4096},
    {"M": 5000, "N": 4096, "K": 1024},
    {"M": 3000, "N": 2999, "K": 2048},
]
SMALL_CASES = [{"M": 37, "N": 45, "K": 70}]
TOLERANCES = {"float32": (2e-2, 2e-2)}
DTYPE_FLOPS = "tf32"


def bytes_moved(case):
    return 4 * (case["M"] * case["K"] + case["N"] * case["K"] + case["M"] * case["N"] + case["N"])


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]
