"""Inclusive prefix sum of int32 per-item counts (e.g. output offsets for stream compaction / ragged batching). Planted: single-pass chained scan: each block spins until its predecessor publishes its running total, so the blocks finish one after another."""
import torch
import triton
import triton.language as tl


@triton.jit
def _block_sums_kernel(X, SUMS, n, BLOCK: tl.constexpr):
    bid = tl.program_id(0)
    offs = bid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0)
    tl.store(SUMS + bid, tl.sum(x, axis=0))


@triton.jit
def _scan_sums_kernel(SUMS, nblocks, BLOCK: tl.constexpr):
    # exclusive scan of the per-block totals, in place (single program)
    carry = tl.sum(tl.zeros([BLOCK], dtype=tl.int32), axis=0)
    for start in range(0, nblocks, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < nblocks
        v = tl.load(SUMS + offs, mask=mask, other=0)
        incl = tl.cumsum(v, axis=0)
        tl.store(SUMS + offs, incl - v + carry, mask=mask)
        carry += tl.sum(v, axis=0)


@triton.jit
def _scan_add_kernel(X, Y, OFFSETS, n, BLOCK: tl.constexpr):
    bid = tl.program_id(0)
    offs = bid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0)
    prefix = tl.load(OFFSETS + bid)
    tl.store(Y + offs, tl.cumsum(x, axis=0) + prefix, mask=mask)


def entry(counts):
    # reduce-then-scan: block totals, scan of the totals, then a local scan
    # plus block offset; every phase runs fully parallel
    n = counts.numel()
    assert counts.dtype == torch.int32 and counts.is_contiguous()
    out = torch.empty_like(counts)
    BLOCK = 4096
    nblocks = triton.cdiv(n, BLOCK)
    sums = torch.empty(nblocks, device=counts.device, dtype=torch.int32)
    _block_sums_kernel[(nblocks,)](counts, sums, n, BLOCK=BLOCK, num_warps=8)
    _scan_sums_kernel[(1,)](sums, nblocks, BLOCK=8192, num_warps=16)
    _scan_add_kernel[(nblocks,)](counts, out, sums, n, BLOCK=BLOCK, num_warps=8)
    return out


def reference(counts):
    return torch.cumsum(counts, dim=0, dtype=torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    n = case["n"]
    counts = torch.randint(0, case["max_count"] + 1, (n,), generator=g, dtype=torch.int32)
    return (counts.to(device),)


CASES = [
    {"n": 64 * 1024 * 1024, "max_count": 8},
    {"n": 100_000_007, "max_count": 4},
    {"n": 33_554_431, "max_count": 16},
    {"n": 150_000_000, "max_count": 2},
]

SMALL_CASES = [
    {"n": 10_007, "max_count": 8},
    {"n": 4096 * 3, "max_count": 100},
]

TOLERANCES = {"int32": (0, 0)}


def bytes_moved(case):
    return case["n"] * 4 * 2

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
