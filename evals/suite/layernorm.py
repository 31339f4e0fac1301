"""LayerNorm over the last dimension with weight and bias (eps 1e-5). Family: norm.

First pass: one program per row, the whole row in one block of next_power_of_2(N), fp32 statistics."""

import torch
import triton
import triton.language as tl

FAMILY = "norm"


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
    tl.store(y_ptr + row * N + cols, (d * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


def entry(x, weight, bias):
    M, N = x.shape
    y = torch.empty_like(x)
    layernorm_kernel[(M,)](x, weight, bias, y, N, 1e-5, BLOCK=triton.next_power_of_2(N))
    return y


def reference(x, weight, bias):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps=1e-5)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    x = torch.randn(case["M"], case["N"], generator=g).to(dtype)
    weight = torch.randn(case["N"], generator=g).to(dtype)
    bias = torch.randn(case["N"], generator=g).to(dtype)
    return x.to(device), weight.to(device), bias.to(device)


CASES = [
    {"M": 16_384, "N": 4096, "dtype": "float16"},
    {"M": 8192, "N": 8192, "dtype": "bfloat16"},
    {"M": 4099, "N": 5120, "dtype": "float32"},
    {"M": 65_536, "N": 768, "dtype": "float16"},
    {"M": 30_001, "N": 1025, "dtype": "bfloat16"},
]
HELD_OUT = [{"M": 2047, "N": 3000, "dtype": "float16"}, {"M": 9999, "N": 2048, "dtype": "float32"}]
SMALL_CASES = [{"M": 7, "N": 300, "dtype": "float32"}, {"M": 13, "N": 64, "dtype": "float16"},
               {"M": 5, "N": 129, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-4, 1e-4), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 2e-2)}


def flops(case):
    return 8 * case["M"] * case["N"]


def bytes_moved(case):
    return (2 * case["M"] * case["N"] + 2 * case["N"]) * getattr(torch, case["dtype"]).itemsize
