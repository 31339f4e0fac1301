# Optimized by kopt (run matmul-20261129-175023-f6bb) from matmul.py: x1.17 geomean speedup over 5 cases vs the original.
# 2 rounds tried; the improvements that got here:
#   round 2 (recipe:launch_config_search, diagnosis reached L3): L3 low_occupancy at line 10: matmul_kernel launch at line 41: 4 config(s) of BLOCK_M, BLOCK_N (now BLOCK_M=128, BLOCK_N=128) [BLOCK_M=64] -> x1.17
# Details: kopt runs show matmul-20261129-175023-f6bb
"""C = A @ B with fp16 inputs and fp32 accumulation: the tutorial-style first version (one output tile
per program, row-major program order, one fixed block configuration)."""

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def entry(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 128, 32
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    matmul_kernel[grid](a, b, c, M, N, K,
                        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4, num_stages=3)
    return c


def reference(a, b):
    return (a.float() @ b.float()).to(torch.float16)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    a = torch.randn(case["M"], case["K"], device=device, generator=g).to(torch.float16)
    b = torch.randn(case["K"], case["N"], device=device, generator=g).to(torch.float16)
    return a, b


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 8192, "K": 1024},
    {"M": 1000, "N": 3000, "K": 2048},
    {"M": 4097, "N": 511, "K": 1537},
    {"M": 128, "N": 16384, "K": 4096},
]
HELD_OUT = [{"M": 2047, "N": 2049, "K": 999}]
SMALL_CASES = [
    {"M": 128, "N": 128, "K": 64},
    {"M": 37, "N": 61, "K": 45},
    {"M": 130, "N": 129, "K": 96},
    {"M": 1, "N": 200, "K": 33},
    {"M": 64, "N": 257, "K": 32},
]
# fp32 accumulation in a different order than the reference, then rounding to fp16 (outputs ~sqrt(K)).
TOLERANCES = {"float16": (1e-2, 1e-2)}
DTYPE_FLOPS = "fp16"


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes_moved(case):
    return 2 * (case["M"] * case["K"] + case["K"] * case["N"] + case["M"] * case["N"])
