"""Fixed: tl.cumsum over a block of the row, carrying the block total between blocks."""

import torch
import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    carry = 0.0
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
        s = tl.cumsum(x, axis=0) + carry
        tl.store(y_ptr + row * stride + cols, s, mask=cols < N)
        carry += tl.sum(x, axis=0)


def entry(x):
    M, N = x.shape
    y = torch.empty_like(x)
    cumsum_kernel[(M,)](x, y, N, x.stride(0), BLOCK=1024)
    return y
