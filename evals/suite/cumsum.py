"""Inclusive prefix sum along rows, y[m, n] = sum_{j<=n} x[m, j], fp32 accumulation. Family: scan.

First pass: one program per row, looping over the row in 1024-wide chunks: tl.cumsum inside the chunk
plus the running total carried from the chunks before."""

import torch
import triton
import triton.language as tl

FAMILY = "scan"


@triton.jit
def cumsum_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros((), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, axis=0) + carry
        tl.store(y_ptr + row * N + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


def entry(x):
    M, N = x.shape
    y = torch.empty_like(x)
    cumsum_kernel[(M,)](x, y, N, BLOCK=1024)
    return y


def reference(x):
    return torch.cumsum(x.float(), dim=1).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g).to(getattr(torch, case["dtype"]))
    return (x.to(device),)


CASES = [
    {"M": 4096, "N": 4096, "dtype": "float32"},
    {"M": 1024, "N": 32_768, "dtype": "float32"},
    {"M": 3001, "N": 5003, "dtype": "float16"},
    {"M": 100_000, "N": 100, "dtype": "float32"},
    {"M": 8, "N": 1_000_001, "dtype": "float32"},
]
HELD_OUT = [{"M": 2000, "N": 7777, "dtype": "float32"}, {"M": 50_000, "N": 257, "dtype": "float16"}]
SMALL_CASES = [{"M": 5, "N": 2500, "dtype": "float32"}, {"M": 17, "N": 77, "dtype": "float16"}]
TOLERANCES = {"float32": (1e-3, 1e-4), "float16": (5e-2, 5e-3)}


def flops(case):
    return case["M"] * case["N"]


def bytes_moved(case):
    return 2 * case["M"] * case["N"] * getattr(torch, case["dtype"]).itemsize
