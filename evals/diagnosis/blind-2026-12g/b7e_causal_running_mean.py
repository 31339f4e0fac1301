import torch
import triton
import triton.language as tl


@triton.jit
def running_mean_kernel(
    x_ptr, y_ptr, L, D,
    stride_xb, stride_xl, stride_xd,
    stride_yb, stride_yl, stride_yd,
    BLOCK_L: tl.constexpr,
):
    # y[b, l, d] = mean(x[b, :l + 1, d])   (causal running average over the sequence)
    pid = tl.program_id(0)
    b = pid // D
    d = pid % D
    x_base = x_ptr + b * stride_xb + d * stride_xd
    y_base = y_ptr + b * stride_yb + d * stride_yd
    carry = 0.0
    for l0 in range(0, L, BLOCK_L):
        offs_l = l0 + tl.arange(0, BLOCK_L)
        mask = offs_l < L
        x = tl.load(x_base + offs_l * stride_xl, mask=mask, other=0.0).to(tl.float32)
        s = tl.cumsum(x, axis=0) + carry
        y = s / (offs_l + 1).to(tl.float32)
        tl.store(y_base + offs_l * stride_yl, y.to(y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


def entry(x):
    # x: [B, L, D]
    B, L, D = x.shape
    y = torch.empty_like(x)
    BLOCK_L = 1024
    running_mean_kernel[(B * D,)](
        x, y, L, D,
        x.stride(0), x.stride(1), x.stride(2),
        y.stride(0), y.stride(1), y.stride(2),
        BLOCK_L=BLOCK_L,
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
