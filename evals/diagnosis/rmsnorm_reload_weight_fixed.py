"""Fixed: the weight is loaded once per program, before the row loop."""

import torch
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, M, N, stride, eps, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    for r in range(0, ROWS):
        row = tl.program_id(0) * ROWS + r
        ok = row < M
        x = tl.load(x_ptr + row * stride + cols, mask=mask & ok, other=0.0).to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
        tl.store(y_ptr + row * stride + cols, x * rstd * w, mask=mask & ok)


def entry(x, w):
    M, N = x.shape
    y = torch.empty_like(x)
    rmsnorm_kernel[(triton.cdiv(M, 16),)](x, w, y, M, N, x.stride(0), 1e-6, ROWS=16, BLOCK=triton.next_power_of_2(N),
                                         num_warps=8)
    return y
