import torch
import triton
import triton.language as tl


@triton.jit
def gemv_kernel(x_ptr, w_ptr, y_ptr, K, N, stride_wk, stride_wn,
                BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    # y[n] = sum_k x[k] * w[k, n]
    pid = tl.program_id(0)
    offs_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_n = offs_n < N
    acc = tl.zeros([BLOCK_K, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        mk = k < K
        xv = tl.load(x_ptr + k, mask=mk, other=0.0).to(tl.float32)
        wv = tl.load(w_ptr + k[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                     mask=mk[:, None] & mask_n[None, :], other=0.0).to(tl.float32)
        acc += xv[:, None] * wv
    y = tl.sum(acc, axis=0)
    tl.store(y_ptr + offs_n, y.to(y_ptr.dtype.element_ty), mask=mask_n)


def entry(x, w):
    K, N = w.shape
    y = torch.empty((N,), device=x.device, dtype=x.dtype)
    BLOCK_N = 64
    gemv_kernel[(triton.cdiv(N, BLOCK_N),)](x, w, y, K, N, w.stride(0), w.stride(1),
                                           BLOCK_K=128, BLOCK_N=BLOCK_N, num_warps=8)
    return y


def reference(x, w):
    return (x.float() @ w.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    K, N = case["k"], case["n"]
    x = torch.randn(K, generator=g, dtype=torch.float32)
    w = torch.randn(K, N, generator=g, dtype=torch.float32) / (K ** 0.5)
    return x.to(torch.bfloat16).to(device), w.to(torch.bfloat16).to(device)


CASES = [
    {"k": 4096, "n": 14336},
    {"k": 5120, "n": 13824},
    {"k": 3584, "n": 18944},
    {"k": 4096, "n": 32000},
    {"k": 4096, "n": 11008},
    {"k": 8192, "n": 28672},
]
SMALL_CASES = [{"k": 96, "n": 80}, {"k": 200, "n": 48}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    K, N = case["k"], case["n"]
    return 2 * (K * N + K + N)


def flops(case):
    return 2 * case["k"] * case["n"]
