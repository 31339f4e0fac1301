import torch, triton, triton.language as tl


@triton.jit
def linear_fp32_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K,
                       stride_xm, stride_wn, stride_om,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr):
    # out = x @ w.T + b, all fp32 (nn.Linear layout: w is [N, K])
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    gid = pid // group
    first_m = gid * GROUP_M
    gsize = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % gsize
    pid_n = (pid % group) // gsize

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rm[:, None] * stride_xm + rk[None, :]
    w_ptrs = w_ptr + rn[None, :] * stride_wn + rk[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + rk
        a = tl.load(x_ptrs, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(w_ptrs, mask=(rn[None, :] < N) & (kk[:, None] < K), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="tf32")
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    acc = acc + bias[None, :]
    o_ptrs = out_ptr + rm[:, None] * stride_om + rn[None, :]
    tl.store(o_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def entry(x, w, b):
    M, K = x.shape
    N = w.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=torch.float32)
    BM, BN, BK = 128, 128, 32
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    linear_fp32_kernel[grid](x, w, b, out, M, N, K, x.stride(0), w.stride(0), out.stride(0),
                             BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8,
                             num_warps=8, num_stages=3)
    return out


def reference(x, w, b):
    return torch.nn.functional.linear(x.double(), w.double(), b.double()).float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g, dtype=torch.float32)
    w = torch.randn(N, K, generator=g, dtype=torch.float32) / (K ** 0.5)
    b = torch.randn(N, generator=g, dtype=torch.float32) * 0.1
    return x.to(device), w.to(device), b.to(device)


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 1024, "K": 2048},
    {"M": 3000, "N": 5120, "K": 1536},
    {"M": 2048, "N": 3072, "K": 3072},
    {"M": 6144, "N": 2000, "K": 1000},
]
SMALL_CASES = [{"M": 48, "N": 40, "K": 72}, {"M": 33, "N": 64, "K": 32}]
TOLERANCES = {"float32": (2e-2, 2e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 4 * (M * K + N * K + N + M * N)


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


DTYPE_FLOPS = "fp32"
