"""2-D average pooling, kernel 3, stride 2, no padding, on NCHW. Family: pooling.

First pass: one program per (n*c plane, 1024 outputs of the plane); a static 3 x 3 loop of masked loads,
fp32 sum divided by 9."""

import torch
import triton
import triton.language as tl

FAMILY = "pooling"


@triton.jit
def avgpool2d_kernel(x_ptr, y_ptr, H, W, OH, OW, BLOCK: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < OH * OW
    oh = offs // OW
    ow = offs % OW
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in tl.static_range(3):
        for j in tl.static_range(3):
            src = x_ptr + plane * H * W + (2 * oh + i) * W + 2 * ow + j
            acc += tl.load(src, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + plane * OH * OW + offs, (acc / 9.0).to(y_ptr.dtype.element_ty), mask=mask)


def entry(x):
    N, C, H, W = x.shape
    OH, OW = (H - 3) // 2 + 1, (W - 3) // 2 + 1
    y = torch.empty((N, C, OH, OW), device=x.device, dtype=x.dtype)
    avgpool2d_kernel[(N * C, triton.cdiv(OH * OW, 1024))](x, y, H, W, OH, OW, BLOCK=1024)
    return y


def reference(x):
    return torch.nn.functional.avg_pool2d(x, 3, stride=2)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["N"], case["C"], case["H"], case["W"], generator=g).to(getattr(torch, case["dtype"]))
    return (x.to(device),)


CASES = [
    {"N": 64, "C": 64, "H": 113, "W": 113, "dtype": "float16"},
    {"N": 32, "C": 192, "H": 55, "W": 55, "dtype": "float32"},
    {"N": 8, "C": 256, "H": 128, "W": 127, "dtype": "bfloat16"},
    {"N": 128, "C": 384, "H": 27, "W": 27, "dtype": "float16"},
    {"N": 2, "C": 3, "H": 2047, "W": 1025, "dtype": "float32"},
]
HELD_OUT = [{"N": 16, "C": 96, "H": 75, "W": 76, "dtype": "float16"}, {"N": 3, "C": 64, "H": 301, "W": 199, "dtype": "float32"}]
SMALL_CASES = [{"N": 2, "C": 3, "H": 9, "W": 13, "dtype": "float32"}, {"N": 1, "C": 4, "H": 16, "W": 7, "dtype": "float16"},
               {"N": 3, "C": 1, "H": 11, "W": 12, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-5, 1e-5), "float16": (1e-3, 2e-3), "bfloat16": (1e-2, 1.6e-2)}


def _out(case):
    return ((case["H"] - 3) // 2 + 1) * ((case["W"] - 3) // 2 + 1)


def flops(case):
    return 9 * case["N"] * case["C"] * _out(case)


def bytes_moved(case):
    N, C, H, W = case["N"], case["C"], case["H"], case["W"]
    return N * C * (H * W + _out(case)) * getattr(torch, case["dtype"]).itemsize
