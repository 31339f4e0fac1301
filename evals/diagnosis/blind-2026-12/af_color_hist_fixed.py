"""Joint 4x4x4 RGB colour histogram (64 bins) per image of a uint8 NCHW batch, e.g. a cheap colour descriptor for de-duplication. Planted: one global atomic increment per pixel into the image's 64 bins."""
import torch
import triton
import triton.language as tl


@triton.jit
def _color_hist_kernel(IMG, HIST, HW, CHUNK, BLOCK: tl.constexpr, NUM_BINS: tl.constexpr):
    # each program counts CHUNK pixels of one image into a private histogram
    # (tl.histogram: warp ballots + shared memory) and merges it with one
    # atomic per bin.
    pid = tl.program_id(0)
    img = tl.program_id(1)
    base = IMG + img.to(tl.int64) * 3 * HW
    start = pid * CHUNK
    end = tl.minimum(start + CHUNK, HW)
    h = tl.zeros([NUM_BINS], dtype=tl.int32)
    for off in range(start, end, BLOCK):
        offs = off + tl.arange(0, BLOCK)
        mask = offs < HW
        r = tl.load(base + offs, mask=mask, other=0).to(tl.int32)
        g = tl.load(base + HW + offs, mask=mask, other=0).to(tl.int32)
        b = tl.load(base + 2 * HW + offs, mask=mask, other=0).to(tl.int32)
        bins = ((r >> 6) << 4) | ((g >> 6) << 2) | (b >> 6)
        h += tl.histogram(bins, NUM_BINS, mask=mask)
    tl.atomic_add(HIST + img * NUM_BINS + tl.arange(0, NUM_BINS), h)


def entry(images):
    B, C, H, W = images.shape
    assert C == 3 and images.dtype == torch.uint8 and images.is_contiguous()
    HW = H * W
    hist = torch.zeros((B, 64), device=images.device, dtype=torch.int32)
    BLOCK = 4096
    CHUNK = 16 * BLOCK
    grid = (triton.cdiv(HW, CHUNK), B)
    _color_hist_kernel[grid](images, hist, HW, CHUNK, BLOCK=BLOCK, NUM_BINS=64, num_warps=8)
    return hist


def reference(images):
    B = images.shape[0]
    x = images.long() >> 6
    bins = (x[:, 0] * 16 + x[:, 1] * 4 + x[:, 2]).reshape(B, -1)
    bins = bins + 64 * torch.arange(B, device=images.device)[:, None]
    counts = torch.bincount(bins.reshape(-1), minlength=B * 64)
    return counts.reshape(B, 64).to(torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, H, W = case["B"], case["H"], case["W"]
    # photo-like: per-image colour cast plus noise, clipped to [0, 255]
    cast = torch.rand(B, 3, 1, 1, generator=g) * 180.0 + 30.0
    noise = torch.randn(B, 3, H, W, generator=g) * 45.0
    img = (cast + noise).round().clamp_(0, 255).to(torch.uint8)
    return (img.to(device),)


CASES = [
    {"B": 64, "H": 1024, "W": 1024},
    {"B": 32, "H": 1080, "W": 1920},
    {"B": 256, "H": 512, "W": 512},
    {"B": 16, "H": 2047, "W": 3001},
]

SMALL_CASES = [
    {"B": 2, "H": 37, "W": 53},
    {"B": 3, "H": 64, "W": 128},
]

TOLERANCES = {"int32": (0, 0)}


def bytes_moved(case):
    return case["B"] * 3 * case["H"] * case["W"] + case["B"] * 64 * 4

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
