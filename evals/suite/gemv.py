"""Matrix-vector product y = W @ x (W [N, K] row-major, a decode-time projection), fp32 accumulation.
Family: matmul.

First pass: one program per 64 output rows, looping over K in 128-wide chunks: an elementwise product
with the broadcast x chunk, summed along K."""

import torch
import triton
import triton.language as tl

FAMILY = "matmul"


@triton.jit
def gemv_kernel(w_ptr, x_ptr, y_ptr, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        w = tl.load(w_ptr + rn[:, None].to(tl.int64) * K + rk[None, :],
                    mask=(rn[:, None] < N) & (rk[None, :] < K), other=0.0).to(tl.float32)
        x = tl.load(x_ptr + rk, mask=rk < K, other=0.0).to(tl.float32)
        acc += tl.sum(w * x[None, :], axis=1)
    tl.store(y_ptr + rn, acc.to(y_ptr.dtype.element_ty), mask=rn < N)


def entry(weight, x):
    N, K = weight.shape
    y = torch.empty(N, device=x.device, dtype=x.dtype)
    gemv_kernel[(triton.cdiv(N, 64),)](weight, x, y, N, K, BLOCK_N=64, BLOCK_K=128)
    return y


def reference(weight, x):
    return weight @ x


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    weight = (torch.randn(case["N"], case["K"], generator=g) / case["K"] ** 0.5).to(dtype)
    x = torch.randn(case["K"], generator=g).to(dtype)
    return weight.to(device), x.to(device)


CASES = [
    {"N": 4096, "K": 4096, "dtype": "float16"},
    {"N": 14_336, "K": 4096, "dtype": "bfloat16"},
    {"N": 4096, "K": 11_008, "dtype": "float16"},
    {"N": 32_000, "K": 5120, "dtype": "float32"},
    {"N": 12_289, "K": 3001, "dtype": "bfloat16"},
]
HELD_OUT = [{"N": 8191, "K": 2049, "dtype": "float16"}, {"N": 1000, "K": 16_385, "dtype": "bfloat16"}]
SMALL_CASES = [{"N": 100, "K": 300, "dtype": "float32"}, {"N": 77, "K": 129, "dtype": "float16"},
               {"N": 33, "K": 250, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-4, 1e-4), "float16": (1e-2, 1e-2), "bfloat16": (2e-2, 2e-2)}
DTYPE_FLOPS = "fp32"  # CUDA-core FMAs in fp32, no tensor cores


def flops(case):
    return 2 * case["N"] * case["K"]


def bytes_moved(case):
    N, K = case["N"], case["K"]
    return (N * K + K + N) * getattr(torch, case["dtype"]).itemsize
