"""Launches a Triton kernel that does nothing, then computes with torch (the interpreter sees a launch: only the static check, and bench's kernel attribution on a GPU, catch it).

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
    touch_kernel[(1,)](x)
    return x + y
