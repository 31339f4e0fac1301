"""C = A @ B in bfloat16 with fp32 accumulation. Family: matmul.

First pass (the tutorial's shape without its tuning): one 64 x 64 output tile per program in row-major
program order, 32-wide K steps, masked edges, default warps and stages."""

import torch
import triton
import triton.language as tl

FAMILY = "matmul"


@triton.jit
def matmul_bf16_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    rm = (pid // num_pid_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid % num_pid_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))


def entry(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = (triton.cdiv(M, 64) * triton.cdiv(N, 64),)
    matmul_bf16_kernel[grid](a, b, c, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    return c


def reference(a, b):
    return a @ b


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    a = torch.randn(case["M"], case["K"], generator=g).to(dtype)
    b = (torch.randn(case["K"], case["N"], generator=g) / case["K"] ** 0.5).to(dtype)
    return a.to(device), b.to(device)


CASES = [
    {"M": 4096, "N": 4096, "K": 4096, "dtype": "bfloat16"},
    {"M": 16_384, "N": 4096, "K": 4096, "dtype": "bfloat16"},
    {"M": 3001, "N": 2999, "K": 1031, "dtype": "bfloat16"},
    {"M": 512, "N": 14_336, "K": 4096, "dtype": "bfloat16"},
    {"M": 8191, "N": 1023, "K": 2049, "dtype": "bfloat16"},
]
HELD_OUT = [{"M": 1999, "N": 5003, "K": 777, "dtype": "bfloat16"}, {"M": 4096, "N": 1536, "K": 7168, "dtype": "bfloat16"}]
# The Triton 3.6 interpreter multiplies bf16 bit patterns in tl.dot (it stores bf16 as uint16), so the
# CPU check runs this dtype-generic kernel in fp16; the GPU cases are bf16.
SMALL_CASES = [{"M": 37, "N": 61, "K": 45, "dtype": "float16"}, {"M": 70, "N": 33, "K": 100, "dtype": "float16"}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2), "float16": (1e-2, 1e-2)}
DTYPE_FLOPS = "bf16"


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return (M * K + K * N + M * N) * getattr(torch, case["dtype"]).itemsize
