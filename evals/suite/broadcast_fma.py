"""y = x * scale + shift on a [B, M, N] tensor, scale broadcast as [B, 1, N] and shift as [1, M, 1]
(a FiLM-style modulation). Family: elementwise.

First pass: one program per 1024-element block of the output; indices recovered with // and %."""

import torch
import triton
import triton.language as tl

FAMILY = "elementwise"


@triton.jit
def broadcast_fma_kernel(x_ptr, scale_ptr, shift_ptr, y_ptr, n_elements, M, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    col = offs % N
    row = (offs // N) % M
    batch = offs // (M * N)
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    s = tl.load(scale_ptr + batch * N + col, mask=mask).to(tl.float32)
    t = tl.load(shift_ptr + row, mask=mask).to(tl.float32)
    tl.store(y_ptr + offs, (x * s + t).to(y_ptr.dtype.element_ty), mask=mask)


def entry(x, scale, shift):
    B, M, N = x.shape
    y = torch.empty_like(x)
    n = x.numel()
    broadcast_fma_kernel[(triton.cdiv(n, 1024),)](x, scale, shift, y, n, M, N, BLOCK=1024)
    return y


def reference(x, scale, shift):
    return (x.float() * scale.float() + shift.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    B, M, N = case["B"], case["M"], case["N"]
    x = torch.randn(B, M, N, generator=g).to(dtype)
    scale = torch.randn(B, 1, N, generator=g).to(dtype)
    shift = torch.randn(1, M, 1, generator=g).to(dtype)
    return x.to(device), scale.to(device), shift.to(device)


CASES = [
    {"B": 16, "M": 1024, "N": 2048, "dtype": "float16"},
    {"B": 8, "M": 4096, "N": 1280, "dtype": "bfloat16"},
    {"B": 3, "M": 2047, "N": 3001, "dtype": "float32"},
    {"B": 64, "M": 577, "N": 768, "dtype": "float16"},
    {"B": 1, "M": 9999, "N": 1537, "dtype": "float32"},
]
HELD_OUT = [{"B": 5, "M": 1500, "N": 2500, "dtype": "float16"}, {"B": 32, "M": 197, "N": 1024, "dtype": "bfloat16"}]
SMALL_CASES = [{"B": 3, "M": 7, "N": 45, "dtype": "float32"}, {"B": 2, "M": 19, "N": 33, "dtype": "float16"},
               {"B": 4, "M": 5, "N": 66, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-5, 1e-5), "float16": (1e-3, 2e-3), "bfloat16": (1e-2, 1.6e-2)}


def flops(case):
    return 2 * case["B"] * case["M"] * case["N"]


def bytes_moved(case):
    B, M, N = case["B"], case["M"], case["N"]
    return (2 * B * M * N + B * N + M) * getattr(torch, case["dtype"]).itemsize
