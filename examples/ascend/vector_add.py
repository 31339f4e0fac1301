"""Contiguous offsets: on Ascend every load and store stays a block copy (memref.copy into UB)."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def entry(x, y):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out


def reference(x, y):
    return x + y


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(case["n"], generator=g).to(device)
    y = torch.randn(case["n"], generator=g).to(device)
    return x, y


CASES = [{"n": 1 << 20}, {"n": 1_000_003}, {"n": 4096}, {"n": 65_537}, {"n": 3 << 18}]
SMALL_CASES = [{"n": 5000}]
