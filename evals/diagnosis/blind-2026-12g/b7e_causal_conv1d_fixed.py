import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def causal_conv1d_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    L, D,
    stride_xb, stride_xl, stride_xd,
    stride_yb, stride_yl, stride_yd,
    KW: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # depthwise causal conv + SiLU:  y[b, l, d] = silu(bias[d] + sum_k w[d, k] * x[b, l - KW + 1 + k, d])
    b = tl.program_id(0)
    pid_l = tl.program_id(1)
    pid_d = tl.program_id(2)
    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    mask_l = offs_l < L
    mask_d = offs_d < D
    x_base = x_ptr + b * stride_xb + offs_d[None, :] * stride_xd
    bias = tl.load(b_ptr + offs_d, mask=mask_d, other=0.0).to(tl.float32)
    acc = tl.zeros([BLOCK_L, BLOCK_D], dtype=tl.float32) + bias[None, :]
    for k in tl.static_range(KW):
        src_l = offs_l + (k - KW + 1)
        m = (mask_l & (src_l >= 0))[:, None] & mask_d[None, :]
        xv = tl.load(x_base + src_l[:, None] * stride_xl, mask=m, other=0.0)
        wk = tl.load(w_ptr + offs_d * KW + k, mask=mask_d, other=0.0).to(tl.float32)
        acc += xv.to(tl.float32) * wk[None, :]
    y = acc * tl.sigmoid(acc)
    out_ptrs = y_ptr + b * stride_yb + offs_l[:, None] * stride_yl + offs_d[None, :] * stride_yd
    tl.store(out_ptrs, y.to(y_ptr.dtype.element_ty), mask=mask_l[:, None] & mask_d[None, :])


def entry(x, weight, bias):
    # x: [B, L, D] activations, weight: [D, KW], bias: [D]
    B, L, D = x.shape
    KW = weight.shape[1]
    y = torch.empty_like(x)
    BLOCK_L = 16
    BLOCK_D = 64
    grid = (B, triton.cdiv(L, BLOCK_L), triton.cdiv(D, BLOCK_D))
    causal_conv1d_kernel[grid](
        x, weight, bias, y, L, D,
        x.stride(0), x.stride(1), x.stride(2),
        y.stride(0), y.stride(1), y.stride(2),
        KW=KW, BLOCK_L=BLOCK_L, BLOCK_D=BLOCK_D,
    )
    return y


def reference(x, weight, bias):
    B, L, D = x.shape
    KW = weight.shape[1]
    xt = x.float().transpose(1, 2)
    out = F.conv1d(xt, weight.float().unsqueeze(1), bias.float(), padding=KW - 1, groups=D)[..., :L]
    return F.silu(out).transpose(1, 2).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, L, D, KW = case["B"], case["L"], case["D"], case["KW"]
    x = torch.randn(B, L, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    weight = (torch.randn(D, KW, generator=g, dtype=torch.float32) * 0.5)
    bias = torch.randn(D, generator=g, dtype=torch.float32) * 0.1
    return (x.to(device), weight.to(device), bias.to(device))


CASES = [
    {"B": 8, "L": 4096, "D": 2048, "KW": 4},
    {"B": 4, "L": 8192, "D": 1536, "KW": 4},
    {"B": 2, "L": 3000, "D": 5120, "KW": 4},
    {"B": 16, "L": 1000, "D": 2560, "KW": 4},
    {"B": 1, "L": 16384, "D": 4096, "KW": 4},
    {"B": 6, "L": 2500, "D": 3072, "KW": 3},
]
SMALL_CASES = [
    {"B": 2, "L": 37, "D": 48, "KW": 4},
    {"B": 1, "L": 20, "D": 80, "KW": 3},
]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    B, L, D, KW = case["B"], case["L"], case["D"], case["KW"]
    return 2 * B * L * D * 2 + D * KW * 4 + D * 4


def flops(case):
    B, L, D, KW = case["B"], case["L"], case["D"], case["KW"]
    return B * L * D * (2 * KW + 4)
