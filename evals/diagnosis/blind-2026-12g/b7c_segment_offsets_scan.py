import torch, triton, triton.language as tl


# Inclusive prefix sum of int32 segment lengths (CSR row pointers / packing offsets).
@triton.jit
def _cumsum_kernel(x_ptr, out_ptr, carry_ptr, flag_ptr, ticket_ptr, n, BLOCK: tl.constexpr):
    # tiles are taken in arrival order so that a tile's predecessor is always running
    tile = tl.atomic_add(ticket_ptr, 1)
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    local = tl.cumsum(x, axis=0)
    total = tl.sum(x, axis=0)

    prefix = total * 0
    if tile > 0:
        while tl.atomic_add(flag_ptr + tile - 1, 0) == 0:
            pass
        prefix = tl.atomic_add(carry_ptr + tile - 1, 0)
    tl.atomic_xchg(carry_ptr + tile, prefix + total)
    tl.atomic_xchg(flag_ptr + tile, 1)

    tl.store(out_ptr + offs, local + prefix, mask=mask)


def entry(lengths):
    n = lengths.numel()
    out = torch.empty_like(lengths)
    BLOCK = 4096
    num_tiles = triton.cdiv(n, BLOCK)
    carry = torch.empty(num_tiles, device=lengths.device, dtype=torch.int32)
    flags = torch.zeros(num_tiles, device=lengths.device, dtype=torch.int32)
    ticket = torch.zeros(1, device=lengths.device, dtype=torch.int32)
    _cumsum_kernel[(num_tiles,)](lengths, out, carry, flags, ticket, n, BLOCK=BLOCK, num_warps=8)
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
