"""Mean squared error between two tensors, fp32 scalar result. Family: loss.

First pass: one program per 1024-element block computes its partial sum and adds it (pre-divided by
the element count) into the scalar with an atomic."""

import torch
import triton
import triton.language as tl

FAMILY = "loss"


@triton.jit
def mse_loss_kernel(x_ptr, y_ptr, loss_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    d = x - y
    tl.atomic_add(loss_ptr, tl.sum(d * d, axis=0) / n_elements)


def entry(x, y):
    loss = torch.zeros((), device=x.device, dtype=torch.float32)
    n = x.numel()
    mse_loss_kernel[(triton.cdiv(n, 1024),)](x, y, loss, n, BLOCK=1024)
    return loss


def reference(x, y):
    return torch.nn.functional.mse_loss(x.float(), y.float())


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    x = torch.randn(case["M"], case["N"], generator=g).to(dtype)
    y = torch.randn(case["M"], case["N"], generator=g).to(dtype)
    return x.to(device), y.to(device)


CASES = [
    {"M": 8192, "N": 4096, "dtype": "float32"},
    {"M": 4096, "N": 8192, "dtype": "bfloat16"},
    {"M": 3001, "N": 5003, "dtype": "float16"},
    {"M": 1, "N": 16_777_259, "dtype": "float32"},
    {"M": 100_003, "N": 129, "dtype": "bfloat16"},
]
HELD_OUT = [{"M": 2000, "N": 3001, "dtype": "float32"}, {"M": 7, "N": 999_999, "dtype": "float16"}]
SMALL_CASES = [{"M": 9, "N": 2500, "dtype": "float32"}, {"M": 23, "N": 77, "dtype": "float16"},
               {"M": 4, "N": 1100, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-5, 1e-4)}


def flops(case):
    return 3 * case["M"] * case["N"]


def bytes_moved(case):
    return 2 * case["M"] * case["N"] * getattr(torch, case["dtype"]).itemsize + 4
