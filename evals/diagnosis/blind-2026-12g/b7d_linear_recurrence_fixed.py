import torch
import triton
import triton.language as tl


@triton.jit
def _affine_combine(a_l, x_l, a_r, x_r):
    return a_l * a_r, a_r * x_l + x_r


@triton.jit
def _lru_scan_kernel(
    a_ptr, x_ptr, h_ptr, T, D,
    stride_b, stride_t,
    BLOCK_D: tl.constexpr, BLOCK_T: tl.constexpr,
):
    # diagonal linear recurrence h[t] = a[t] * h[t-1] + x[t], h[-1] = 0, per (batch, channel)
    pid_b = tl.program_id(0)
    pid_d = tl.program_id(1)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    d_mask = offs_d < D
    base = pid_b * stride_b + offs_d
    h = tl.zeros((BLOCK_D,), dtype=tl.float32)
    offs_t = tl.arange(0, BLOCK_T)
    is_last = (offs_t == BLOCK_T - 1)[:, None]
    for t0 in range(0, T, BLOCK_T):
        ts = t0 + offs_t
        mask = (ts < T)[:, None] & d_mask[None, :]
        ptrs = base[None, :] + ts[:, None] * stride_t
        a = tl.load(a_ptr + ptrs, mask=mask, other=1.0)
        x = tl.load(x_ptr + ptrs, mask=mask, other=0.0)
        a_cum, x_cum = tl.associative_scan((a, x), axis=0, combine_fn=_affine_combine)
        hs = a_cum * h[None, :] + x_cum
        tl.store(h_ptr + ptrs, hs, mask=mask)
        h = tl.sum(tl.where(is_last, hs, 0.0), axis=0)


def entry(a, x):
    B, T, D = x.shape
    h = torch.empty_like(x)
    BLOCK_D = 128
    grid = (B, triton.cdiv(D, BLOCK_D))
    _lru_scan_kernel[grid](a, x, h, T, D, x.stride(0), x.stride(1), BLOCK_D=BLOCK_D, BLOCK_T=32, num_warps=4)
    return h


def reference(a, x):
    B, T, D = x.shape
    h = torch.zeros((B, D), device=x.device, dtype=torch.float64)
    out = torch.empty((B, T, D), device=x.device, dtype=torch.float64)
    a64, x64 = a.double(), x.double()
    for t in range(T):
        h = a64[:, t] * h + x64[:, t]
        out[:, t] = h
    return out.to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    B, T, D = case["B"], case["T"], case["D"]
    a = torch.sigmoid(torch.randn((B, T, D), generator=g, dtype=torch.float32) + 2.0)
    x = torch.randn((B, T, D), generator=g, dtype=torch.float32)
    return (a.to(device), x.to(device))


CASES = [
    {"B": 8, "T": 4096, "D": 2048},
    {"B": 4, "T": 8192, "D": 2560},
    {"B": 16, "T": 2048, "D": 4096},
    {"B": 6, "T": 3000, "D": 5120},
    {"B": 12, "T": 1000, "D": 2816},
    {"B": 2, "T": 6144, "D": 6144},
]
SMALL_CASES = [
    {"B": 2, "T": 70, "D": 48},
    {"B": 1, "T": 33, "D": 160},
]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    return 3 * 4 * case["B"] * case["T"] * case["D"]


def flops(case):
    return 2 * case["B"] * case["T"] * case["D"]
