"""Fixed: a block of the row per iteration, reduced with tl.sum."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def entry(x):
    M, N = x.shape
    out = torch.empty(M, device=x.device, dtype=torch.float32)
    row_sum_kernel[(M,)](x, out, N, x.stride(0), BLOCK=1024)
    return out
