"""Batched matmul C[b] = A[b] @ B[b] in fp16 with fp32 accumulation. Family: matmul.

First pass: grid (output tiles, batch), one 64 x 64 tile per program, 32-wide K steps, default warps and
stages."""

import torch
import triton
import triton.language as tl

FAMILY = "matmul"


@triton.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    a_ptr += batch * M * K
    b_ptr += batch * K * N
    c_ptr += batch * M * N
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
    B, M, K = a.shape
    N = b.shape[2]
    c = torch.empty((B, M, N), device=a.device, dtype=a.dtype)
    grid = (triton.cdiv(M, 64) * triton.cdiv(N, 64), B)
    bmm_kernel[grid](a, b, c, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    return c


def reference(a, b):
    return torch.bmm(a, b)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    a = torch.randn(case["B"], case["M"], case["K"], generator=g).to(dtype)
    b = (torch.randn(case["B"], case["K"], case["N"], generator=g) / case["K"] ** 0.5).to(dtype)
    return a.to(device), b.to(device)


CASES = [
    {"B": 32, "M": 512, "N": 512, "K": 512, "dtype": "float16"},
    {"B": 8, "M": 2048, "N": 2048, "K": 1024, "dtype": "float16"},
    {"B": 96, "M": 197, "N": 197, "K": 64, "dtype": "float16"},
    {"B": 4, "M": 4097, "N": 1023, "K": 777, "dtype": "float16"},
    {"B": 256, "M": 128, "N": 256, "K": 129, "dtype": "float16"},
]
HELD_OUT = [{"B": 12, "M": 1000, "N": 999, "K": 300, "dtype": "float16"},
            {"B": 64, "M": 257, "N": 128, "K": 511, "dtype": "float16"}]
SMALL_CASES = [{"B": 3, "M": 37, "N": 20, "K": 45, "dtype": "float16"}, {"B": 2, "M": 65, "N": 33, "K": 17, "dtype": "float16"}]
TOLERANCES = {"float16": (1e-2, 1e-2)}
DTYPE_FLOPS = "fp16"


def flops(case):
    return 2 * case["B"] * case["M"] * case["N"] * case["K"]


def bytes_moved(case):
    B, M, N, K = case["B"], case["M"], case["N"], case["K"]
    return B * (M * K + K * N + M * N) * getattr(torch, case["dtype"]).itemsize
