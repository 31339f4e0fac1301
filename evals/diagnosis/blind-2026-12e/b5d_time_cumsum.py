import torch
import triton
import triton.language as tl


@triton.jit
def cumsum_time_kernel(
    x_ptr, y_ptr,
    T, D,
    stride_xb, stride_xt, stride_yb, stride_yt,
    BLOCK_T: tl.constexpr,
):
    # y[b, t, d] = sum_{s <= t} x[b, s, d]  (prefix sum over the time axis of [B, T, D])
    pid = tl.program_id(0)
    b = pid // D
    d = pid % D
    carry = tl.zeros((), dtype=tl.float32)
    for t0 in range(0, T, BLOCK_T):
        t = t0 + tl.arange(0, BLOCK_T)
        t_ok = t < T
        x = tl.load(x_ptr + b * stride_xb + t * stride_xt + d, mask=t_ok, other=0.0).to(tl.float32)
        cs = tl.cumsum(x, axis=0) + carry
        tl.store(y_ptr + b * stride_yb + t * stride_yt + d, cs.to(y_ptr.dtype.element_ty), mask=t_ok)
        carry += tl.sum(x, axis=0)


def entry(x):
    B, T, D = x.shape
    y = torch.empty_like(x)
    cumsum_time_kernel[(B * D,)](
        x, y, T, D, x.stride(0), x.stride(1), y.stride(0), y.stride(1),
        BLOCK_T=256, num_warps=4)
    return y


def reference(x):
    return torch.cumsum(x.float(), dim=1).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(case["B"], case["T"], case["D"], generator=g, dtype=torch.float32)
    return (x.to(torch.float32).to(device),)


CASES = [
    {"B": 16, "T": 4096, "D": 512},
    {"B": 8, "T": 2048, "D": 2048},
    {"B": 32, "T": 1000, "D": 768},
    {"B": 4, "T": 8192, "D": 1536},
    {"B": 64, "T": 640, "D": 1024},
    {"B": 12, "T": 3000, "D": 320},
]
SMALL_CASES = [
    {"B": 3, "T": 300, "D": 20},
    {"B": 2, "T": 77, "D": 36},
]
TOLERANCES = {"float32": (1e-3, 1e-4)}


def bytes_moved(case):
    return 2 * 4 * case["B"] * case["T"] * case["D"]


def flops(case):
    return case["B"] * case["T"] * case["D"]
