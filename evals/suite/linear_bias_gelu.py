"""Linear layer with fused epilogue, gelu(x @ W^T + b), W in nn.Linear's [out, in] layout. Family: matmul.

First pass: one 64 x 64 output tile per program in row-major program order, 32-wide K steps, bias and
exact (erf) GELU applied to the fp32 accumulator before the store; default warps and stages."""

import torch
import triton
import triton.language as tl

FAMILY = "matmul"


@triton.jit
def linear_bias_gelu_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, M, N, K,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    rm = (pid // num_pid_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid % num_pid_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(x_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * K + (k + rk)[:, None],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc)
    acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    y = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], y.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def entry(x, weight, bias):
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, 64) * triton.cdiv(N, 64),)
    linear_bias_gelu_kernel[grid](x, weight, bias, y, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    return y


def reference(x, weight, bias):
    return torch.nn.functional.gelu(torch.nn.functional.linear(x, weight, bias))


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    x = torch.randn(case["M"], case["K"], generator=g).to(dtype)
    weight = (torch.randn(case["N"], case["K"], generator=g) / case["K"] ** 0.5).to(dtype)
    bias = torch.randn(case["N"], generator=g).to(dtype)
    return x.to(device), weight.to(device), bias.to(device)


CASES = [
    {"M": 8192, "N": 3072, "K": 768, "dtype": "float16"},
    {"M": 4096, "N": 16_384, "K": 4096, "dtype": "bfloat16"},
    {"M": 3001, "N": 4096, "K": 1024, "dtype": "float16"},
    {"M": 197, "N": 3072, "K": 768, "dtype": "bfloat16"},
    {"M": 16_384, "N": 1023, "K": 2047, "dtype": "float16"},
]
HELD_OUT = [{"M": 2049, "N": 5120, "K": 1280, "dtype": "bfloat16"}, {"M": 1000, "N": 2000, "K": 3000, "dtype": "float16"}]
SMALL_CASES = [{"M": 37, "N": 61, "K": 45, "dtype": "float16"}, {"M": 70, "N": 33, "K": 100, "dtype": "float16"}]
TOLERANCES = {"float16": (1e-2, 1e-2), "bfloat16": (2e-2, 2e-2)}
DTYPE_FLOPS = "fp16"


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"] + 10 * case["M"] * case["N"]


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return (M * K + K * N + M * N + N) * getattr(torch, case["dtype"]).itemsize
