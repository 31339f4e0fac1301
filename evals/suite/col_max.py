"""Column max, y[n] = max_m x[m, n] (reduce over the leading dimension). Family: reduction.

First pass: one program per 128-column strip, looping down the rows in 32-row tiles."""

import torch
import triton
import triton.language as tl

FAMILY = "reduction"


@triton.jit
def col_max_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.full((BLOCK_M, BLOCK_N), float("-inf"), dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=float("-inf"))
        acc = tl.maximum(acc, x.to(tl.float32))
    tl.store(y_ptr + cols, tl.max(acc, axis=0).to(y_ptr.dtype.element_ty), mask=cols < N)


def entry(x):
    M, N = x.shape
    y = torch.empty(N, device=x.device, dtype=x.dtype)
    col_max_kernel[(triton.cdiv(N, 128),)](x, y, M, N, BLOCK_M=32, BLOCK_N=128)
    return y


def reference(x):
    return x.amax(dim=0)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g).to(getattr(torch, case["dtype"]))
    return (x.to(device),)


CASES = [
    {"M": 8192, "N": 4096, "dtype": "float16"},
    {"M": 16_384, "N": 3072, "dtype": "float32"},
    {"M": 4999, "N": 4001, "dtype": "bfloat16"},
    {"M": 500_001, "N": 33, "dtype": "float32"},
    {"M": 128, "N": 524_287, "dtype": "float16"},
]
HELD_OUT = [{"M": 7777, "N": 1999, "dtype": "float16"}, {"M": 100_000, "N": 257, "dtype": "float32"}]
SMALL_CASES = [{"M": 77, "N": 300, "dtype": "float32"}, {"M": 45, "N": 33, "dtype": "float16"},
               {"M": 100, "N": 130, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (0.0, 0.0), "float16": (0.0, 0.0), "bfloat16": (0.0, 0.0)}


def flops(case):
    return case["M"] * case["N"]


def bytes_moved(case):
    return (case["M"] + 1) * case["N"] * getattr(torch, case["dtype"]).itemsize
