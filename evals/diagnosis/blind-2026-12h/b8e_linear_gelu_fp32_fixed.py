import torch, triton, triton.language as tl
import torch.nn.functional as F


@triton.jit
def linear_gelu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                       stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr):
    # y = gelu_tanh(x @ w.T + b)
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk
    mask_m = offs_m < M
    mask_n = offs_n < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        mask_k = offs_k < K - k0
        a = tl.load(x_ptrs, mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        b = tl.load(w_ptrs, mask=mask_k[:, None] & mask_n[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0)
    h = acc + bias[None, :]
    inner = 0.7978845608028654 * (h + 0.044715 * h * h * h)
    y = h * tl.sigmoid(2.0 * inner)
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y, mask=mask_m[:, None] & mask_n[None, :])


def entry(x, weight, bias):
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=torch.float32)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    linear_gelu_kernel[grid](
        x, weight, bias, y, M, N, K,
        x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=8, num_stages=3,
    )
    return y


def reference(x, weight, bias):
    return F.gelu(F.linear(x, weight, bias), approximate="tanh")


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g)
    w = torch.randn(N, K, generator=g) / K ** 0.5
    b = torch.randn(N, generator=g) * 0.1
    return x.to(device), w.to(device), b.to(device)


CASES = [
    {"M": 2048, "N": 4096, "K": 1024},
    {"M": 3000, "N": 1536, "K": 1536},
    {"M": 4096, "N": 2048, "K": 2048},
    {"M": 1000, "N": 4096, "K": 2048},
    {"M": 2560, "N": 2560, "K": 2560},
    {"M": 8192, "N": 1024, "K": 768},
]
SMALL_CASES = [{"M": 50, "N": 40, "K": 72}, {"M": 16, "N": 32, "K": 32}]
TOLERANCES = {"float32": (1e-2, 1e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 4 * (M * K + N * K + N + M * N)


def flops(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * M * N * K + 10 * M * N


DTYPE_FLOPS = "tf32"
