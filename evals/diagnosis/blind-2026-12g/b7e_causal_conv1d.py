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
    KW: tl.constexpr, BLOCK_L: tl.constexpr,
):
    # depthwise causal conv + SiLU:  y[b, l, d] = silu(bias[d] + sum_k w[d, k] * x[b, l - KW + 1 + k, d])
    pid_bd = tl.program_id(0)
    pid_l = tl.program_id(1)
    b = pid_bd // D
    d = pid_bd % D
    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    mask_l = offs_l < L
    x_base = x_ptr + b * stride_xb + d * stride_xd
    acc = tl.zeros([BLOCK_L], dtype=tl.float32) + tl.load(b_ptr + d).to(tl.float32)
    for k in tl.static_range(KW):
        src_l = offs_l + (k - KW + 1)
        xv = tl.load(x_base + src_l * stride_xl, mask=mask_l & (src_l >= 0), other=0.0)
        wk = tl.load(w_ptr + d * KW + k).to(tl.float32)
        acc += xv.to(tl.float32) * wk
    y = acc * tl.sigmoid(acc)
    tl.store(y_ptr + b * stride_yb + d * stride_yd + offs_l * stride_yl,
             y.to(y_ptr.dtype.element_ty), mask=mask_l)


def entry(x, weight, bias):
    # x: [B, L, D] activations, weight: [D, KW], bias: [D]
    B, L, D = x.shape
    KW = weight.shape[1]
    y = torch.empty_like(x)
    BLOCK_L = 1024
    grid = (B * D, triton.cdiv(L, BLOCK_L))
    causal_conv1d_kernel[grid](
        x, weight, bias, y, L, D,
        x.stride(0), x.stride(1), x.stride(2),
        y.stride(0), y.stride(1), y.stride(2),
        KW=KW, BLOCK_L=BLOCK_L,
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
