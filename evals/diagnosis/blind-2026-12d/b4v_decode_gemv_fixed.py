import torch, triton, triton.language as tl


@triton.jit
def gemv_kernel(w_ptr, x_ptr, y_ptr, N, K, stride_wn, stride_wk,
                BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # y[n] = sum_k w[n, k] * x[k]
    pid = tl.program_id(0)
    rn = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    nmask = rn < N
    acc = tl.zeros((BLOCK_K, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        m = kk < K
        w = tl.load(w_ptr + rn[None, :] * stride_wn + kk[:, None] * stride_wk,
                    mask=m[:, None] & nmask[None, :], other=0.0)
        x = tl.load(x_ptr + kk, mask=m, other=0.0)
        acc += w.to(tl.float32) * x.to(tl.float32)[:, None]
    tl.store(y_ptr + rn, tl.sum(acc, axis=0).to(y_ptr.dtype.element_ty), mask=nmask)


def entry(x, w_t):
    # w_t: projection weight stored [in_features, out_features]; y = x @ w_t
    K, N = w_t.shape
    y = torch.empty((N,), device=x.device, dtype=x.dtype)
    BLOCK_N = 32
    gemv_kernel[(triton.cdiv(N, BLOCK_N),)](w_t, x, y, N, K, w_t.stride(1), w_t.stride(0),
                                            BLOCK_N=BLOCK_N, BLOCK_K=256, num_warps=4)
    return y


def reference(x, w_t):
    return (x.float() @ w_t.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    K, N = case["K"], case["N"]
    x = torch.randn(K, generator=g).to(torch.bfloat16)
    w_t = (torch.randn(K, N, generator=g) / (K ** 0.5)).to(torch.bfloat16)
    return x.to(device), w_t.to(device)


CASES = [
    {"K": 8192, "N": 8192},
    {"K": 4096, "N": 14336},
    {"K": 14336, "N": 4096},
    {"K": 5120, "N": 13824},
    {"K": 7001, "N": 9000},
]
SMALL_CASES = [{"K": 300, "N": 70}, {"K": 64, "N": 129}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    K, N = case["K"], case["N"]
    return 2 * (K * N + K + N)


def flops(case):
    return 2 * case["K"] * case["N"]
