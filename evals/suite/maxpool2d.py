"""2-D max pooling, kernel 2, stride 2, no padding (floor for odd sizes), on NCHW. Family: pooling.

First pass: one program per (n*c plane, 1024 outputs of the plane); four masked loads per output."""

import torch
import triton
import triton.language as tl

FAMILY = "pooling"


@triton.jit
def maxpool2d_kernel(x_ptr, y_ptr, H, W, OH, OW, BLOCK: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < OH * OW
    oh = offs // OW
    ow = offs % OW
    src = x_ptr + plane * H * W + (2 * oh) * W + 2 * ow
    a = tl.load(src, mask=mask, other=float("-inf"))
    b = tl.load(src + 1, mask=mask, other=float("-inf"))
    c = tl.load(src + W, mask=mask, other=float("-inf"))
    d = tl.load(src + W + 1, mask=mask, other=float("-inf"))
    y = tl.maximum(tl.maximum(a, b), tl.maximum(c, d))
    tl.store(y_ptr + plane * OH * OW + offs, y, mask=mask)


def entry(x):
    N, C, H, W = x.shape
    OH, OW = H // 2, W // 2
    y = torch.empty((N, C, OH, OW), device=x.device, dtype=x.dtype)
    maxpool2d_kernel[(N * C, triton.cdiv(OH * OW, 1024))](x, y, H, W, OH, OW, BLOCK=1024)
    return y


def reference(x):
    return torch.nn.functional.max_pool2d(x, 2)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["N"], case["C"], case["H"], case["W"], generator=g).to(getattr(torch, case["dtype"]))
    return (x.to(device),)


CASES = [
    {"N": 64, "C": 64, "H": 112, "W": 112, "dtype": "float16"},
    {"N": 32, "C": 128, "H": 56, "W": 56, "dtype": "float32"},
    {"N": 8, "C": 256, "H": 127, "W": 129, "dtype": "bfloat16"},
    {"N": 128, "C": 512, "H": 14, "W": 14, "dtype": "float16"},
    {"N": 4, "C": 3, "H": 1023, "W": 2049, "dtype": "float32"},
]
HELD_OUT = [{"N": 16, "C": 96, "H": 75, "W": 75, "dtype": "float16"}, {"N": 3, "C": 64, "H": 301, "W": 199, "dtype": "float32"}]
SMALL_CASES = [{"N": 2, "C": 3, "H": 9, "W": 13, "dtype": "float32"}, {"N": 1, "C": 4, "H": 16, "W": 7, "dtype": "float16"},
               {"N": 3, "C": 1, "H": 11, "W": 11, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (0.0, 0.0), "float16": (0.0, 0.0), "bfloat16": (0.0, 0.0)}


def flops(case):
    return 3 * case["N"] * case["C"] * (case["H"] // 2) * (case["W"] // 2)


def bytes_moved(case):
    N, C, H, W = case["N"], case["C"], case["H"], case["W"]
    return N * C * (H * W + (H // 2) * (W // 2)) * getattr(torch, case["dtype"]).itemsize
