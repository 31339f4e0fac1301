import torch, triton, triton.language as tl


# Single-token projection y = x @ W for checkpoints that keep their linear
# weights as (in_features, out_features), e.g. GPT-2 style Conv1D layers.

@triton.jit
def _gemv_kernel(x_ptr, w_ptr, b_ptr, y_ptr, K, N, stride_wk, stride_wn,
                 BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    offs_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_n = offs_n < N
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_K, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        mask_k = k < K
        xv = tl.load(x_ptr + k, mask=mask_k, other=0.0).to(tl.float32)
        wv = tl.load(w_ptr + k[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                     mask=mask_k[:, None] & mask_n[None, :], other=0.0).to(tl.float32)
        acc += xv[:, None] * wv
    y = tl.sum(acc, axis=0) + tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs_n, y.to(y_ptr.dtype.element_ty), mask=mask_n)


def entry(x, w, b):
    # x: (K,), w: (K, N), b: (N,)
    K, N = w.shape
    y = torch.empty((N,), device=x.device, dtype=x.dtype)
    BLOCK_N = 32
    _gemv_kernel[(triton.cdiv(N, BLOCK_N),)](x, w, b, y, K, N, w.stride(0), w.stride(1),
                                             BLOCK_K=256, BLOCK_N=BLOCK_N, num_warps=8)
    return y


def reference(x, w, b):
    return (x.float() @ w.float() + b.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    K, N = case["K"], case["N"]
    x = torch.randn(K, generator=g).to(torch.bfloat16)
    w = (torch.randn(K, N, generator=g) / K ** 0.5).to(torch.bfloat16)
    b = torch.randn(N, generator=g).to(torch.bfloat16)
    return x.to(device), w.to(device), b.to(device)


CASES = [
    {"K": 4096, "N": 14336},
    {"K": 14336, "N": 4096},
    {"K": 5120, "N": 13824},
    {"K": 3584, "N": 18944},
    {"K": 8192, "N": 8192},
    {"K": 6144, "N": 9000},
]
SMALL_CASES = [{"K": 300, "N": 70}, {"K": 64, "N": 129}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    K, N = case["K"], case["N"]
    return 2 * (K * N + K + 2 * N)


def flops(case):
    return 2 * case["K"] * case["N"]
