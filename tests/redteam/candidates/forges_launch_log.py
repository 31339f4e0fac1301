"""Reaches the harness's launch log through the caller's frame and fakes a launch.

task: vector_add
expect: cheat/denied_import
dynamic: skip
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


import inspect


def entry(x, y):
    frame = inspect.currentframe().f_back
    for value in frame.f_locals.values():
        if hasattr(value, "names"):
            value.names.append("add_kernel")
    return torch.add(x, y)
