"""Depthwise 1-D convolution with "same" zero padding (odd kernel width), x [B, C, L], w [C, KW], as in
ConvNeXt-1D / audio models. Family: conv.

First pass: one program per (batch*channel row, 1024-wide output block); a loop over the KW taps loads a
shifted, masked window of the row and multiplies by the tap weight, fp32 accumulation."""

import torch
import triton
import triton.language as tl

FAMILY = "conv"


@triton.jit
def depthwise_conv1d_kernel(x_ptr, w_ptr, y_ptr, C, L, KW: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # = b * C + c
    channel = row % C
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for t in range(KW):
        src = offs + t - KW // 2
        x = tl.load(x_ptr + row * L + src, mask=(src >= 0) & (src < L), other=0.0).to(tl.float32)
        acc += x * tl.load(w_ptr + channel * KW + t).to(tl.float32)
    tl.store(y_ptr + row * L + offs, acc.to(y_ptr.dtype.element_ty), mask=offs < L)


def entry(x, w):
    B, C, L = x.shape
    y = torch.empty_like(x)
    depthwise_conv1d_kernel[(B * C, triton.cdiv(L, 1024))](x, w, y, C, L, KW=w.shape[1], BLOCK=1024)
    return y


def reference(x, w):
    return torch.nn.functional.conv1d(x, w[:, None, :], padding=w.shape[1] // 2, groups=x.shape[1])


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    x = torch.randn(case["B"], case["C"], case["L"], generator=g).to(dtype)
    w = (torch.randn(case["C"], case["KW"], generator=g) / case["KW"] ** 0.5).to(dtype)
    return x.to(device), w.to(device)


CASES = [
    {"B": 8, "C": 1024, "L": 4096, "KW": 7, "dtype": "float16"},
    {"B": 16, "C": 768, "L": 2048, "KW": 31, "dtype": "float32"},
    {"B": 4, "C": 513, "L": 16_001, "KW": 3, "dtype": "bfloat16"},
    {"B": 64, "C": 256, "L": 1000, "KW": 9, "dtype": "float16"},
    {"B": 2, "C": 2048, "L": 8191, "KW": 5, "dtype": "float32"},
]
HELD_OUT = [{"B": 3, "C": 1000, "L": 3000, "KW": 7, "dtype": "float16"}, {"B": 32, "C": 384, "L": 1537, "KW": 15, "dtype": "float32"}]
SMALL_CASES = [{"B": 2, "C": 5, "L": 301, "KW": 7, "dtype": "float32"}, {"B": 3, "C": 4, "L": 33, "KW": 3, "dtype": "float16"},
               {"B": 1, "C": 7, "L": 130, "KW": 9, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-5, 1e-4), "float16": (5e-3, 1e-2), "bfloat16": (3e-2, 2e-2)}


def flops(case):
    return 2 * case["B"] * case["C"] * case["L"] * case["KW"]


def bytes_moved(case):
    B, C, L, KW = case["B"], case["C"], case["L"], case["KW"]
    return (2 * B * C * L + C * KW) * getattr(torch, case["dtype"]).itemsize
