"""Column sums (reduce over dim 0). Planted: one program per column reads a block of rows, so the
lanes of a warp touch addresses a whole row apart."""

import torch
import triton
import triton.language as tl


@triton.jit
def col_sum_kernel(x_ptr, out_ptr, M, N, stride, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, M, BLOCK):
        rows = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + rows * stride + col, mask=rows < M, other=0.0)
    tl.store(out_ptr + col, tl.sum(acc, axis=0))


def entry(x):
    M, N = x.shape
    out = torch.empty(N, device=x.device, dtype=torch.float32)
    col_sum_kernel[(N,)](x, out, M, N, x.stride(0), BLOCK=512)
    return out


def reference(x):
    return x.sum(dim=0)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(case["M"], case["N"], generator=g).to(device),)


CASES = [{"M": 8192, "N": 8192}, {"M": 65536, "N": 1024}, {"M": 4096, "N": 4096}, {"M": 3001, "N": 7777},
         {"M": 16384, "N": 2048}]
SMALL_CASES = [{"M": 37, "N": 5}, {"M": 64, "N": 16}]
TOLERANCES = {"float32": (1e-3, 1e-4)}


def bytes_moved(case):
    return 4 * (case["M"] + 1) * case["N"]
