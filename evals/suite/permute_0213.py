"""Head split permute, [B, S, H, D] -> [B, H, S, D] contiguous (x.permute(0, 2, 1, 3)), as done before
attention. Family: transpose.

First pass: one program per (b, s) row of H*D contiguous elements, in one block of
next_power_of_2(H*D), each element stored to its head's slice."""

import torch
import triton
import triton.language as tl

FAMILY = "transpose"


@triton.jit
def permute_0213_kernel(x_ptr, y_ptr, S, H, D, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # = b * S + s
    b = pid // S
    s = pid % S
    offs = tl.arange(0, BLOCK)
    mask = offs < H * D
    h = offs // D
    d = offs % D
    x = tl.load(x_ptr + pid * H * D + offs, mask=mask)
    tl.store(y_ptr + ((b * H + h) * S + s) * D + d, x, mask=mask)


def entry(x):
    B, S, H, D = x.shape
    y = torch.empty((B, H, S, D), device=x.device, dtype=x.dtype)
    permute_0213_kernel[(B * S,)](x, y, S, H, D, BLOCK=triton.next_power_of_2(H * D))
    return y


def reference(x):
    return x.permute(0, 2, 1, 3).contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["B"], case["S"], case["H"], case["D"], generator=g).to(getattr(torch, case["dtype"]))
    return (x.to(device),)


CASES = [
    {"B": 8, "S": 2048, "H": 32, "D": 128, "dtype": "float16"},
    {"B": 32, "S": 512, "H": 12, "D": 64, "dtype": "bfloat16"},
    {"B": 2, "S": 8191, "H": 40, "D": 128, "dtype": "float16"},
    {"B": 64, "S": 197, "H": 16, "D": 80, "dtype": "float32"},
    {"B": 1, "S": 32_769, "H": 8, "D": 64, "dtype": "bfloat16"},
]
HELD_OUT = [{"B": 4, "S": 1000, "H": 20, "D": 64, "dtype": "float16"}, {"B": 3, "S": 3001, "H": 28, "D": 128, "dtype": "float32"}]
SMALL_CASES = [{"B": 2, "S": 9, "H": 3, "D": 16, "dtype": "float32"}, {"B": 3, "S": 5, "H": 4, "D": 24, "dtype": "float16"},
               {"B": 1, "S": 11, "H": 2, "D": 33, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (0.0, 0.0), "float16": (0.0, 0.0), "bfloat16": (0.0, 0.0)}


def _numel(case):
    return case["B"] * case["S"] * case["H"] * case["D"]


def flops(case):
    return _numel(case)


def bytes_moved(case):
    return 2 * _numel(case) * getattr(torch, case["dtype"]).itemsize
