import torch, triton, triton.language as tl


@triton.jit
def matmul_bias_gelu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                  stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    # c = gelu(a @ b + bias) with a [M, K], b [K, N]
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
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & k_mask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_mask[:, None] & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    h = acc + bias[None, :]
    y = 0.5 * h * (1.0 + tl.math.erf(h * 0.7071067811865476))
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :],
             y.to(c_ptr.dtype.element_ty), mask=c_mask)


def matmul_bias_gelu(a, b, bias):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    matmul_bias_gelu_kernel[grid](a, b, bias, c, M, N, K, a.stride(0), b.stride(0), c.stride(0),
                                  BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                                  num_warps=8, num_stages=3)
    return c


def entry(x, w_up, b_up):
    # transformer MLP up-projection: gelu(x @ w_up + b_up)
    return matmul_bias_gelu(x, w_up, b_up)


def reference(x, w_up, b_up):
    h = x.float() @ w_up.float() + b_up.float()
    return torch.nn.functional.gelu(h).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g).to(torch.float16)
    w = (torch.randn(K, N, generator=g) * K ** -0.5).to(torch.float16)
    b = (0.1 * torch.randn(N, generator=g)).to(torch.float16)
    return x.to(device), w.to(device), b.to(device)


CASES = [
    {"M": 16384, "N": 3072, "K": 768},
    {"M": 8192, "N": 4096, "K": 1024},
    {"M": 12000, "N": 5120, "K": 1280},
    {"M": 32768, "N": 2048, "K": 512},
    {"M": 6000, "N": 6144, "K": 1536},
]
SMALL_CASES = [{"M": 70, "N": 96, "K": 80}, {"M": 33, "N": 130, "K": 64}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * (M * K + K * N + N + M * N)


def flops(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * M * N * K + 10 * M * N


DTYPE_FLOPS = "fp16"
