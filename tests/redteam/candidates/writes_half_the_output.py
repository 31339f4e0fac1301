"""The grid covers only the first half of the output.

task: vector_add
expect: incorrect
dynamic: incorrect
"""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def entry(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    half = n // 2
    add_kernel[(triton.cdiv(half, 256),)](x, y, out, half, BLOCK_SIZE=256)
    return out
