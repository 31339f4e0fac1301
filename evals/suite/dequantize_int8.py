"""Per-row int8 dequantization, y = q * scale[row], with the scale's dtype (fp16/bf16/fp32) as the output
dtype. Family: quant.

First pass: a 2-D grid of 32 x 128 tiles; the scale column is loaded once per tile, math in fp32."""

import torch
import triton
import triton.language as tl

FAMILY = "quant"


@triton.jit
def dequantize_int8_kernel(q_ptr, scale_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None].to(tl.int64) * N + rn[None, :]
    q = tl.load(q_ptr + offs, mask=mask, other=0).to(tl.float32)
    s = tl.load(scale_ptr + rm, mask=rm < M, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (q * s[:, None]).to(y_ptr.dtype.element_ty), mask=mask)


def entry(q, scale):
    M, N = q.shape
    y = torch.empty((M, N), device=q.device, dtype=scale.dtype)
    dequantize_int8_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 128))](q, scale, y, M, N, BLOCK_M=32, BLOCK_N=128)
    return y


def reference(q, scale):
    return (q.float() * scale.float()[:, None]).to(scale.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    q = (torch.randn(case["M"], case["N"], generator=g) * 40).round().clamp(-127, 127).to(torch.int8)
    scale = (torch.randn(case["M"], generator=g).abs() * 0.02 + 1e-3).to(getattr(torch, case["dtype"]))
    return q.to(device), scale.to(device)


CASES = [
    {"M": 16_384, "N": 4096, "dtype": "float16"},
    {"M": 8192, "N": 14_336, "dtype": "bfloat16"},
    {"M": 4097, "N": 5003, "dtype": "float32"},
    {"M": 100_003, "N": 768, "dtype": "float16"},
    {"M": 128, "N": 1_000_001, "dtype": "bfloat16"},
]
HELD_OUT = [{"M": 3000, "N": 11_008, "dtype": "float16"}, {"M": 20_001, "N": 999, "dtype": "bfloat16"}]
SMALL_CASES = [{"M": 37, "N": 300, "dtype": "float32"}, {"M": 13, "N": 64, "dtype": "float16"},
               {"M": 5, "N": 129, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-6, 1e-6), "float16": (1e-3, 2e-3), "bfloat16": (1e-2, 1.6e-2)}


def flops(case):
    return case["M"] * case["N"]


def bytes_moved(case):
    M, N = case["M"], case["N"]
    size = getattr(torch, case["dtype"]).itemsize
    return M * N + M * size + M * N * size
