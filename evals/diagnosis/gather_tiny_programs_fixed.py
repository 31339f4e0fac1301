"""Fixed: one program per output row, the whole row in one block."""

import torch
import triton
import triton.language as tl


@triton.jit
def embedding_kernel(idx_ptr, table_ptr, out_ptr, D, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < D
    row = tl.load(idx_ptr + i)
    v = tl.load(table_ptr + row * D + cols, mask=mask)
    tl.store(out_ptr + i * D + cols, v, mask=mask)


def entry(idx, table):
    D = table.shape[1]
    out = torch.empty((idx.numel(), D), device=table.device, dtype=table.dtype)
    embedding_kernel[(idx.numel(),)](idx, table, out, D, BLOCK=triton.next_power_of_2(D))
    return out
