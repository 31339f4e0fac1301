"""BatchNorm training statistics: per-channel mean and biased variance of an fp16 NCHW activation, returned as a [2, C] fp32 tensor. Planted: one program per channel walks all N*H*W elements of its channel serially."""
import torch
import triton
import triton.language as tl


@triton.jit
def _bn_stats_kernel(X, OUT, N, C, HW, inv_count, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    acc_sq = tl.zeros([BLOCK], dtype=tl.float32)
    for n in range(N):
        plane = X + (n * C + c).to(tl.int64) * HW
        for hw0 in range(0, HW, BLOCK):
            offs = hw0 + tl.arange(0, BLOCK)
            x = tl.load(plane + offs, mask=offs < HW, other=0.0).to(tl.float32)
            acc += x
            acc_sq += x * x
    mean = tl.sum(acc, axis=0) * inv_count
    var = tl.sum(acc_sq, axis=0) * inv_count - mean * mean
    tl.store(OUT + c, mean)
    tl.store(OUT + C + c, tl.maximum(var, 0.0))


def entry(x):
    N, C, H, W = x.shape
    assert x.is_contiguous()
    HW = H * W
    out = torch.empty((2, C), device=x.device, dtype=torch.float32)
    BLOCK = 2048
    _bn_stats_kernel[(C,)](x, out, N, C, HW, 1.0 / (N * HW), BLOCK=BLOCK, num_warps=8)
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
