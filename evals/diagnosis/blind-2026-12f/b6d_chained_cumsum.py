import torch
import triton
import triton.language as tl


@triton.jit
def _chained_scan_kernel(x_ptr, y_ptr, carry_ptr, ticket_ptr, n, BLOCK: tl.constexpr):
    # Inclusive prefix sum. Tiles are handed out in launch order through a ticket
    # counter; tile t waits for the running total published by tile t-1 in
    # carry[t], then publishes its own running total in carry[t + 1].
    tile = tl.atomic_add(ticket_ptr, 1)
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    local = tl.cumsum(x, axis=0)
    total = tl.sum(x, axis=0)
    prefix = tl.atomic_add(carry_ptr + tile, 0)
    while prefix < 0:
        prefix = tl.atomic_add(carry_ptr + tile, 0)
    tl.atomic_xchg(carry_ptr + tile + 1, prefix + total)
    tl.store(y_ptr + offs, local + prefix, mask=mask)


def entry(x):
    n = x.numel()
    BLOCK = 4096
    num_tiles = triton.cdiv(n, BLOCK)
    y = torch.empty_like(x)
    carry = torch.full((num_tiles + 1,), -1, dtype=torch.int32, device=x.device)
    carry[0] = 0
    ticket = torch.zeros(1, dtype=torch.int32, device=x.device)
    _chained_scan_kernel[(num_tiles,)](x, y, carry, ticket, n, BLOCK=BLOCK, num_warps=8)
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
