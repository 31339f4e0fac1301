"""Row variance (unbiased, as torch.var), y[m] = var_n x[m, n]. Family: reduction.

First pass: one program per row and two loops over the row in 1024-wide chunks (mean, then squared
deviations), fp32 throughout."""

import torch
import triton
import triton.language as tl

FAMILY = "reduction"


@triton.jit
def row_var_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)
        d = tl.where(cols < N, x - mean, 0.0)
        acc += d * d
    tl.store(y_ptr + row, (tl.sum(acc, axis=0) / (N - 1)).to(y_ptr.dtype.element_ty))


def entry(x):
    M, N = x.shape
    y = torch.empty(M, device=x.device, dtype=x.dtype)
    row_var_kernel[(M,)](x, y, N, BLOCK=1024)
    return y


def reference(x):
    return x.float().var(dim=1).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g).to(getattr(torch, case["dtype"]))
    return (x.to(device),)


CASES = [
    {"M": 8192, "N": 4096, "dtype": "float32"},
    {"M": 4096, "N": 8192, "dtype": "float16"},
    {"M": 3001, "N": 5003, "dtype": "bfloat16"},
    {"M": 65_537, "N": 384, "dtype": "float32"},
    {"M": 31, "N": 999_999, "dtype": "float32"},
]
HELD_OUT = [{"M": 1500, "N": 10_007, "dtype": "float16"}, {"M": 20_001, "N": 200, "dtype": "float32"}]
SMALL_CASES = [{"M": 9, "N": 2500, "dtype": "float32"}, {"M": 23, "N": 77, "dtype": "float16"},
               {"M": 4, "N": 1100, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-5, 1e-4), "float16": (1e-3, 2e-3), "bfloat16": (1e-2, 1.6e-2)}


def flops(case):
    return 4 * case["M"] * case["N"]


def bytes_moved(case):
    return case["M"] * (case["N"] + 1) * getattr(torch, case["dtype"]).itemsize
