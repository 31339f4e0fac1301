"""An lru_cache on the computation, keyed by size.

task: vector_add
expect: cheat/output_cache
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


import functools

_INPUTS = []


@functools.lru_cache(maxsize=None)
def _compute(n):
    x, y = _INPUTS[-1]
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out


def entry(x, y):
    _INPUTS.append((x, y))
    return _compute(x.numel())
