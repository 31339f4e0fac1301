import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def causal_conv1d_kernel(x_ptr, w_ptr, bias_ptr, out_ptr, L, D,
                         stride_xb, stride_xl, stride_ob, stride_ol,
                         WIDTH: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr):
    # depthwise causal conv over the sequence axis followed by SiLU:
    # y[b, l, d] = silu(bias[d] + sum_j w[d, j] * x[b, l - WIDTH + 1 + j, d])
    pid_l = tl.program_id(0)
    pid_d = tl.program_id(1)
    b = tl.program_id(2)
    l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    d_mask = d < D
    x_base = x_ptr + b * stride_xb
    bias = tl.load(bias_ptr + d, mask=d_mask, other=0.0).to(tl.float32)
    acc = tl.zeros((BLOCK_L, BLOCK_D), dtype=tl.float32) + bias[None, :]
    for j in tl.static_range(WIDTH):
        src = l - (WIDTH - 1) + j
        m = ((src >= 0) & (src < L))[:, None] & d_mask[None, :]
        xv = tl.load(x_base + src[:, None] * stride_xl + d[None, :], mask=m, other=0.0)
        wj = tl.load(w_ptr + d * WIDTH + j, mask=d_mask, other=0.0).to(tl.float32)
        acc += xv.to(tl.float32) * wj[None, :]
    y = acc * tl.sigmoid(acc)
    tl.store(out_ptr + b * stride_ob + l[:, None] * stride_ol + d[None, :],
             y.to(out_ptr.dtype.element_ty), mask=(l[:, None] < L) & d_mask[None, :])


def entry(x, weight, bias):
    # x: [B, L, D] (token-major, as produced by the input projection)
    # weight: [D, WIDTH], bias: [D]
    B, L, D = x.shape
    width = weight.shape[1]
    assert x.stride(2) == 1
    out = torch.empty_like(x)
    BLOCK_L, BLOCK_D = 32, 128
    grid = (triton.cdiv(L, BLOCK_L), triton.cdiv(D, BLOCK_D), B)
    causal_conv1d_kernel[grid](x, weight, bias, out, L, D,
                               x.stride(0), x.stride(1), out.stride(0), out.stride(1),
                               WIDTH=width, BLOCK_L=BLOCK_L, BLOCK_D=BLOCK_D, num_warps=4)
    return out


def reference(x, weight, bias):
    B, L, D = x.shape
    width = weight.shape[1]
    xt = x.transpose(1, 2).float()
    y = F.conv1d(xt, weight.float()[:, None, :], bias.float(), padding=width - 1, groups=D)[..., :L]
    return F.silu(y).transpose(1, 2).contiguous().to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, L, D, W = case["B"], case["L"], case["D"], 4
    x = torch.randn(B, L, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    w = (torch.randn(D, W, generator=g, dtype=torch.float32) * 0.5).to(torch.bfloat16)
    bias = (torch.randn(D, generator=g, dtype=torch.float32) * 0.1).to(torch.bfloat16)
    return x.to(device), w.to(device), bias.to(device)


CASES = [
    {"B": 8, "L": 4096, "D": 2048},
    {"B": 4, "L": 8192, "D": 4096},
    {"B": 16, "L": 2000, "D": 3072},
    {"B": 2, "L": 16384, "D": 1536},
    {"B": 1, "L": 30000, "D": 5120},
    {"B": 6, "L": 3000, "D": 2560},
]
SMALL_CASES = [{"B": 2, "L": 37, "D": 48}, {"B": 1, "L": 100, "D": 24}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    B, L, D = case["B"], case["L"], case["D"]
    return 2 * 2 * B * L * D + 2 * 4 * D + 2 * D


def flops(case):
    return case["B"] * case["L"] * case["D"] * (2 * 4 + 5)
