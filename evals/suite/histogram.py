"""Histogram accumulation, out = counts + bincount(x): int32 values in [0, bins) (normally distributed,
so the middle bins are hot) added into a running int32 histogram. Family: histogram.

First pass: copy the running counts into the output, then one program per 1024 values, each adding 1
to its bin with a global atomic."""

import torch
import triton
import triton.language as tl

FAMILY = "histogram"


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    bins = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + bins, tl.full((BLOCK,), 1, dtype=tl.int32), mask=mask)


def entry(x, counts):
    hist = counts.clone()
    n = x.numel()
    histogram_kernel[(triton.cdiv(n, 1024),)](x, hist, n, BLOCK=1024)
    return hist


def reference(x, counts):
    return counts + torch.bincount(x.long(), minlength=counts.numel()).to(torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    bins = case["bins"]
    x = (torch.randn(case["n"], generator=g) * bins / 8 + bins / 2).floor().clamp(0, bins - 1).to(torch.int32)
    counts = (torch.randn(bins, generator=g).abs() * 100).to(torch.int32)
    return x.to(device), counts.to(device)


CASES = [
    {"n": 1 << 24, "bins": 256},
    {"n": 10_000_019, "bins": 1000},
    {"n": 1 << 26, "bins": 65_536},
    {"n": 3_000_017, "bins": 4099},
    {"n": 33_554_467, "bins": 100_003},
]
HELD_OUT = [{"n": 5_000_000, "bins": 512}, {"n": 12_345_679, "bins": 32_000}]
SMALL_CASES = [{"n": 3001, "bins": 256}, {"n": 777, "bins": 13}, {"n": 2048, "bins": 1000}]


def flops(case):
    return case["n"]


def bytes_moved(case):
    return 4 * case["n"] + 2 * 4 * case["bins"]
