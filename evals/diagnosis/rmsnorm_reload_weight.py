"""RMSNorm, a persistent program per group of rows. Planted: the weight vector is re-loaded for
every row although it does not depend on the row loop."""

import torch
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, M, N, stride, eps, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    for r in range(0, ROWS):
        row = tl.program_id(0) * ROWS + r
        ok = row < M
        x = tl.load(x_ptr + row * stride + cols, mask=mask & ok, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
        tl.store(y_ptr + row * stride + cols, x * rstd * w, mask=mask & ok)


def entry(x, w):
    M, N = x.shape
    y = torch.empty_like(x)
    rmsnorm_kernel[(triton.cdiv(M, 16),)](x, w, y, M, N, x.stride(0), 1e-6, ROWS=16, BLOCK=triton.next_power_of_2(N),
                                         num_warps=8)
    return y


def reference(x, w):
    return x * torch.rsqrt(x.pow(2).mean(dim=1, keepdim=True) + 1e-6) * w


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(case["M"], case["N"], generator=g).to(device), torch.randn(case["N"], generator=g).to(device)


CASES = [{"M": 16384, "N": 4096}, {"M": 8192, "N": 8192}, {"M": 65536, "N": 1024}, {"M": 4099, "N": 5120},
         {"M": 32768, "N": 2048}]
SMALL_CASES = [{"M": 17, "N": 300}, {"M": 32, "N": 128}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    return 4 * (2 * case["M"] * case["N"] + case["N"])
