import torch, triton, triton.language as tl


@triton.jit
def linear_gelu_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K,
                       stride_xm, stride_wk, stride_om,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr):
    # out = gelu(x @ w + b), w stored [K, N]
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    gsize = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % gsize
    pid_n = (pid % group) // gsize

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rm[:, None] * stride_xm + rk[None, :]
    w_ptrs = w_ptr + rk[:, None] * stride_wk + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(x_ptrs, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(w_ptrs, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * stride_wk
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
    h = acc + bias[None, :]
    y = 0.5 * h * (1.0 + tl.erf(h * 0.7071067811865476))
    o_ptrs = out_ptr + rm[:, None] * stride_om + rn[None, :]
    tl.store(o_ptrs, y.to(out_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def entry(x, w, b):
    M, K = x.shape
    N = w.shape[1]
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BM, BN, BK = 128, 128, 64
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    linear_gelu_kernel[grid](x, w, b, out, M, N, K, x.stride(0), w.stride(0), out.stride(0),
                             BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8,
                             num_warps=8, num_stages=4)
    return out


def reference(x, w, b):
    h = x.float() @ w.float() + b.float()
    return torch.nn.functional.gelu(h).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g).to(torch.float16)
    w = (torch.randn(K, N, generator=g) / (K ** 0.5)).to(torch.float16)
    b = (torch.randn(N, generator=g) * 0.1).to(torch.float16)
    return x.to(device), w.to(device), b.to(device)


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 3072, "K": 768},
    {"M": 2000, "N": 11008, "K": 4096},
    {"M": 6144, "N": 5120, "K": 1280},
    {"M": 3333, "N": 8192, "K": 2048},
]
SMALL_CASES = [{"M": 40, "N": 72, "K": 48}, {"M": 65, "N": 33, "K": 96}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * (M * K + K * N + N + M * N)


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


DTYPE_FLOPS = "fp16"
