import torch
import triton
import triton.language as tl


@triton.jit
def _tile_sum_kernel(x_ptr, sums_ptr, n, BLOCK: tl.constexpr):
    tile = tl.program_id(0)
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(sums_ptr + tile, tl.sum(x, axis=0))


@triton.jit
def _tile_offsets_kernel(sums_ptr, offsets_ptr, num_tiles, BLOCK: tl.constexpr):
    # Exclusive prefix over the per-tile sums (single program).
    running = tl.zeros((), dtype=tl.int32)
    for start in range(0, num_tiles, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        s = tl.load(sums_ptr + idx, mask=idx < num_tiles, other=0)
        incl = tl.cumsum(s, axis=0)
        tl.store(offsets_ptr + idx, incl - s + running, mask=idx < num_tiles)
        running += tl.sum(s, axis=0)


@triton.jit
def _tile_scan_kernel(x_ptr, y_ptr, offsets_ptr, n, BLOCK: tl.constexpr):
    tile = tl.program_id(0)
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    prefix = tl.load(offsets_ptr + tile)
    tl.store(y_ptr + offs, tl.cumsum(x, axis=0) + prefix, mask=mask)


def entry(x):
    n = x.numel()
    BLOCK = 4096
    num_tiles = triton.cdiv(n, BLOCK)
    y = torch.empty_like(x)
    sums = torch.empty(num_tiles, dtype=torch.int32, device=x.device)
    offsets = torch.empty(num_tiles, dtype=torch.int32, device=x.device)
    _tile_sum_kernel[(num_tiles,)](x, sums, n, BLOCK=BLOCK, num_warps=8)
    _tile_offsets_kernel[(1,)](sums, offsets, num_tiles, BLOCK=4096, num_warps=8)
    _tile_scan_kernel[(num_tiles,)](x, y, offsets, n, BLOCK=BLOCK, num_warps=8)
    return y


def reference(x):
    return torch.cumsum(x.long(), dim=0).to(torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randint(1, 32, (case["n"],), generator=g, dtype=torch.int32)
    return (x.to(device),)


CASES = [
    {"n": 1 << 24},
    {"n": 10_000_019},
    {"n": 1 << 25},
    {"n": 25_000_000},
    {"n": 6_000_001},
    {"n": 3 << 23},
]
SMALL_CASES = [
    {"n": 5000},
    {"n": 12289},
]
TOLERANCES = {"int32": (0, 0)}


def bytes_moved(case):
    return case["n"] * 4 * 2


def flops(case):
    return case["n"]
