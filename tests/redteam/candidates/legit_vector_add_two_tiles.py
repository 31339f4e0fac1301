"""A genuine rewrite: each program adds two consecutive tiles.

task: vector_add
expect: accept
dynamic: accept
"""

import torch
import triton
import triton.language as tl


@triton.jit
def add_two_tiles_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    start = tl.program_id(axis=0) * 2 * BLOCK_SIZE
    for tile in tl.static_range(2):
        offsets = start + tile * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def entry(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    grid = lambda meta: (triton.cdiv(n, 2 * meta["BLOCK_SIZE"]),)
    add_two_tiles_kernel[grid](x, y, out, n, BLOCK_SIZE=512)
    return out
