"""Skinny matmul, a few tokens times a weight: C = A @ B with M in 1..48 and large N, K (fp16, fp32
accumulation). Family: matmul.

First pass: the tile kernel with a 16-row M tile (the smallest tl.dot takes), 64 x 64 N x K tiles,
one program per N tile, default warps and stages."""

import torch
import triton
import triton.language as tl

FAMILY = "matmul"


@triton.jit
def matmul_skinny_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    rm = (pid // num_pid_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid % num_pid_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def entry(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = (triton.cdiv(M, 16) * triton.cdiv(N, 64),)
    matmul_skinny_kernel[grid](a, b, c, M, N, K, BLOCK_M=16, BLOCK_N=64, BLOCK_K=64)
    return c


def reference(a, b):
    return a @ b


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    a = torch.randn(case["M"], case["K"], generator=g).to(dtype)
    b = (torch.randn(case["K"], case["N"], generator=g) / case["K"] ** 0.5).to(dtype)
    return a.to(device), b.to(device)


CASES = [
    {"M": 16, "N": 4096, "K": 4096, "dtype": "float16"},
    {"M": 8, "N": 14_336, "K": 4096, "dtype": "float16"},
    {"M": 32, "N": 4096, "K": 14_336, "dtype": "float16"},
    {"M": 7, "N": 12_289, "K": 5120, "dtype": "float16"},
    {"M": 48, "N": 32_000, "K": 4096, "dtype": "float16"},
]
HELD_OUT = [{"M": 3, "N": 8192, "K": 8192, "dtype": "float16"}, {"M": 24, "N": 5003, "K": 2999, "dtype": "float16"}]
SMALL_CASES = [{"M": 5, "N": 100, "K": 70, "dtype": "float16"}, {"M": 17, "N": 33, "K": 129, "dtype": "float16"}]
TOLERANCES = {"float16": (1e-2, 1e-2)}
DTYPE_FLOPS = "fp16"


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return (M * K + K * N + M * N) * getattr(torch, case["dtype"]).itemsize
