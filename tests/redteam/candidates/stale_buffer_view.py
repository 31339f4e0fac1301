"""Launches the kernel into a scratch buffer every call but returns a view of the buffer it wrote on the first call (a replay that still launches: the second call on new data catches it).

task: vector_add
expect: cheat/module_state
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


_BUFFER = torch.empty(1 << 16)
_WRITTEN = []


def entry(x, y):
    n = x.numel()
    target = torch.empty_like(x) if _WRITTEN else _BUFFER
    add_kernel[(triton.cdiv(n, 1024),)](x, y, target, n, BLOCK_SIZE=1024)
    _WRITTEN.append(n)
    return _BUFFER[:n]
