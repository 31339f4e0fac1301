"""Fixed: one program per row, so the grid covers every SM."""

import torch
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, N, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    tl.store(y_ptr + row * stride + cols, x * rstd * w, mask=mask)


def entry(x, w):
    M, N = x.shape
    y = torch.empty_like(x)
    rmsnorm_kernel[(M,)](x, w, y, N, x.stride(0), 1e-6, BLOCK=triton.next_power_of_2(N), num_warps=8)
    return y
