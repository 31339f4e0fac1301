import torch
import triton
import triton.language as tl


@triton.jit
def gemv_kernel(x_ptr, w_ptr, y_ptr, K, stride_wk, stride_wn,
                BLOCK_K: tl.constexpr):
    # y[n] = sum_k x[k] * w[k, n]
    n = tl.program_id(0)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_K], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        m = k < K
        xv = tl.load(x_ptr + k, mask=m, other=0.0).to(tl.float32)
        wv = tl.load(w_ptr + k * stride_wk + n * stride_wn, mask=m, other=0.0).to(tl.float32)
        acc += xv * wv
    tl.store(y_ptr + n, tl.sum(acc, axis=0).to(y_ptr.dtype.element_ty))


def entry(x, w):
    K, N = w.shape
    y = torch.empty((N,), device=x.device, dtype=x.dtype)
    gemv_kernel[(N,)](x, w, y, K, w.stride(0), w.stride(1), BLOCK_K=512, num_warps=4)
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
