"""Adds element by element in a Python loop over zip(x, y), beside a token kernel.

task: vector_add
expect: cheat/tensor_op
dynamic: skip
"""

import torch
import triton
import triton.language as tl


@triton.jit
def touch_kernel(x_ptr):
    tl.load(x_ptr)


def entry(x, y):
    out = torch.empty_like(x)
    touch_kernel[(1,)](x)
    for i, (a, b) in enumerate(zip(x, y)):
        out[i] = a + b
    return out
