import torch, triton, triton.language as tl


@triton.jit
def ln_cf_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C, HW, eps,
                 BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    # LayerNorm over the channel dim of a [B, C, H, W] tensor, BLOCK_P pixels per program
    pid_p = tl.program_id(0)
    bi = tl.program_id(1)
    offs_p = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    offs_c = tl.arange(0, BLOCK_C)
    mask_c = offs_c < C
    mask = mask_c[:, None] & (offs_p < HW)[None, :]
    ptrs = bi * C * HW + offs_c[:, None] * HW + offs_p[None, :]
    x = tl.load(x_ptr + ptrs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / C
    xc = tl.where(mask, x - mean[None, :], 0.0)
    var = tl.sum(xc * xc, axis=0) / C
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + offs_c, mask=mask_c, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs_c, mask=mask_c, other=0.0).to(tl.float32)
    y = xc * rstd[None, :] * w[:, None] + b[:, None]
    tl.store(y_ptr + ptrs, y.to(y_ptr.dtype.element_ty), mask=mask)


def entry(x, weight, bias):
    B, C, H, W = x.shape
    HW = H * W
    y = torch.empty_like(x)
    BLOCK_C = triton.next_power_of_2(C)
    BLOCK_P = 16
    grid = (triton.cdiv(HW, BLOCK_P), B)
    ln_cf_kernel[grid](x, weight, bias, y, C, HW, 1e-6,
                       BLOCK_C=BLOCK_C, BLOCK_P=BLOCK_P, num_warps=4)
    return y


def reference(x, weight, bias):
    xf = x.float()
    u = xf.mean(1, keepdim=True)
    s = (xf - u).pow(2).mean(1, keepdim=True)
    xn = (xf - u) / torch.sqrt(s + 1e-6)
    y = weight.float()[None, :, None, None] * xn + bias.float()[None, :, None, None]
    return y.to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    B, C, H, W = case["B"], case["C"], case["H"], case["W"]
    x = torch.randn(B, C, H, W, generator=g).to(torch.bfloat16)
    weight = (1.0 + 0.1 * torch.randn(C, generator=g)).to(torch.bfloat16)
    bias = (0.1 * torch.randn(C, generator=g)).to(torch.bfloat16)
    return x.to(device), weight.to(device), bias.to(device)


CASES = [
    {"B": 32, "C": 96, "H": 56, "W": 56},
    {"B": 64, "C": 192, "H": 28, "W": 28},
    {"B": 16, "C": 128, "H": 96, "W": 96},
    {"B": 8, "C": 320, "H": 64, "W": 64},
    {"B": 48, "C": 256, "H": 40, "W": 40},
]
SMALL_CASES = [{"B": 2, "C": 24, "H": 4, "W": 8}, {"B": 1, "C": 40, "H": 6, "W": 6}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    n = case["B"] * case["C"] * case["H"] * case["W"]
    return 2 * n * 2 + 2 * case["C"] * 2


def flops(case):
    return 8 * case["B"] * case["C"] * case["H"] * case["W"]
