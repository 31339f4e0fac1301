import torch
import triton
import triton.language as tl


@triton.jit
def running_mean_kernel(
    x_ptr, y_ptr, L, D,
    stride_xb, stride_xl, stride_xd,
    stride_yb, stride_yl, stride_yd,
    BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # y[b, l, d] = mean(x[b, :l + 1, d])   (causal running average over the sequence)
    b = tl.program_id(0)
    pid_d = tl.program_id(1)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    mask_d = offs_d < D
    x_base = x_ptr + b * stride_xb + offs_d[None, :] * stride_xd
    y_base = y_ptr + b * stride_yb + offs_d[None, :] * stride_yd
    carry = tl.zeros([BLOCK_D], dtype=tl.float32)
    for l0 in range(0, L, BLOCK_L):
        offs_l = l0 + tl.arange(0, BLOCK_L)
        mask = (offs_l < L)[:, None] & mask_d[None, :]
        x = tl.load(x_base + offs_l[:, None] * stride_xl, mask=mask, other=0.0).to(tl.float32)
        s = tl.cumsum(x, axis=0) + carry[None, :]
        y = s / (offs_l + 1).to(tl.float32)[:, None]
        tl.store(y_base + offs_l[:, None] * stride_yl, y.to(y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


def entry(x):
    # x: [B, L, D]
    B, L, D = x.shape
    y = torch.empty_like(x)
    BLOCK_L = 128
    BLOCK_D = 32
    grid = (B, triton.cdiv(D, BLOCK_D))
    running_mean_kernel[grid](
        x, y, L, D,
        x.stride(0), x.stride(1), x.stride(2),
        y.stride(0), y.stride(1), y.stride(2),
        BLOCK_L=BLOCK_L, BLOCK_D=BLOCK_D,
    )
    return y


def reference(x):
    L = x.shape[1]
    s = torch.cumsum(x.float(), dim=1)
    n = torch.arange(1, L + 1, device=x.device, dtype=torch.float32).view(1, L, 1)
    return (s / n).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, L, D = case["B"], case["L"], case["D"]
    x = torch.randn(B, L, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    return (x.to(device),)


CASES = [
    {"B": 8, "L": 2048, "D": 4096},
    {"B": 16, "L": 1000, "D": 2560},
    {"B": 32, "L": 1024, "D": 2048},
    {"B": 12, "L": 2000, "D": 3072},
    {"B": 24, "L": 1500, "D": 1536},
    {"B": 8, "L": 3000, "D": 5120},
]
SMALL_CASES = [
    {"B": 2, "L": 70, "D": 48},
    {"B": 1, "L": 33, "D": 80},
]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    B, L, D = case["B"], case["L"], case["D"]
    return 2 * B * L * D * 2


def flops(case):
    B, L, D = case["B"], case["L"], case["D"]
    return 2 * B * L * D
