import torch, triton, triton.language as tl


@triton.jit
def tile_sum_kernel(x_ptr, sums_ptr, n, BLOCK: tl.constexpr):
    tile = tl.program_id(0)
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(sums_ptr + tile, tl.sum(x, axis=0))


@triton.jit
def exclusive_scan_kernel(sums_ptr, offsets_ptr, tiles, BLOCK: tl.constexpr):
    # offsets[t] = sum_{u < t} sums[u], done by one program
    carry = tl.zeros((), dtype=tl.int32)
    for t0 in range(0, tiles, BLOCK):
        idx = t0 + tl.arange(0, BLOCK)
        m = idx < tiles
        s = tl.load(sums_ptr + idx, mask=m, other=0)
        incl = tl.cumsum(s, axis=0)
        tl.store(offsets_ptr + idx, incl - s + carry, mask=m)
        carry += tl.sum(s, axis=0)


@triton.jit
def tile_scan_kernel(x_ptr, offsets_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tile = tl.program_id(0)
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    prefix = tl.load(offsets_ptr + tile)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=0) + prefix, mask=mask)


def entry(x):
    n = x.numel()
    BLOCK = 4096
    tiles = triton.cdiv(n, BLOCK)
    out = torch.empty_like(x)
    sums = torch.empty((tiles,), dtype=x.dtype, device=x.device)
    offsets = torch.empty((tiles,), dtype=x.dtype, device=x.device)
    tile_sum_kernel[(tiles,)](x, sums, n, BLOCK=BLOCK, num_warps=8)
    exclusive_scan_kernel[(1,)](sums, offsets, tiles, BLOCK=1024, num_warps=4)
    tile_scan_kernel[(tiles,)](x, offsets, out, n, BLOCK=BLOCK, num_warps=8)
    return out


def reference(x):
    return torch.cumsum(x, dim=0).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(1, 16, (case["n"],), generator=g, dtype=torch.int32)
    return (x.to(device),)


CASES = [
    {"n": 1 << 22},
    {"n": 10_000_019},
    {"n": 1 << 24},
    {"n": 6_000_000},
    {"n": 3 << 22},
    {"n": 20_000_001},
]
SMALL_CASES = [{"n": 5000}, {"n": 12289}]
TOLERANCES = {"int32": (0, 0)}


def bytes_moved(case):
    return case["n"] * 4 * 2


def flops(case):
    return case["n"]
