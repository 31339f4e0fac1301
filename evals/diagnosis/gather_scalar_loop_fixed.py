"""Fixed: each program loads its row's indices as one block and gathers them with one vector load."""

import torch
import triton
import triton.language as tl


@triton.jit
def gather_kernel(x_ptr, idx_ptr, out_ptr, N, K, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, K, BLOCK):
        j = start + tl.arange(0, BLOCK)
        mask = j < K
        col = tl.load(idx_ptr + row * K + j, mask=mask, other=0)
        tl.store(out_ptr + row * K + j, tl.load(x_ptr + row * N + col, mask=mask), mask=mask)


def entry(x, idx):
    M, N = x.shape
    K = idx.shape[1]
    out = torch.empty((M, K), device=x.device, dtype=x.dtype)
    gather_kernel[(M,)](x, idx, out, N, K, BLOCK=1024)
    return out
