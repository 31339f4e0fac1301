"""Histogram of fp32 values into 256 uniform bins over [-4, 4); planted: every element does a global atomic increment on its bin (heavy contention on the central bins)."""
import torch
import triton
import triton.language as tl

NBINS = 256
LO = -4.0
HI = 4.0


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, lo, scale, NB: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.floor((x - lo) * scale).to(tl.int32)
    b = tl.minimum(tl.maximum(b, 0), NB - 1)
    tl.atomic_add(hist_ptr + b, tl.full([BLOCK], 1, tl.int32), mask=mask)


def entry(x):
    n = x.numel()
    hist = torch.zeros(NBINS, device=x.device, dtype=torch.int32)
    BLOCK = 1024
    histogram_kernel[(triton.cdiv(n, BLOCK),)](x, hist, n, LO, NBINS / (HI - LO), NB=NBINS, BLOCK=BLOCK)
    return hist


def reference(x):
    b = torch.floor((x - LO) * (NBINS / (HI - LO))).to(torch.int32)
    b = b.clamp(0, NBINS - 1)
    return torch.bincount(b.to(torch.int64), minlength=NBINS).to(torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["n"], generator=g, dtype=torch.float32)
    return (x.to(device),)


CASES = [{"n": 1 << 24}, {"n": (1 << 25) + 7}, {"n": 50_000_017}, {"n": 1 << 26}, {"n": 30_000_001}]
SMALL_CASES = [{"n": 5000}, {"n": 1237}]
TOLERANCES = {"int32": (0, 0)}


def bytes_moved(case):
    return 4 * case["n"] + 4 * NBINS


def flops(case):
    return 4 * case["n"]
