"""Inclusive prefix sum along rows. Planted: a sequential scalar loop carries the running sum."""

import torch
import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(x_ptr, y_ptr, N, stride):
    row = tl.program_id(0)
    acc = 0.0
    for j in range(0, N):
        acc += tl.load(x_ptr + row * stride + j)
        tl.store(y_ptr + row * stride + j, acc)


def entry(x):
    M, N = x.shape
    y = torch.empty_like(x)
    cumsum_kernel[(M,)](x, y, N, x.stride(0))
    return y


def reference(x):
    return torch.cumsum(x, dim=1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(case["M"], case["N"], generator=g).to(device),)


CASES = [{"M": 16384, "N": 1024}, {"M": 4096, "N": 4096}, {"M": 65536, "N": 256}, {"M": 8191, "N": 1000},
         {"M": 32768, "N": 512}]
SMALL_CASES = [{"M": 5, "N": 37}, {"M": 16, "N": 64}]
TOLERANCES = {"float32": (1e-3, 1e-4)}


def bytes_moved(case):
    return 8 * case["M"] * case["N"]
