"""A genuine rewrite: 2D tiles, several rows per program, one tl.sum per tile.

task: row_sum
expect: accept
dynamic: accept
"""

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_tiles_kernel(x_ptr, y_ptr, M, N, stride_m, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    acc = tl.zeros((ROWS, BLOCK), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.load(x_ptr + rows[:, None] * stride_m + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + rows, tl.sum(acc, axis=1).to(y_ptr.dtype.element_ty), mask=rows < M)


def entry(x):
    M, N = x.shape
    y = torch.empty(M, device=x.device, dtype=x.dtype)
    rows = 4
    row_sum_tiles_kernel[(triton.cdiv(M, rows),)](x, y, M, N, x.stride(0), ROWS=rows, BLOCK=512)
    return y
