"""Fixed: 16 warps share the row, so each thread holds few values."""

import torch
import triton
import triton.language as tl



@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, N, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * stride + cols, d * rstd * w + b, mask=mask)


def entry(x, w, b):
    M, N = x.shape
    y = torch.empty_like(x)
    layernorm_kernel[(M,)](x, w, b, y, N, x.stride(0), 1e-5, BLOCK=triton.next_power_of_2(N), num_warps=16)
    return y
