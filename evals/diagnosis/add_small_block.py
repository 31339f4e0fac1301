"""Elementwise add, one program per 64 elements. Planted: the hard-coded block is too small."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def entry(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK=64)
    return out


def reference(x, y):
    return x + y


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(case["n"], generator=g).to(device) for _ in range(2))


CASES = [{"n": 1 << 24}, {"n": 50_000_017}, {"n": 1 << 26}, {"n": 12_345_678}, {"n": 1 << 22}]
SMALL_CASES = [{"n": 1000}, {"n": 4097}]


def bytes_moved(case):
    return 12 * case["n"]
