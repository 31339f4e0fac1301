"""out = gelu(x + bias) + residual over an fp16 [M, N] activation; fixed: one fused kernel reads x, bias and residual once and writes only the output."""
import torch
import triton
import triton.language as tl


@triton.jit
def bias_gelu_residual_kernel(x_ptr, b_ptr, r_ptr, out_ptr, n, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs % N, mask=m, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + offs, mask=m, other=0.0).to(tl.float32)
    h = x + b
    y = 0.5 * h * (1.0 + tl.math.erf(h * 0.7071067811865476)) + r
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=m)


def entry(x, bias, res):
    M, N = x.shape
    n = x.numel()
    BLOCK = 1024
    out = torch.empty_like(x)
    bias_gelu_residual_kernel[(triton.cdiv(n, BLOCK),)](x, bias, res, out, n, N, BLOCK=BLOCK)
    return out


def reference(x, bias, res):
    y = torch.nn.functional.gelu(x.float() + bias.float()) + res.float()
    return y.to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N = case["M"], case["N"]
    x = torch.randn(M, N, generator=g).to(torch.float16)
    bias = torch.randn(N, generator=g).to(torch.float16)
    res = torch.randn(M, N, generator=g).to(torch.float16)
    return (x.to(device), bias.to(device), res.to(device))


CASES = [{"M": 8192, "N": 4096}, {"M": 16384, "N": 3072}, {"M": 4096, "N": 11008},
         {"M": 12289, "N": 4096}, {"M": 8191, "N": 5120}]
SMALL_CASES = [{"M": 33, "N": 100}, {"M": 8, "N": 64}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    return 2 * 3 * case["M"] * case["N"] + 2 * case["N"]


def flops(case):
    return 12 * case["M"] * case["N"]
