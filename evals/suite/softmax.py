"""Softmax over the last dimension. Family: softmax.

First pass (the tutorial's): one program per row, the whole row in one block of next_power_of_2(N)."""

import torch
import triton
import triton.language as tl

FAMILY = "softmax"


@triton.jit
def softmax_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * N + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def entry(x):
    M, N = x.shape
    y = torch.empty_like(x)
    softmax_kernel[(M,)](x, y, N, BLOCK=triton.next_power_of_2(N))
    return y


def reference(x):
    return torch.softmax(x, dim=-1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g).to(getattr(torch, case["dtype"]))
    return (x.to(device),)


CASES = [
    {"M": 16_384, "N": 4096, "dtype": "float16"},
    {"M": 8192, "N": 8192, "dtype": "float32"},
    {"M": 4097, "N": 5003, "dtype": "bfloat16"},
    {"M": 131_072, "N": 197, "dtype": "float16"},
    {"M": 32_768, "N": 1000, "dtype": "float32"},
]
HELD_OUT = [{"M": 3000, "N": 6007, "dtype": "float16"}, {"M": 65_537, "N": 512, "dtype": "bfloat16"}]
SMALL_CASES = [{"M": 7, "N": 300, "dtype": "float32"}, {"M": 13, "N": 64, "dtype": "float16"},
               {"M": 5, "N": 129, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-6, 1e-4), "float16": (1e-4, 1e-2), "bfloat16": (1e-3, 2e-2)}


def flops(case):
    return 5 * case["M"] * case["N"]


def bytes_moved(case):
    return 2 * case["M"] * case["N"] * getattr(torch, case["dtype"]).itemsize
