import torch, triton, triton.language as tl


@triton.jit
def w8a16_linear_kernel(x_ptr, w_ptr, scale_ptr, y_ptr, M, N, K,
                        stride_xm, stride_wn, stride_ym,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # y = (x @ w.T) * scale[None, :] with int8 weights [N, K] and per-output-channel scales
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_k[:, None] + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_rem), other=0.0)
        b = tl.load(w_ptrs, mask=(offs_k[:, None] < k_rem) & (offs_n[None, :] < N), other=0)
        acc = tl.dot(a, b.to(a.dtype), acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    scale = tl.load(scale_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    acc = acc * scale[None, :]
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def entry(x, w_int8, scale):
    M, K = x.shape
    N = w_int8.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 128
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    w8a16_linear_kernel[grid](x, w_int8, scale, y, M, N, K,
                              x.stride(0), w_int8.stride(0), y.stride(0),
                              BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                              num_warps=8, num_stages=3)
    return y


def reference(x, w_int8, scale):
    return ((x.float() @ w_int8.float().t()) * scale.float()[None, :]).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, K, N = case["M"], case["K"], case["N"]
    x = torch.randn(M, K, generator=g, dtype=torch.float32).to(torch.float16)
    w = torch.randint(-127, 128, (N, K), generator=g, dtype=torch.int8)
    scale = ((torch.rand(N, generator=g, dtype=torch.float32) + 0.5) / (64.0 * K ** 0.5)).to(torch.float16)
    return x.to(device), w.to(device), scale.to(device)


CASES = [
    {"M": 2048, "K": 4096, "N": 11008},
    {"M": 3000, "K": 4096, "N": 4096},
    {"M": 8192, "K": 2048, "N": 5632},
    {"M": 1536, "K": 5120, "N": 13824},
    {"M": 5000, "K": 3584, "N": 3584},
    {"M": 4096, "K": 8192, "N": 1024},
]
SMALL_CASES = [{"M": 40, "K": 256, "N": 72}, {"M": 130, "K": 192, "N": 200}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 2 * M * K + N * K + 2 * N + 2 * M * N


def flops(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 2 * M * N * K


DTYPE_FLOPS = "fp16"
