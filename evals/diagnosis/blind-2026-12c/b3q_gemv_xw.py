import torch, triton, triton.language as tl


@triton.jit
def gemv_kernel(x_ptr, w_ptr, b_ptr, y_ptr, K, N, BLOCK_K: tl.constexpr):
    # y[n] = sum_k x[k] * w[k, n] + b[n]; w stored [in_features, out_features] (Conv1D-style), bf16
    n = tl.program_id(0)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        k_ok = kk < K
        xv = tl.load(x_ptr + kk, mask=k_ok, other=0.0).to(tl.float32)
        wv = tl.load(w_ptr + kk.to(tl.int64) * N + n, mask=k_ok, other=0.0).to(tl.float32)
        acc += xv * wv
    y = tl.sum(acc, axis=0) + tl.load(b_ptr + n).to(tl.float32)
    tl.store(y_ptr + n, y.to(tl.bfloat16))


def entry(x, w, b):
    K, N = w.shape
    y = torch.empty((N,), device=x.device, dtype=torch.bfloat16)
    gemv_kernel[(N,)](x, w, b, y, K, N, BLOCK_K=1024, num_warps=4)
    return y


def reference(x, w, b):
    return (x.float() @ w.float() + b.float()).to(torch.bfloat16)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    K, N = case["K"], case["N"]
    x = torch.randn(K, generator=g).to(torch.bfloat16)
    w = (torch.randn(K, N, generator=g) / K ** 0.5).to(torch.bfloat16)
    b = (0.1 * torch.randn(N, generator=g)).to(torch.bfloat16)
    return x.to(device), w.to(device), b.to(device)


CASES = [
    {"K": 8192, "N": 8192},
    {"K": 4096, "N": 11008},
    {"K": 14336, "N": 4096},
    {"K": 5120, "N": 13824},
    {"K": 5000, "N": 7000},
]
SMALL_CASES = [{"K": 300, "N": 40}, {"K": 64, "N": 33}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    K, N = case["K"], case["N"]
    return 2 * (K * N + K + 2 * N)


def flops(case):
    return 2 * case["K"] * case["N"]
