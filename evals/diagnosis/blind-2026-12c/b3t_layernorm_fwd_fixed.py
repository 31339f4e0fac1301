import torch
import triton
import triton.language as tl


@triton.jit
def _layernorm_fwd_kernel(x_ptr, mean_ptr, rstd_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride_x, stride_y, eps,
                          BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    y = xc * rstd * w + b
    tl.store(y_ptr + row * stride_y + offs, y, mask=mask)


def entry(x, weight, bias, eps: float):
    # LayerNorm forward over the last dim; also returns the per-row mean and 1/std kept for the backward pass
    M, N = x.shape
    mean = torch.empty((M,), dtype=torch.float32, device=x.device)
    rstd = torch.empty((M,), dtype=torch.float32, device=x.device)
    y = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(N)
    num_warps = 4 if BLOCK <= 2048 else (8 if BLOCK <= 8192 else 16)
    _layernorm_fwd_kernel[(M,)](x, mean, rstd, weight, bias, y, N, x.stride(0), y.stride(0), eps,
                                BLOCK=BLOCK, num_warps=num_warps)
    return y, mean, rstd


def reference(x, weight, bias, eps: float):
    mean = x.mean(dim=-1)
    var = x.var(dim=-1, unbiased=False)
    rstd = torch.rsqrt(var + eps)
    y = (x - mean[:, None]) * rstd[:, None] * weight + bias
    return y, mean, rstd


def make_inputs(case, device, seed):
    gen = torch.Generator().manual_seed(seed)
    M, N = case["M"], case["N"]
    x = 1.5 * torch.randn((M, N), generator=gen, dtype=torch.float32) + 0.25
    w = 1.0 + 0.1 * torch.randn((N,), generator=gen, dtype=torch.float32)
    b = 0.1 * torch.randn((N,), generator=gen, dtype=torch.float32)
    return x.to(device), w.to(device), b.to(device), 1e-5


CASES = [
    {"M": 16384, "N": 4096},
    {"M": 8192, "N": 5120},
    {"M": 30000, "N": 1024},
    {"M": 4096, "N": 12288},
    {"M": 12000, "N": 2560},
    {"M": 65536, "N": 768},
]
SMALL_CASES = [{"M": 10, "N": 300}, {"M": 3, "N": 2048}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    M, N = case["M"], case["N"]
    return 2 * M * N * 4 + 2 * N * 4 + 2 * M * 4


def flops(case):
    return 8 * case["M"] * case["N"]
