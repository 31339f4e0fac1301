"""Rotary position embedding (GPT-NeoX / LLaMA half-split form) on [B, S, H, D] with fp32 cos/sin tables
[S, D/2]. Family: misc.

First pass: one program per (b, s) row, all heads' rotation pairs in one block of
next_power_of_2(H * D/2): loads both halves, the row's cos/sin, stores both halves."""

import torch
import triton
import triton.language as tl

FAMILY = "misc"


@triton.jit
def rotary_kernel(x_ptr, cos_ptr, sin_ptr, y_ptr, S, H, HALF, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # = b * S + s
    s = pid % S
    offs = tl.arange(0, BLOCK)
    mask = offs < H * HALF
    h = offs // HALF
    i = offs % HALF
    base = pid * H * 2 * HALF + h * 2 * HALF + i
    x1 = tl.load(x_ptr + base, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptr + base + HALF, mask=mask, other=0.0).to(tl.float32)
    c = tl.load(cos_ptr + s * HALF + i, mask=mask, other=0.0)
    sn = tl.load(sin_ptr + s * HALF + i, mask=mask, other=0.0)
    tl.store(y_ptr + base, (x1 * c - x2 * sn).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(y_ptr + base + HALF, (x2 * c + x1 * sn).to(y_ptr.dtype.element_ty), mask=mask)


def entry(x, cos, sin):
    B, S, H, D = x.shape
    y = torch.empty_like(x)
    rotary_kernel[(B * S,)](x, cos, sin, y, S, H, D // 2, BLOCK=triton.next_power_of_2(H * D // 2))
    return y


def reference(x, cos, sin):
    x1, x2 = x.float().chunk(2, dim=-1)
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    half = case["half"]
    x = torch.randn(case["B"], case["S"], case["H"], 2 * half, generator=g).to(getattr(torch, case["dtype"]))
    inv_freq = 10000.0 ** (-torch.arange(half, dtype=torch.float32) / half)
    angles = torch.arange(case["S"], dtype=torch.float32)[:, None] * inv_freq[None, :]
    return x.to(device), angles.cos().to(device), angles.sin().to(device)


CASES = [
    {"B": 8, "S": 2048, "H": 32, "half": 64, "dtype": "bfloat16"},
    {"B": 32, "S": 512, "H": 12, "half": 32, "dtype": "float16"},
    {"B": 2, "S": 8191, "H": 40, "half": 64, "dtype": "bfloat16"},
    {"B": 16, "S": 1000, "H": 16, "half": 40, "dtype": "float32"},
    {"B": 1, "S": 32_769, "H": 8, "half": 64, "dtype": "float16"},
]
HELD_OUT = [{"B": 4, "S": 3001, "H": 28, "half": 64, "dtype": "bfloat16"}, {"B": 6, "S": 777, "H": 20, "half": 32, "dtype": "float32"}]
SMALL_CASES = [{"B": 2, "S": 9, "H": 3, "half": 8, "dtype": "float32"}, {"B": 1, "S": 17, "H": 2, "half": 12, "dtype": "float16"},
               {"B": 3, "S": 5, "H": 5, "half": 4, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-5, 1e-5), "float16": (1e-3, 2e-3), "bfloat16": (1e-2, 1.6e-2)}


def _numel(case):
    return case["B"] * case["S"] * case["H"] * 2 * case["half"]


def flops(case):
    return 3 * _numel(case)


def bytes_moved(case):
    return 2 * _numel(case) * getattr(torch, case["dtype"]).itemsize + 2 * 4 * case["S"] * case["half"]
