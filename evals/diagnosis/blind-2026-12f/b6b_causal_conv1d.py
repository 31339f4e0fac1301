import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def causal_conv1d_kernel(x_ptr, w_ptr, bias_ptr, out_ptr, L, D,
                         stride_xb, stride_xd, stride_xl,
                         stride_ob, stride_od, stride_ol,
                         WIDTH: tl.constexpr, BLOCK_L: tl.constexpr):
    # depthwise causal conv over the sequence axis followed by SiLU:
    # y[b, d, l] = silu(bias[d] + sum_j w[d, j] * x[b, d, l - WIDTH + 1 + j])
    pid_bd = tl.program_id(0)
    pid_l = tl.program_id(1)
    b = pid_bd // D
    d = pid_bd % D
    l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    x_row = x_ptr + b * stride_xb + d * stride_xd
    acc = tl.zeros((BLOCK_L,), dtype=tl.float32) + tl.load(bias_ptr + d).to(tl.float32)
    for j in tl.static_range(WIDTH):
        src = l - (WIDTH - 1) + j
        xv = tl.load(x_row + src * stride_xl, mask=(src >= 0) & (src < L), other=0.0)
        wj = tl.load(w_ptr + d * WIDTH + j).to(tl.float32)
        acc += xv.to(tl.float32) * wj
    y = acc * tl.sigmoid(acc)
    tl.store(out_ptr + b * stride_ob + d * stride_od + l * stride_ol,
             y.to(out_ptr.dtype.element_ty), mask=l < L)


def entry(x, weight, bias):
    # x: [B, L, D] (token-major, as produced by the input projection)
    # weight: [D, WIDTH], bias: [D]
    B, L, D = x.shape
    width = weight.shape[1]
    out = torch.empty_like(x)
    xt = x.transpose(1, 2)      # [B, D, L] view
    ot = out.transpose(1, 2)
    BLOCK_L = 512
    grid = (B * D, triton.cdiv(L, BLOCK_L))
    causal_conv1d_kernel[grid](xt, weight, bias, ot, L, D,
                               xt.stride(0), xt.stride(1), xt.stride(2),
                               ot.stride(0), ot.stride(1), ot.stride(2),
                               WIDTH=width, BLOCK_L=BLOCK_L, num_warps=4)
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
