"""Fixed: chunks of 1024 values."""

import torch
import triton
import triton.language as tl



@triton.jit
def softmax_kernel(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = tl.full((BLOCK,), float("-inf"), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.load(x_ptr + row * stride + cols, mask=cols < N, other=float("-inf")))
    row_max = tl.max(m, axis=0)
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=float("-inf"))
        s += tl.exp(x - row_max)
    total = tl.sum(s, axis=0)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=float("-inf"))
        tl.store(y_ptr + row * stride + cols, tl.exp(x - row_max) / total, mask=cols < N)


def entry(x):
    M, N = x.shape
    y = torch.empty_like(x)
    softmax_kernel[(M,)](x, y, N, x.stride(0), BLOCK=1024)
    return y
