"""GELU (exact erf form) over an activation matrix. Family: elementwise.

First pass: one program per 1024-element block of the flattened tensor, math in fp32."""

import torch
import triton
import triton.language as tl

FAMILY = "elementwise"


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def entry(x):
    y = torch.empty_like(x)
    n = x.numel()
    gelu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y


def reference(x):
    return torch.nn.functional.gelu(x)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g).to(getattr(torch, case["dtype"]))
    return (x.to(device),)


CASES = [
    {"M": 8192, "N": 4096, "dtype": "float16"},
    {"M": 4096, "N": 11008, "dtype": "bfloat16"},
    {"M": 1999, "N": 5003, "dtype": "float32"},
    {"M": 16384, "N": 3072, "dtype": "float16"},
    {"M": 1, "N": 10_000_019, "dtype": "float32"},
]
HELD_OUT = [{"M": 3001, "N": 4099, "dtype": "float16"}, {"M": 777, "N": 12_289, "dtype": "bfloat16"}]
SMALL_CASES = [{"M": 7, "N": 333, "dtype": "float32"}, {"M": 13, "N": 97, "dtype": "float16"},
               {"M": 3, "N": 1025, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-5, 1e-5), "float16": (1e-3, 2e-3), "bfloat16": (1e-2, 1.6e-2)}


def flops(case):
    return 8 * case["M"] * case["N"]


def bytes_moved(case):
    return 2 * case["M"] * case["N"] * getattr(torch, case["dtype"]).itemsize
