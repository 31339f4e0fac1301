"""Inclusive prefix sum of int32 per-item counts (e.g. output offsets for stream compaction / ragged batching). Planted: single-pass chained scan: each block spins until its predecessor publishes its running total, so the blocks finish one after another."""
import torch
import triton
import triton.language as tl


@triton.jit
def _chained_scan_kernel(X, Y, STATUS, TICKET, n, BLOCK: tl.constexpr):
    # blocks take ids in launch order from a ticket counter, so the
    # predecessor of every block is already running (no deadlock)
    bid = tl.atomic_add(TICKET, 1)
    offs = bid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0)
    local = tl.cumsum(x, axis=0)
    total = tl.sum(x, axis=0)

    # STATUS[i] = (1 << 32) | inclusive prefix of blocks 0..i, 0 while not ready
    s = (bid == 0).to(tl.int64) << 32
    while s == 0:
        s = tl.atomic_add(STATUS + bid - 1, 0)
    prefix = s.to(tl.int32)  # low 32 bits
    tl.atomic_xchg(STATUS + bid, (prefix + total).to(tl.int64) | (1 << 32))

    tl.store(Y + offs, local + prefix, mask=mask)


def entry(counts):
    n = counts.numel()
    assert counts.dtype == torch.int32 and counts.is_contiguous()
    out = torch.empty_like(counts)
    BLOCK = 4096
    nblocks = triton.cdiv(n, BLOCK)
    status = torch.zeros(nblocks, device=counts.device, dtype=torch.int64)
    ticket = torch.zeros(1, device=counts.device, dtype=torch.int32)
    _chained_scan_kernel[(nblocks,)](counts, out, status, ticket, n, BLOCK=BLOCK, num_warps=8)
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
