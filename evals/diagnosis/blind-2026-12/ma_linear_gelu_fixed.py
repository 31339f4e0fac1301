"""Linear layer y = gelu_tanh(x @ W^T + b) in fp16 (fp32 accumulate), nn.Linear weight layout [N, K]. Planted: the row stride of x is in do_not_specialize, so its 16-byte alignment is unknown and the A-tile loads drop to scalar, unpipelined 2-byte loads."""
import math

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


# M changes with every batch in serving; keep it out of the specialization key so one binary serves
# all batch sizes (strides stay specialized so the 16-byte alignment of every row is known).
@triton.jit(do_not_specialize=["M"])
def _linear_bias_gelu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_rem), other=0.0)
        b = tl.load(w_ptrs, mask=(offs_k[:, None] < k_rem) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    z = acc + bias[None, :]
    # gelu(tanh approx) = z * sigmoid(2 * sqrt(2/pi) * (z + 0.044715 z^3))
    inner = 1.5957691216057308 * (z + 0.044715 * z * z * z)
    out = z * tl.sigmoid(inner)
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, out.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def entry(x, weight, bias):
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 128, 64, 8
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _linear_bias_gelu_kernel[grid](
        x, weight, bias, y,
        M, N, K,
        x.stride(0), x.stride(1),
        weight.stride(0), weight.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
        num_warps=8, num_stages=3,
    )
    return y


def reference(x, weight, bias):
    z = x.float() @ weight.float().t() + bias.float()
    return F.gelu(z, approximate="tanh").to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g).to(torch.float16)
    weight = (torch.randn(N, K, generator=g) / math.sqrt(K)).to(torch.float16)
    bias = (torch.randn(N, generator=g) * 0.1).to(torch.float16)
    return x.to(device), weight.to(device), bias.to(device)


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 3000, "N": 14336, "K": 4096},
    {"M": 8191, "N": 11008, "K": 2048},
    {"M": 16384, "N": 2560, "K": 1024},
]

SMALL_CASES = [
    {"M": 37, "N": 64, "K": 96},
    {"M": 130, "N": 72, "K": 64},
]

TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * (M * K + N * K + M * N + N)


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
