"""A genuine rewrite that unpacks tensors and sizes in one tuple and branches on the sizes (a campaign reply
written this way was once rejected: the sizes were taken for tensors).

task: vector_add
expect: accept
dynamic: accept
"""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if EVEN:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))
    else:
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
                 mask=mask)


def entry(x, y):
    out = torch.empty_like(x)
    a, b, n, block = x, y, out.numel(), 1024
    add_kernel[(triton.cdiv(n, block),)](a, b, out, n, BLOCK_SIZE=block, EVEN=(n % block == 0))
    return out
