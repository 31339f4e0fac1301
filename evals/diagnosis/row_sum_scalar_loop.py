"""Row sums. Planted: the row is summed one scalar element per loop iteration."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride):
    row = tl.program_id(0)
    acc = 0.0
    for j in range(0, N):
        acc += tl.load(x_ptr + row * stride + j)
    tl.store(out_ptr + row, acc)


def entry(x):
    M, N = x.shape
    out = torch.empty(M, device=x.device, dtype=torch.float32)
    row_sum_kernel[(M,)](x, out, N, x.stride(0))
    return out


def reference(x):
    return x.sum(dim=1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(case["M"], case["N"], generator=g).to(device),)


CASES = [{"M": 16384, "N": 1024}, {"M": 4096, "N": 4096}, {"M": 65536, "N": 256}, {"M": 8191, "N": 999},
         {"M": 2048, "N": 8192}]
SMALL_CASES = [{"M": 5, "N": 37}, {"M": 16, "N": 64}]
TOLERANCES = {"float32": (1e-3, 1e-4)}


def bytes_moved(case):
    return 4 * case["M"] * (case["N"] + 1)
