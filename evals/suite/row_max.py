"""Row max, y[m] = max_n x[m, n]. Family: reduction.

First pass: one program per row, looping over the row in 1024-wide chunks with a running maximum."""

import torch
import triton
import triton.language as tl

FAMILY = "reduction"


@triton.jit
def row_max_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        acc = tl.maximum(acc, x)
    tl.store(y_ptr + row, tl.max(acc, axis=0).to(y_ptr.dtype.element_ty))


def entry(x):
    M, N = x.shape
    y = torch.empty(M, device=x.device, dtype=x.dtype)
    row_max_kernel[(M,)](x, y, N, BLOCK=1024)
    return y


def reference(x):
    return x.amax(dim=1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g).to(getattr(torch, case["dtype"]))
    return (x.to(device),)


CASES = [
    {"M": 8192, "N": 4096, "dtype": "float16"},
    {"M": 4096, "N": 50_257, "dtype": "float32"},
    {"M": 3001, "N": 5003, "dtype": "bfloat16"},
    {"M": 100_003, "N": 127, "dtype": "float32"},
    {"M": 33, "N": 777_777, "dtype": "float16"},
]
HELD_OUT = [{"M": 2047, "N": 9001, "dtype": "float16"}, {"M": 12_345, "N": 511, "dtype": "float32"}]
SMALL_CASES = [{"M": 9, "N": 2500, "dtype": "float32"}, {"M": 23, "N": 77, "dtype": "float16"},
               {"M": 4, "N": 1100, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (0.0, 0.0), "float16": (0.0, 0.0), "bfloat16": (0.0, 0.0)}


def flops(case):
    return case["M"] * case["N"]


def bytes_moved(case):
    return case["M"] * (case["N"] + 1) * getattr(torch, case["dtype"]).itemsize
