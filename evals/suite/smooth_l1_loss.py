"""Smooth L1 (Huber-like, beta 1) loss between two tensors, mean, fp32 scalar result. Family: loss.

First pass: one program per 1024-element block computes its partial sum and adds it (pre-divided by
the element count) into the scalar with an atomic."""

import torch
import triton
import triton.language as tl

FAMILY = "loss"


@triton.jit
def smooth_l1_kernel(x_ptr, y_ptr, loss_ptr, n_elements, beta, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    d = tl.abs(x - y)
    term = tl.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    tl.atomic_add(loss_ptr, tl.sum(term, axis=0) / n_elements)


def entry(x, y):
    loss = torch.zeros((), device=x.device, dtype=torch.float32)
    n = x.numel()
    smooth_l1_kernel[(triton.cdiv(n, 1024),)](x, y, loss, n, 1.0, BLOCK=1024)
    return loss


def reference(x, y):
    return torch.nn.functional.smooth_l1_loss(x.float(), y.float(), beta=1.0)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    x = torch.randn(case["M"], case["N"], generator=g).to(dtype)
    y = torch.randn(case["M"], case["N"], generator=g).to(dtype)
    return x.to(device), y.to(device)


CASES = [
    {"M": 8192, "N": 4096, "dtype": "float16"},
    {"M": 4096, "N": 8192, "dtype": "float32"},
    {"M": 2999, "N": 4999, "dtype": "bfloat16"},
    {"M": 1, "N": 33_554_467, "dtype": "float16"},
    {"M": 262_147, "N": 64, "dtype": "float32"},
]
HELD_OUT = [{"M": 1234, "N": 5678, "dtype": "float16"}, {"M": 3, "N": 2_000_003, "dtype": "float32"}]
SMALL_CASES = [{"M": 9, "N": 2500, "dtype": "float32"}, {"M": 23, "N": 77, "dtype": "float16"},
               {"M": 4, "N": 1100, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-5, 1e-4)}


def flops(case):
    return 5 * case["M"] * case["N"]


def bytes_moved(case):
    return 2 * case["M"] * case["N"] * getattr(torch, case["dtype"]).itemsize + 4
