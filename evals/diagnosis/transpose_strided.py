"""Transpose out = x.T. Planted: each program walks one output row reading x down a column with the
runtime row stride, so neighbouring lanes read addresses a whole row apart (uncoalesced)."""

import torch
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, stride_x, stride_out, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    rows = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = rows < M
    v = tl.load(x_ptr + rows * stride_x + col, mask=mask)
    tl.store(out_ptr + col * stride_out + rows, v, mask=mask)


def entry(x):
    M, N = x.shape
    out = torch.empty((N, M), device=x.device, dtype=x.dtype)
    transpose_kernel[(N, triton.cdiv(M, 1024))](x, out, M, N, x.stride(0), out.stride(0), BLOCK=1024)
    return out


def reference(x):
    return x.t().contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(case["M"], case["N"], generator=g).to(device),)


CASES = [{"M": 8192, "N": 8192}, {"M": 4096, "N": 16384}, {"M": 16384, "N": 2048}, {"M": 3000, "N": 5000},
         {"M": 12288, "N": 4096}]
SMALL_CASES = [{"M": 33, "N": 17}, {"M": 64, "N": 128}]


def bytes_moved(case):
    return 8 * case["M"] * case["N"]
