import math
import torch
import triton
import triton.language as tl


@triton.jit
def expert_bmm_kernel(
    x_ptr, w_ptr, y_ptr,
    M, N, K,
    stride_xe, stride_xm, stride_xk,
    stride_we, stride_wk, stride_wn,
    stride_ye, stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # y[e] = x[e] @ w[e] for every expert e (capacity-padded token buckets)
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    e = tl.program_id(2)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + e * stride_xe + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + e * stride_we + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn
    m_mask = offs_m[:, None] < M
    n_mask = offs_n[None, :] < N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=m_mask & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(w_ptrs, mask=n_mask & (offs_k[:, None] < k_left), other=0.0)
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    y_ptrs = y_ptr + e * stride_ye + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=m_mask & n_mask)


def entry(x, w):
    E, M, K = x.shape
    N = w.shape[2]
    y = torch.empty((E, M, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N), E)
    expert_bmm_kernel[grid](
        x, w, y, M, N, K,
        x.stride(0), x.stride(1), x.stride(2),
        w.stride(0), w.stride(1), w.stride(2),
        y.stride(0), y.stride(1), y.stride(2),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=8, num_stages=3,
    )
    return y


def reference(x, w):
    return torch.bmm(x.float(), w.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    E, M, N, K = case["E"], case["M"], case["N"], case["K"]
    x = torch.randn(E, M, K, generator=g, dtype=torch.float32)
    w = torch.randn(E, K, N, generator=g, dtype=torch.float32) / math.sqrt(K)
    return x.to(torch.float16).to(device), w.to(torch.float16).to(device)


CASES = [
    {"E": 8, "M": 2048, "N": 4096, "K": 1408},
    {"E": 16, "M": 1024, "N": 2048, "K": 2048},
    {"E": 8, "M": 1536, "N": 3584, "K": 4000},
    {"E": 64, "M": 256, "N": 1408, "K": 2048},
    {"E": 4, "M": 4096, "N": 14336, "K": 4096},
    {"E": 32, "M": 640, "N": 2816, "K": 1000},
]
SMALL_CASES = [
    {"E": 2, "M": 40, "N": 48, "K": 80},
    {"E": 3, "M": 17, "N": 130, "K": 64},
]
TOLERANCES = {"float16": (2e-2, 2e-2)}
DTYPE_FLOPS = "fp16"


def bytes_moved(case):
    E, M, N, K = case["E"], case["M"], case["N"], case["K"]
    return 2 * E * (M * K + K * N + M * N)


def flops(case):
    return 2 * case["E"] * case["M"] * case["N"] * case["K"]
