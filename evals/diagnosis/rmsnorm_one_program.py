"""RMSNorm over rows of fp32. Planted: the launch grid is (1,), so a single program walks every row
while all other SMs sit idle."""

import torch
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, M, N, stride, eps, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    for row in range(0, M):
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
        tl.store(y_ptr + row * stride + cols, x * rstd * w, mask=mask)


def entry(x, w):
    M, N = x.shape
    y = torch.empty_like(x)
    rmsnorm_kernel[(1,)](x, w, y, M, N, x.stride(0), 1e-6, BLOCK=triton.next_power_of_2(N), num_warps=8)
    return y


def reference(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g)
    w = torch.randn(case["N"], generator=g)
    return x.to(device), w.to(device)


CASES = [{"M": 4096, "N": 8192}, {"M": 8192, "N": 4096}, {"M": 2048, "N": 8192}, {"M": 3001, "N": 5003},
         {"M": 16384, "N": 1024}]
SMALL_CASES = [{"M": 5, "N": 300}, {"M": 9, "N": 1024}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    return 4 * (2 * case["M"] * case["N"] + case["N"])
