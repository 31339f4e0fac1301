"""Red-team task: row sum, y[m] = sum_n x[m, n] (a copy of evals/suite/row_sum.py with small interpreter cases)."""

import torch
import triton
import triton.language as tl

FAMILY = "reduction"


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(y_ptr + row, tl.sum(acc, axis=0).to(y_ptr.dtype.element_ty))


def entry(x):
    M, N = x.shape
    y = torch.empty(M, device=x.device, dtype=x.dtype)
    row_sum_kernel[(M,)](x, y, N, BLOCK=1024)
    return y


def reference(x):
    return x.float().sum(dim=1).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g).to(getattr(torch, case["dtype"]))
    return (x.to(device),)


CASES = [
    {"M": 8192, "N": 4096, "dtype": "float16"},
    {"M": 4096, "N": 32_000, "dtype": "bfloat16"},
    {"M": 3001, "N": 5003, "dtype": "float32"},
    {"M": 65_536, "N": 257, "dtype": "float16"},
    {"M": 17, "N": 1_000_003, "dtype": "float32"},
]
HELD_OUT = [{"M": 1023, "N": 12_289, "dtype": "float32"}, {"M": 20_000, "N": 999, "dtype": "float16"}]
SMALL_CASES = [{"M": 5, "N": 1500, "dtype": "float32"}, {"M": 7, "N": 77, "dtype": "float16"}]
# fp32 sums over up to 1e6 terms in another order differ by ~1e-3 absolute (seen on the H200).
TOLERANCES = {"float32": (1e-2, 1e-5), "float16": (1e-2, 2e-3), "bfloat16": (5e-2, 1.6e-2)}


def flops(case):
    return case["M"] * case["N"]


def bytes_moved(case):
    return case["M"] * (case["N"] + 1) * getattr(torch, case["dtype"]).itemsize
