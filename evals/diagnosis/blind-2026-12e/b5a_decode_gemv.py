import torch, triton, triton.language as tl

# y[n] = sum_k x[k] * W[k, n]   (weight stored [in_features, out_features], bf16)


@triton.jit
def gemv_kernel(x_ptr, w_ptr, y_ptr, K, N, stride_wk, BLOCK_K: tl.constexpr):
    n = tl.program_id(0)
    offs = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_K], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs
        m = k < K
        xv = tl.load(x_ptr + k, mask=m, other=0.0).to(tl.float32)
        wv = tl.load(w_ptr + k * stride_wk + n, mask=m, other=0.0).to(tl.float32)
        acc += xv * wv
    y = tl.sum(acc, axis=0)
    tl.store(y_ptr + n, y.to(y_ptr.dtype.element_ty))


def entry(x, w):
    K, N = w.shape
    y = torch.empty((N,), device=x.device, dtype=x.dtype)
    gemv_kernel[(N,)](x, w, y, K, N, w.stride(0), BLOCK_K=1024, num_warps=4)
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
