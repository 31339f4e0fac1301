import torch
import triton
import triton.language as tl


@triton.jit
def _combine(a1, x1, a2, x2):
    return a1 * a2, a2 * x1 + x2


@triton.jit
def _recurrence_kernel(a_ptr, x_ptr, h_ptr, seq_len, dim, stride_b, stride_t,
                       BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_b = tl.program_id(0)
    pid_d = tl.program_id(1)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    offs_t = tl.arange(0, BLOCK_T)
    mask_d = offs_d < dim
    base = pid_b * stride_b + offs_d[None, :]
    h = tl.zeros((BLOCK_D,), tl.float32)
    for t0 in range(0, seq_len, BLOCK_T):
        rows = t0 + offs_t
        mask = (rows[:, None] < seq_len) & mask_d[None, :]
        ptrs = base + rows[:, None] * stride_t
        a = tl.load(a_ptr + ptrs, mask=mask, other=1.0)
        x = tl.load(x_ptr + ptrs, mask=mask, other=0.0)
        a_cum, x_cum = tl.associative_scan((a, x), axis=0, combine_fn=_combine)
        hs = a_cum * h[None, :] + x_cum
        tl.store(h_ptr + ptrs, hs, mask=mask)
        h = tl.sum(tl.where(offs_t[:, None] == BLOCK_T - 1, hs, 0.0), axis=0)


def entry(a, x):
    # gated linear recurrence h[t] = a[t] * h[t-1] + x[t] along dim 1 of [batch, seq, dim], h[-1] = 0
    B, L, D = a.shape
    h = torch.empty_like(x)
    BLOCK_D = 64
    grid = (B, triton.cdiv(D, BLOCK_D))
    _recurrence_kernel[grid](a, x, h, L, D, a.stride(0), a.stride(1), BLOCK_T=32, BLOCK_D=BLOCK_D, num_warps=4)
    return h


def reference(a, x):
    B, L, D = a.shape
    h = torch.empty_like(x)
    state = torch.zeros((B, D), dtype=x.dtype, device=x.device)
    for t in range(L):
        state = a[:, t] * state + x[:, t]
        h[:, t] = state
    return h


def make_inputs(case, device, seed):
    gen = torch.Generator().manual_seed(seed)
    shape = (case["B"], case["L"], case["D"])
    a = torch.sigmoid(torch.randn(shape, generator=gen, dtype=torch.float32) + 2.0)
    x = torch.randn(shape, generator=gen, dtype=torch.float32)
    return a.to(device), x.to(device)


CASES = [
    {"B": 4, "L": 4096, "D": 2048},
    {"B": 2, "L": 8192, "D": 1536},
    {"B": 8, "L": 2000, "D": 2560},
    {"B": 1, "L": 16384, "D": 1024},
    {"B": 3, "L": 3000, "D": 3072},
    {"B": 16, "L": 1024, "D": 1024},
]
SMALL_CASES = [{"B": 2, "L": 100, "D": 70}, {"B": 1, "L": 37, "D": 130}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    return 3 * case["B"] * case["L"] * case["D"] * 4


def flops(case):
    return 2 * case["B"] * case["L"] * case["D"]
