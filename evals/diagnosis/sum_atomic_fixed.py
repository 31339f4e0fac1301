"""Fixed: each program accumulates in registers and issues one atomic at the end."""

import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BLOCKS_PER_PROGRAM: tl.constexpr):
    base = tl.program_id(0) * BLOCK * BLOCKS_PER_PROGRAM
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(0, BLOCKS_PER_PROGRAM):
        offs = base + i * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(acc, axis=0))


def entry(x):
    n = x.numel()
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    sum_kernel[(triton.cdiv(n, 1024 * 16),)](x, out, n, BLOCK=1024, BLOCKS_PER_PROGRAM=16)
    return out
