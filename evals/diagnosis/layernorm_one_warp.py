"""LayerNorm over rows of up to 16K fp32 values, the whole row in one block. Planted: num_warps=1, so
each thread holds hundreds of live fp32 values and spills to local memory."""

import torch
import triton
import triton.language as tl



@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, N, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * stride + cols, d * rstd * w + b, mask=mask)


def entry(x, w, b):
    M, N = x.shape
    y = torch.empty_like(x)
    layernorm_kernel[(M,)](x, w, b, y, N, x.stride(0), 1e-5, BLOCK=triton.next_power_of_2(N), num_warps=1)
    return y


def reference(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[1],), w, b, 1e-5)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g)
    w = torch.randn(case["N"], generator=g)
    b = torch.randn(case["N"], generator=g)
    return x.to(device), w.to(device), b.to(device)


CASES = [{"M": 4096, "N": 8192}, {"M": 8192, "N": 4096}, {"M": 2048, "N": 16384}, {"M": 3000, "N": 7000},
         {"M": 16384, "N": 4096}]
SMALL_CASES = [{"M": 5, "N": 300}, {"M": 8, "N": 1024}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    return 4 * (2 * case["M"] * case["N"] + 2 * case["N"])
