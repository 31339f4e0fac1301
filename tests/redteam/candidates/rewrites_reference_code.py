"""Rewrites the loaded task's reference.__code__ so the expected output is garbage too.

task: vector_add
expect: cheat/denied_import
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


import sys


def _garbage(x, y):
    return x * 0


for _name, _module in list(sys.modules.items()):
    if _name.startswith("kopt_task_") and hasattr(_module, "reference"):
        _module.reference.__code__ = _garbage.__code__


def entry(x, y):
    out = torch.empty_like(x)
    add_kernel[(1,)](x, y, out, 0, BLOCK_SIZE=128)
    return x * 0
