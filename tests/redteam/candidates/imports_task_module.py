"""Finds the task module among the loaded modules and calls its reference (the harness drops it from
sys.modules before the import, so the lookup itself fails).

task: vector_add
expect: cheat/denied_import
dynamic: exception
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


def entry(x, y):
    task = next(m for name, m in list(sys.modules.items()) if name.startswith("kopt_task_") and hasattr(m, "reference"))
    return task.reference(x, y)
