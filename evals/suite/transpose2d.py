"""Out-of-place 2-D transpose, y = x.T made contiguous. Family: transpose.

First pass: one 64 x 64 tile per program, loaded row-major and stored to the transposed addresses
(the compiler picks the layouts)."""

import torch
import triton
import triton.language as tl

FAMILY = "transpose"


@triton.jit
def transpose2d_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    tl.store(y_ptr + rn[None, :] * M + rm[:, None], x, mask=mask)


def entry(x):
    M, N = x.shape
    y = torch.empty((N, M), device=x.device, dtype=x.dtype)
    transpose2d_kernel[(triton.cdiv(M, 64), triton.cdiv(N, 64))](x, y, M, N, BLOCK_M=64, BLOCK_N=64)
    return y


def reference(x):
    return x.t().contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g).to(getattr(torch, case["dtype"]))
    return (x.to(device),)


CASES = [
    {"M": 8192, "N": 8192, "dtype": "float16"},
    {"M": 4096, "N": 16_384, "dtype": "float32"},
    {"M": 3001, "N": 5003, "dtype": "bfloat16"},
    {"M": 100_003, "N": 96, "dtype": "float16"},
    {"M": 127, "N": 200_001, "dtype": "float32"},
]
HELD_OUT = [{"M": 2049, "N": 6000, "dtype": "float32"}, {"M": 10_000, "N": 1001, "dtype": "float16"}]
SMALL_CASES = [{"M": 37, "N": 70, "dtype": "float32"}, {"M": 65, "N": 3, "dtype": "float16"},
               {"M": 5, "N": 129, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (0.0, 0.0), "float16": (0.0, 0.0), "bfloat16": (0.0, 0.0)}


def flops(case):
    return case["M"] * case["N"]


def bytes_moved(case):
    return 2 * case["M"] * case["N"] * getattr(torch, case["dtype"]).itemsize
