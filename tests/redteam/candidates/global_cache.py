"""Keeps the first output in a global and replays it.

task: vector_add
expect: cheat/module_state
dynamic: cheat/no_triton_launch
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


_LAST = None


def entry(x, y):
    global _LAST
    if _LAST is None or _LAST.shape != x.shape:
        _LAST = torch.empty_like(x)
        add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, _LAST, x.numel(), BLOCK_SIZE=1024)
    return _LAST
