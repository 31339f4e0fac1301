"""Overrides builtins (isinstance, len) the harness uses; then torch does the work (the child breaks).

task: vector_add
expect: cheat/denied_import
dynamic: crash
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


import builtins

builtins.isinstance = lambda obj, cls: True


def entry(x, y):
    return torch.add(x, y)
