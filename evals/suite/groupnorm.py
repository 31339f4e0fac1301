"""GroupNorm on an NCHW activation with per-channel weight and bias (eps 1e-5), the affine parameters
shaped [groups, channels per group]. Family: norm.

First pass: one program per (sample, group), two loops over the group's Cg*H*W contiguous elements in
1024-wide chunks: statistics first, then normalize and apply the per-channel affine."""

import torch
import triton
import triton.language as tl

FAMILY = "norm"


@triton.jit
def groupnorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, G, Cg, HW, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)  # = n * G + g; the group's elements are contiguous in NCHW
    group = pid % G
    size = Cg * HW
    base = pid * size
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + offs, mask=offs < size, other=0.0).to(tl.float32)
        acc += x
        acc2 += x * x
    mean = tl.sum(acc, axis=0) / size
    var = tl.sum(acc2, axis=0) / size - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < size
        channel = group * Cg + offs // HW
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + channel, mask=mask).to(tl.float32)
        b = tl.load(b_ptr + channel, mask=mask).to(tl.float32)
        tl.store(y_ptr + base + offs, ((x - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


def entry(x, weight, bias):
    N, C, H, W = x.shape
    G, Cg = weight.shape
    y = torch.empty_like(x)
    groupnorm_kernel[(N * G,)](x, weight, bias, y, G, Cg, H * W, 1e-5, BLOCK=1024)
    return y


def reference(x, weight, bias):
    return torch.nn.functional.group_norm(x, weight.shape[0], weight.reshape(-1), bias.reshape(-1), eps=1e-5)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    C = case["G"] * case["Cg"]
    x = torch.randn(case["N"], C, case["H"], case["W"], generator=g).to(dtype)
    weight = torch.randn(case["G"], case["Cg"], generator=g).to(dtype)
    bias = torch.randn(case["G"], case["Cg"], generator=g).to(dtype)
    return x.to(device), weight.to(device), bias.to(device)


CASES = [
    {"N": 16, "G": 32, "Cg": 16, "H": 64, "W": 64, "dtype": "float16"},
    {"N": 8, "G": 32, "Cg": 40, "H": 48, "W": 48, "dtype": "float32"},
    {"N": 4, "G": 32, "Cg": 8, "H": 127, "W": 129, "dtype": "bfloat16"},
    {"N": 32, "G": 16, "Cg": 20, "H": 28, "W": 28, "dtype": "float16"},
    {"N": 3, "G": 8, "Cg": 37, "H": 255, "W": 199, "dtype": "float32"},
]
HELD_OUT = [{"N": 6, "G": 32, "Cg": 12, "H": 96, "W": 80, "dtype": "float16"},
            {"N": 2, "G": 4, "Cg": 100, "H": 57, "W": 63, "dtype": "float32"}]
SMALL_CASES = [{"N": 2, "G": 4, "Cg": 3, "H": 7, "W": 9, "dtype": "float32"},
               {"N": 3, "G": 2, "Cg": 5, "H": 11, "W": 5, "dtype": "float16"},
               {"N": 1, "G": 3, "Cg": 2, "H": 13, "W": 17, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-4, 1e-4), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 2e-2)}


def _numel(case):
    return case["N"] * case["G"] * case["Cg"] * case["H"] * case["W"]


def flops(case):
    return 8 * _numel(case)


def bytes_moved(case):
    C = case["G"] * case["Cg"]
    return (2 * _numel(case) + 2 * C) * getattr(torch, case["dtype"]).itemsize
