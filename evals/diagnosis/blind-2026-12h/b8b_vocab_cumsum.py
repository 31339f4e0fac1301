import torch, triton, triton.language as tl

# Inclusive prefix sum along the vocabulary axis of a [B, V] float32 matrix
# (e.g. sorted token probabilities for top-p sampling), processed in chunks of
# each row.


@triton.jit
def _chunk_scan_kernel(x_ptr, out_ptr, carry_ptr, ticket_ptr, V, n_chunks,
                       BLOCK: tl.constexpr):
    # tiles are handed out in start order so a chunk's predecessor is always running
    tile = tl.atomic_add(ticket_ptr, 1)
    row = tile // n_chunks
    chunk = tile % n_chunks
    cols = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = cols < V
    base = row.to(tl.int64) * V
    x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
    local = tl.cumsum(x, axis=0)
    total = tl.sum(x, axis=0)
    slot = row * n_chunks + chunk
    prefix = total * 0.0
    if chunk > 0:
        # carry slots hold NaN until the previous chunk publishes its running total
        prefix = tl.load(carry_ptr + slot - 1, volatile=True)
        while prefix != prefix:
            prefix = tl.load(carry_ptr + slot - 1, volatile=True)
    tl.store(carry_ptr + slot, prefix + total)
    tl.store(out_ptr + base + cols, local + prefix, mask=mask)


def entry(x):
    B, V = x.shape
    BLOCK = 1024
    n_chunks = triton.cdiv(V, BLOCK)
    out = torch.empty_like(x)
    carry = torch.full((B * n_chunks,), float("nan"), device=x.device, dtype=torch.float32)
    ticket = torch.zeros(1, device=x.device, dtype=torch.int32)
    _chunk_scan_kernel[(B * n_chunks,)](x, out, carry, ticket, V, n_chunks,
                                        BLOCK=BLOCK, num_warps=4)
    return out


def reference(x):
    return torch.cumsum(x.double(), dim=1).float()


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(case["B"], case["V"], generator=g, dtype=torch.float32)
    return (x.to(device),)


CASES = [
    {"B": 64, "V": 128256},
    {"B": 64, "V": 152064},
    {"B": 32, "V": 256000},
    {"B": 256, "V": 32000},
    {"B": 96, "V": 100000},
    {"B": 192, "V": 50304},
]
SMALL_CASES = [{"B": 3, "V": 5000}, {"B": 2, "V": 3001}]
TOLERANCES = {"float32": (2e-3, 1e-4)}


def bytes_moved(case):
    return 2 * case["B"] * case["V"] * 4


def flops(case):
    return case["B"] * case["V"]
