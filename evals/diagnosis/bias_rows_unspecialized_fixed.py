"""Fixed: let the JIT specialize the stride and pointers (divisible by 16 -> 128-bit accesses)."""

import torch
import triton
import triton.language as tl


@triton.jit
def bias_rows_kernel(x_ptr, b_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * stride + cols, x + b, mask=mask)


def entry(x, b):
    rows, cols = x.shape
    out = torch.empty_like(x)
    bias_rows_kernel[(rows, triton.cdiv(cols, 1024))](x, b, out, cols, x.stride(0), BLOCK=1024)
    return out
