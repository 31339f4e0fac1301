"""Symmetric per-row int8 quantization: scale = max|x| / 127, q = round(x / scale) clamped to +-127;
returns (q int8, scale fp32). Family: quant.

First pass: one program per row, the whole row in one block of next_power_of_2(N), fp32 math,
round-half-up via floor(v + 0.5)."""

import torch
import triton
import triton.language as tl

FAMILY = "quant"


@triton.jit
def quantize_int8_kernel(x_ptr, q_ptr, scale_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    scale = tl.max(tl.abs(x), axis=0) / 127.0
    q = tl.floor(x / scale + 0.5)
    q = tl.minimum(tl.maximum(q, -127.0), 127.0)
    tl.store(q_ptr + row * N + cols, q.to(tl.int8), mask=mask)
    tl.store(scale_ptr + row, scale)


def entry(x):
    M, N = x.shape
    q = torch.empty((M, N), device=x.device, dtype=torch.int8)
    scale = torch.empty(M, device=x.device, dtype=torch.float32)
    quantize_int8_kernel[(M,)](x, q, scale, N, BLOCK=triton.next_power_of_2(N))
    return q, scale


def reference(x):
    xf = x.float()
    scale = xf.abs().amax(dim=1, keepdim=True) / 127.0
    q = torch.floor(xf / scale + 0.5).clamp(-127, 127).to(torch.int8)
    return q, scale.squeeze(1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g).to(getattr(torch, case["dtype"]))
    return (x.to(device),)


CASES = [
    {"M": 16_384, "N": 4096, "dtype": "float16"},
    {"M": 8192, "N": 8192, "dtype": "bfloat16"},
    {"M": 4097, "N": 5120, "dtype": "float32"},
    {"M": 65_536, "N": 1000, "dtype": "float16"},
    {"M": 2047, "N": 11_008, "dtype": "bfloat16"},
]
HELD_OUT = [{"M": 3000, "N": 3000, "dtype": "float16"}, {"M": 10_001, "N": 2048, "dtype": "bfloat16"}]
SMALL_CASES = [{"M": 7, "N": 300, "dtype": "float32"}, {"M": 13, "N": 64, "dtype": "float16"},
               {"M": 5, "N": 129, "dtype": "bfloat16"}]
# A quotient within an ulp of a .5 boundary may round either way (GPU fp32 division is approximate).
TOLERANCES = {"int8": (1, 0), "float32": (1e-6, 1e-6)}


def flops(case):
    return 4 * case["M"] * case["N"]


def bytes_moved(case):
    M, N = case["M"], case["N"]
    return M * N * getattr(torch, case["dtype"]).itemsize + M * N + 4 * M
