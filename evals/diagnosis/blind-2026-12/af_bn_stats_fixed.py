"""BatchNorm training statistics: per-channel mean and biased variance of an fp16 NCHW activation, returned as a [2, C] fp32 tensor. Planted: one program per channel walks all N*H*W elements of its channel serially."""
import torch
import triton
import triton.language as tl


@triton.jit
def _bn_partial_kernel(X, PSUM, PSQ, N, C, HW, SPLIT, BLOCK: tl.constexpr):
    # split each channel's N*ceil(HW/BLOCK) tiles over SPLIT programs
    c = tl.program_id(0)
    s = tl.program_id(1)
    tiles_per_plane = tl.cdiv(HW, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    acc_sq = tl.zeros([BLOCK], dtype=tl.float32)
    for t in range(s, N * tiles_per_plane, SPLIT):
        n = t // tiles_per_plane
        hw0 = (t - n * tiles_per_plane) * BLOCK
        plane = X + (n * C + c).to(tl.int64) * HW
        offs = hw0 + tl.arange(0, BLOCK)
        x = tl.load(plane + offs, mask=offs < HW, other=0.0).to(tl.float32)
        acc += x
        acc_sq += x * x
    tl.store(PSUM + c * SPLIT + s, tl.sum(acc, axis=0))
    tl.store(PSQ + c * SPLIT + s, tl.sum(acc_sq, axis=0))


@triton.jit
def _bn_finalize_kernel(PSUM, PSQ, OUT, C, SPLIT, inv_count, BLOCK_S: tl.constexpr):
    c = tl.program_id(0)
    offs = tl.arange(0, BLOCK_S)
    m = offs < SPLIT
    total = tl.sum(tl.load(PSUM + c * SPLIT + offs, mask=m, other=0.0), axis=0)
    total_sq = tl.sum(tl.load(PSQ + c * SPLIT + offs, mask=m, other=0.0), axis=0)
    mean = total * inv_count
    var = total_sq * inv_count - mean * mean
    tl.store(OUT + c, mean)
    tl.store(OUT + C + c, tl.maximum(var, 0.0))


def _num_sms(device):
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4


def entry(x):
    N, C, H, W = x.shape
    assert x.is_contiguous()
    HW = H * W
    BLOCK = 2048
    tiles = N * triton.cdiv(HW, BLOCK)
    # enough programs to fill every SM several times over
    SPLIT = max(1, min(tiles, triton.cdiv(8 * _num_sms(x.device), C), 1024))
    psum = torch.empty((C, SPLIT), device=x.device, dtype=torch.float32)
    psq = torch.empty((C, SPLIT), device=x.device, dtype=torch.float32)
    _bn_partial_kernel[(C, SPLIT)](x, psum, psq, N, C, HW, SPLIT, BLOCK=BLOCK, num_warps=8)
    out = torch.empty((2, C), device=x.device, dtype=torch.float32)
    _bn_finalize_kernel[(C,)](psum, psq, out, C, SPLIT, 1.0 / (N * HW),
                              BLOCK_S=triton.next_power_of_2(SPLIT), num_warps=4)
    return out


def reference(x):
    xf = x.float()
    mean = xf.mean(dim=(0, 2, 3))
    var = xf.var(dim=(0, 2, 3), unbiased=False)
    return torch.stack([mean, var])


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, C, H, W = case["N"], case["C"], case["H"], case["W"]
    shift = torch.randn(1, C, 1, 1, generator=g) * 0.5
    scale = torch.rand(1, C, 1, 1, generator=g) * 1.5 + 0.25
    x = (torch.randn(N, C, H, W, generator=g) * scale + shift).to(torch.float16)
    return (x.to(device),)


CASES = [
    {"N": 128, "C": 64, "H": 112, "W": 112},
    {"N": 64, "C": 96, "H": 147, "W": 147},
    {"N": 256, "C": 32, "H": 96, "W": 96},
    {"N": 32, "C": 48, "H": 256, "W": 320},
]

SMALL_CASES = [
    {"N": 3, "C": 5, "H": 7, "W": 9},
    {"N": 2, "C": 4, "H": 40, "W": 60},
]

TOLERANCES = {"float32": (2e-3, 2e-3)}


def bytes_moved(case):
    return case["N"] * case["C"] * case["H"] * case["W"] * 2 + 2 * case["C"] * 4


def flops(case):
    return 3 * case["N"] * case["C"] * case["H"] * case["W"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
