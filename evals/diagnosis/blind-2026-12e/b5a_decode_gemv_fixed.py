import torch, triton, triton.language as tl

# y[n] = sum_k x[k] * W[k, n]   (weight stored [in_features, out_features], bf16)


@triton.jit
def gemv_kernel(x_ptr, w_ptr, y_ptr, K, N, stride_wk, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    offs_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mn = offs_n < N
    acc = tl.zeros([BLOCK_K, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        mk = k < K
        xv = tl.load(x_ptr + k, mask=mk, other=0.0).to(tl.float32)
        wv = tl.load(w_ptr + k[:, None] * stride_wk + offs_n[None, :],
                     mask=mk[:, None] & mn[None, :], other=0.0).to(tl.float32)
        acc += xv[:, None] * wv
    y = tl.sum(acc, axis=0)
    tl.store(y_ptr + offs_n, y.to(y_ptr.dtype.element_ty), mask=mn)


def entry(x, w):
    K, N = w.shape
    y = torch.empty((N,), device=x.device, dtype=x.dtype)
    BLOCK_N = 32
    gemv_kernel[(triton.cdiv(N, BLOCK_N),)](x, w, y, K, N, w.stride(0), BLOCK_K=256, BLOCK_N=BLOCK_N, num_warps=4)
    return y


def reference(x, w):
    return (x.float() @ w.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    K, N = case["K"], case["N"]
    x = torch.randn(K, generator=g, dtype=torch.float32).to(torch.bfloat16)
    w = (torch.randn(K, N, generator=g, dtype=torch.float32) / K ** 0.5).to(torch.bfloat16)
    return x.to(device), w.to(device)


CASES = [
    {"K": 4096, "N": 11008},
    {"K": 5120, "N": 13824},
    {"K": 8192, "N": 8192},
    {"K": 3584, "N": 18944},
    {"K": 4096, "N": 14336},
    {"K": 6144, "N": 10240},
]
SMALL_CASES = [{"K": 96, "N": 40}, {"K": 200, "N": 64}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    K, N = case["K"], case["N"]
    return 2 * (K * N + K + N)


def flops(case):
    return 2 * case["K"] * case["N"]


DTYPE_FLOPS = "bf16"
