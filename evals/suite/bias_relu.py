"""relu(x + bias) with a per-column bias broadcast over rows. Family: elementwise.

First pass: a 2-D grid of 32 x 128 tiles; the bias row is loaded once per tile."""

import torch
import triton
import triton.language as tl

FAMILY = "elementwise"


@triton.jit
def bias_relu_kernel(x_ptr, b_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + rn, mask=rn < N).to(tl.float32)
    y = tl.maximum(x + b[None, :], 0.0)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def entry(x, bias):
    M, N = x.shape
    y = torch.empty_like(x)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 128))
    bias_relu_kernel[grid](x, bias, y, M, N, BLOCK_M=32, BLOCK_N=128)
    return y


def reference(x, bias):
    return torch.relu(x + bias)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    x = torch.randn(case["M"], case["N"], generator=g).to(dtype)
    bias = torch.randn(case["N"], generator=g).to(dtype)
    return x.to(device), bias.to(device)


CASES = [
    {"M": 8192, "N": 4096, "dtype": "float16"},
    {"M": 4096, "N": 12_288, "dtype": "bfloat16"},
    {"M": 3001, "N": 5003, "dtype": "float32"},
    {"M": 65_537, "N": 768, "dtype": "float16"},
    {"M": 100, "N": 131_073, "dtype": "float32"},
]
HELD_OUT = [{"M": 1999, "N": 6143, "dtype": "bfloat16"}, {"M": 12_345, "N": 1000, "dtype": "float16"}]
SMALL_CASES = [{"M": 33, "N": 130, "dtype": "float32"}, {"M": 5, "N": 257, "dtype": "float16"},
               {"M": 37, "N": 65, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-6, 1e-6), "float16": (1e-3, 2e-3), "bfloat16": (1e-2, 1.6e-2)}


def flops(case):
    return 2 * case["M"] * case["N"]


def bytes_moved(case):
    return (2 * case["M"] * case["N"] + case["N"]) * getattr(torch, case["dtype"]).itemsize
