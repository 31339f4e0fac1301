import torch, triton, triton.language as tl


@triton.jit
def gemv_kernel(x_ptr, w_ptr, y_ptr, K, N, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    # y[n] = sum_k x[k] * w[k, n], weight stored [in_features, out_features]
    pid = tl.program_id(0)
    offs_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_n = offs_n < N
    acc = tl.zeros((BLOCK_K, BLOCK_N), dtype=tl.float32)
    for start in range(0, K, BLOCK_K):
        offs_k = start + tl.arange(0, BLOCK_K)
        mask_k = offs_k < K
        x = tl.load(x_ptr + offs_k, mask=mask_k, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs_k[:, None] * N + offs_n[None, :],
                    mask=mask_k[:, None] & mask_n[None, :], other=0.0).to(tl.float32)
        acc += x[:, None] * w
    tl.store(y_ptr + offs_n, tl.sum(acc, axis=0).to(y_ptr.dtype.element_ty), mask=mask_n)


def entry(x, w):
    K, N = w.shape
    y = torch.empty((N,), device=x.device, dtype=x.dtype)
    BLOCK_N = 64
    gemv_kernel[(triton.cdiv(N, BLOCK_N),)](x, w, y, K, N, BLOCK_K=64, BLOCK_N=BLOCK_N, num_warps=4)
    return y


def reference(x, w):
    return (x.float() @ w.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["K"], generator=g).to(torch.bfloat16)
    w = (torch.randn(case["K"], case["N"], generator=g) * 0.02).to(torch.bfloat16)
    return (x.to(device), w.to(device))


CASES = [
    {"K": 4096, "N": 12288},
    {"K": 4096, "N": 22016},
    {"K": 5120, "N": 13824},
    {"K": 3584, "N": 18944},
    {"K": 8192, "N": 10240},
]
SMALL_CASES = [{"K": 96, "N": 40}, {"K": 600, "N": 33}]
TOLERANCES = {"bfloat16": (1e-2, 2e-2)}


def bytes_moved(case):
    return case["K"] * case["N"] * 2 + case["K"] * 2 + case["N"] * 2


def flops(case):
    return 2 * case["K"] * case["N"]
