import torch, triton, triton.language as tl

NUM_BINS = 128
RANGE_LO = -8.0
RANGE_HI = 8.0


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, lo, inv_width,
                     NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    # bins are uniform over [lo, hi); values outside the range land in the end bins
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.floor((x - lo) * inv_width).to(tl.int32)
    b = tl.minimum(tl.maximum(b, 0), NUM_BINS - 1)
    tl.atomic_add(hist_ptr + b, 1, mask=mask)


def entry(x):
    xf = x.reshape(-1)
    n = xf.numel()
    hist = torch.zeros((NUM_BINS,), dtype=torch.int32, device=x.device)
    inv_width = NUM_BINS / (RANGE_HI - RANGE_LO)
    BLOCK = 4096
    histogram_kernel[(triton.cdiv(n, BLOCK),)](xf, hist, n, RANGE_LO, inv_width,
                                               NUM_BINS=NUM_BINS, BLOCK=BLOCK, num_warps=8)
    return hist


def reference(x):
    inv_width = NUM_BINS / (RANGE_HI - RANGE_LO)
    b = torch.floor((x.reshape(-1).float() - RANGE_LO) * inv_width).clamp(0, NUM_BINS - 1).long()
    return torch.bincount(b, minlength=NUM_BINS).to(torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(case["n"], generator=g) * 1.5).to(torch.bfloat16)
    return (x.to(device),)


CASES = [
    {"n": 64 * 1024 * 1024},
    {"n": 100_000_007},
    {"n": 50_331_648},
    {"n": 3 * (1 << 25)},
    {"n": 80_000_001},
    {"n": 33_554_431},
]
SMALL_CASES = [{"n": 5000}, {"n": 4096}]
TOLERANCES = {"int32": (0, 0)}


def bytes_moved(case):
    return case["n"] * 2 + NUM_BINS * 4


def flops(case):
    return 3 * case["n"]
