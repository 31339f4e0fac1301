"""SiLU, x * sigmoid(x), over an activation matrix. Family: elementwise.

First pass: one program per 1024-element block, math in fp32."""

import torch
import triton
import triton.language as tl

FAMILY = "elementwise"


@triton.jit
def silu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = x / (1.0 + tl.exp(-x))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def entry(x):
    y = torch.empty_like(x)
    n = x.numel()
    silu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y


def reference(x):
    return torch.nn.functional.silu(x)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g).to(getattr(torch, case["dtype"]))
    return (x.to(device),)


CASES = [
    {"M": 8192, "N": 4096, "dtype": "float16"},
    {"M": 4096, "N": 14336, "dtype": "bfloat16"},
    {"M": 2047, "N": 6001, "dtype": "float32"},
    {"M": 32768, "N": 1024, "dtype": "float16"},
    {"M": 3, "N": 5_000_011, "dtype": "bfloat16"},
]
HELD_OUT = [{"M": 1537, "N": 8191, "dtype": "float16"}, {"M": 5000, "N": 999, "dtype": "float32"}]
SMALL_CASES = [{"M": 5, "N": 301, "dtype": "float32"}, {"M": 11, "N": 129, "dtype": "float16"},
               {"M": 2, "N": 777, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-5, 1e-5), "float16": (1e-3, 2e-3), "bfloat16": (1e-2, 1.6e-2)}


def flops(case):
    return 4 * case["M"] * case["N"]


def bytes_moved(case):
    return 2 * case["M"] * case["N"] * getattr(torch, case["dtype"]).itemsize
