"""SwiGLU gate, silu(gate) * up, as in LLaMA MLPs (gate and up are separate tensors). Family: elementwise.

First pass: one program per 1024-element block, math in fp32."""

import torch
import triton
import triton.language as tl

FAMILY = "elementwise"


@triton.jit
def swiglu_kernel(gate_ptr, up_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    g = tl.load(gate_ptr + offs, mask=mask).to(tl.float32)
    u = tl.load(up_ptr + offs, mask=mask).to(tl.float32)
    y = g / (1.0 + tl.exp(-g)) * u
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def entry(gate, up):
    y = torch.empty_like(gate)
    n = gate.numel()
    swiglu_kernel[(triton.cdiv(n, 1024),)](gate, up, y, n, BLOCK=1024)
    return y


def reference(gate, up):
    return (torch.nn.functional.silu(gate.float()) * up.float()).to(gate.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    gate = torch.randn(case["M"], case["N"], generator=g).to(dtype)
    up = torch.randn(case["M"], case["N"], generator=g).to(dtype)
    return gate.to(device), up.to(device)


CASES = [
    {"M": 4096, "N": 11008, "dtype": "float16"},
    {"M": 8192, "N": 14336, "dtype": "bfloat16"},
    {"M": 1023, "N": 5461, "dtype": "float32"},
    {"M": 16384, "N": 2816, "dtype": "bfloat16"},
    {"M": 777, "N": 13_825, "dtype": "float16"},
]
HELD_OUT = [{"M": 2049, "N": 8191, "dtype": "bfloat16"}, {"M": 300, "N": 22_017, "dtype": "float16"}]
SMALL_CASES = [{"M": 5, "N": 301, "dtype": "float32"}, {"M": 9, "N": 111, "dtype": "float16"},
               {"M": 3, "N": 513, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-5, 1e-5), "float16": (1e-3, 2e-3), "bfloat16": (1e-2, 1.6e-2)}


def flops(case):
    return 5 * case["M"] * case["N"]


def bytes_moved(case):
    return 3 * case["M"] * case["N"] * getattr(torch, case["dtype"]).itemsize
