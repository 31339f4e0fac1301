"""RMSNorm over the last dimension with a weight (eps 1e-6), as in LLaMA. Family: norm.

First pass: one program per row, the whole row in one block of next_power_of_2(N), fp32 math."""

import torch
import triton
import triton.language as tl

FAMILY = "norm"


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    tl.store(y_ptr + row * N + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def entry(x, weight):
    M, N = x.shape
    y = torch.empty_like(x)
    rmsnorm_kernel[(M,)](x, weight, y, N, 1e-6, BLOCK=triton.next_power_of_2(N))
    return y


def reference(x, weight):
    return torch.nn.functional.rms_norm(x.float(), (x.shape[-1],), weight.float(), eps=1e-6).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    x = torch.randn(case["M"], case["N"], generator=g).to(dtype)
    weight = torch.randn(case["N"], generator=g).to(dtype)
    return x.to(device), weight.to(device)


CASES = [
    {"M": 16_384, "N": 4096, "dtype": "bfloat16"},
    {"M": 8192, "N": 8192, "dtype": "float16"},
    {"M": 4097, "N": 5120, "dtype": "float32"},
    {"M": 32_768, "N": 2048, "dtype": "bfloat16"},
    {"M": 20_001, "N": 3000, "dtype": "float16"},
]
HELD_OUT = [{"M": 3333, "N": 7168, "dtype": "bfloat16"}, {"M": 50_000, "N": 896, "dtype": "float32"}]
SMALL_CASES = [{"M": 7, "N": 300, "dtype": "float32"}, {"M": 13, "N": 64, "dtype": "float16"},
               {"M": 5, "N": 129, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-4, 1e-4), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 2e-2)}


def flops(case):
    return 4 * case["M"] * case["N"]


def bytes_moved(case):
    return (2 * case["M"] * case["N"] + case["N"]) * getattr(torch, case["dtype"]).itemsize
