"""Depthwise causal conv1d + bias + SiLU (Mamba-style short conv) on a [B, L, D] bf16 activation. Planted: the kernel walks the sequence axis per channel, so on channels-last data every load/store strides by D (uncoalesced)."""
import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _causal_conv1d_silu_kernel(
    x_ptr, w_ptr, bias_ptr, out_ptr,
    seqlen, dim,
    stride_xb, stride_xl, stride_xd,
    stride_ob, stride_ol, stride_od,
    WIDTH: tl.constexpr,
    BLOCK_L: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    # one program = a [BLOCK_L, BLOCK_D] tile of one batch element; channels are the contiguous axis
    pid_l = tl.program_id(0)
    pid_d = tl.program_id(1)
    b = tl.program_id(2)

    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    d_mask = offs_d < dim
    x_base = x_ptr + b * stride_xb + offs_d[None, :] * stride_xd

    bias = tl.load(bias_ptr + offs_d, mask=d_mask, other=0.0).to(tl.float32)
    acc = tl.zeros([BLOCK_L, BLOCK_D], dtype=tl.float32) + bias[None, :]
    for k in tl.static_range(WIDTH):
        src = offs_l + (k - (WIDTH - 1))
        l_mask = (src >= 0) & (src < seqlen)
        xv = tl.load(x_base + src[:, None] * stride_xl, mask=l_mask[:, None] & d_mask[None, :], other=0.0)
        wk = tl.load(w_ptr + offs_d * WIDTH + k, mask=d_mask, other=0.0).to(tl.float32)
        acc += xv.to(tl.float32) * wk[None, :]

    y = acc * tl.sigmoid(acc)
    out_ptrs = out_ptr + b * stride_ob + offs_l[:, None] * stride_ol + offs_d[None, :] * stride_od
    tl.store(out_ptrs, y.to(out_ptr.dtype.element_ty), mask=(offs_l < seqlen)[:, None] & d_mask[None, :])


def entry(x, weight, bias):
    B, L, D = x.shape
    W = weight.shape[1]
    out = torch.empty_like(x)
    BLOCK_L, BLOCK_D = 32, 128
    grid = (triton.cdiv(L, BLOCK_L), triton.cdiv(D, BLOCK_D), B)
    _causal_conv1d_silu_kernel[grid](
        x, weight, bias, out,
        L, D,
        x.stride(0), x.stride(1), x.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        WIDTH=W, BLOCK_L=BLOCK_L, BLOCK_D=BLOCK_D, num_warps=4,
    )
    return out


def reference(x, weight, bias):
    B, L, D = x.shape
    W = weight.shape[1]
    xf = x.float().transpose(1, 2)  # [B, D, L]
    y = F.conv1d(F.pad(xf, (W - 1, 0)), weight.float().unsqueeze(1), bias.float(), groups=D)
    return F.silu(y).transpose(1, 2).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, L, D, W = case["B"], case["L"], case["D"], case["W"]
    x = torch.randn(B, L, D, generator=g).to(torch.bfloat16)
    weight = (torch.randn(D, W, generator=g) * 0.5).float()
    bias = (torch.randn(D, generator=g) * 0.1).float()
    return x.to(device), weight.to(device), bias.to(device)


CASES = [
    {"B": 8, "L": 4096, "D": 2560, "W": 4},
    {"B": 3, "L": 7001, "D": 4096, "W": 4},
    {"B": 16, "L": 2048, "D": 1536, "W": 3},
    {"B": 1, "L": 32768, "D": 5120, "W": 4},
]

SMALL_CASES = [
    {"B": 2, "L": 37, "D": 24, "W": 4},
    {"B": 1, "L": 100, "D": 40, "W": 3},
]

TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    n = case["B"] * case["L"] * case["D"]
    return n * 2 * 2 + case["D"] * (case["W"] + 1) * 4


def flops(case):
    return case["B"] * case["L"] * case["D"] * (2 * case["W"] + 5)

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
