import torch, triton, triton.language as tl


# Inclusive prefix sum of int32 segment lengths (CSR row pointers / packing offsets).
@triton.jit
def _tile_sum_kernel(x_ptr, sums_ptr, n, BLOCK: tl.constexpr):
    tile = tl.program_id(0)
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(sums_ptr + tile, tl.sum(x, axis=0))


@triton.jit
def _tile_offsets_kernel(sums_ptr, num_tiles, BLOCK_T: tl.constexpr):
    # exclusive scan of the per-tile totals, in place
    carry = tl.load(sums_ptr) * 0
    for t0 in range(0, num_tiles, BLOCK_T):
        offs = t0 + tl.arange(0, BLOCK_T)
        m = offs < num_tiles
        s = tl.load(sums_ptr + offs, mask=m, other=0)
        inc = tl.cumsum(s, axis=0)
        tl.store(sums_ptr + offs, inc - s + carry, mask=m)
        carry += tl.sum(s, axis=0)


@triton.jit
def _cumsum_kernel(x_ptr, out_ptr, offsets_ptr, n, BLOCK: tl.constexpr):
    tile = tl.program_id(0)
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    local = tl.cumsum(x, axis=0)
    prefix = tl.load(offsets_ptr + tile)
    tl.store(out_ptr + offs, local + prefix, mask=mask)


def entry(lengths):
    n = lengths.numel()
    out = torch.empty_like(lengths)
    BLOCK = 4096
    num_tiles = triton.cdiv(n, BLOCK)
    tile_offsets = torch.empty(num_tiles, device=lengths.device, dtype=torch.int32)
    _tile_sum_kernel[(num_tiles,)](lengths, tile_offsets, n, BLOCK=BLOCK, num_warps=8)
    _tile_offsets_kernel[(1,)](tile_offsets, num_tiles, BLOCK_T=1024, num_warps=4)
    _cumsum_kernel[(num_tiles,)](lengths, out, tile_offsets, n, BLOCK=BLOCK, num_warps=8)
    return out


def reference(lengths):
    return torch.cumsum(lengths, 0, dtype=torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    lengths = torch.randint(1, 17, (case["n"],), generator=g, dtype=torch.int32)
    return (lengths.to(device),)


CASES = [
    {"n": 1 << 24},
    {"n": 10_000_000},
    {"n": 1 << 25},
    {"n": 8_000_011},
    {"n": 30_000_000},
]
SMALL_CASES = [{"n": 5000}, {"n": 12289}]


def bytes_moved(case):
    return 8 * case["n"]


def flops(case):
    return case["n"]
