"""A matmul with a ones vector does the reduction.

task: row_sum
expect: cheat/tensor_op
dynamic: cheat/no_triton_launch
"""

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(y_ptr + row, tl.sum(acc, axis=0).to(y_ptr.dtype.element_ty))


def entry(x):
    ones = torch.ones(x.shape[1], 1, dtype=torch.float32, device=x.device)
    return (x.float() @ ones).flatten().to(x.dtype)
