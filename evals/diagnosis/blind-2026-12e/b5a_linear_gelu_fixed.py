import torch, triton, triton.language as tl

# MLP up-projection with fused bias + exact GELU epilogue: out = gelu(x @ W + b), fp16 in/out.


@triton.jit
def linear_gelu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                       stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr):
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
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_rem), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_rem) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    y = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, y.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def entry(x, w, bias):
    M, K = x.shape
    N = w.shape[1]
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BM, BN, BK = 128, 128, 64
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    linear_gelu_kernel[grid](x, w, bias, out, M, N, K,
                             x.stride(0), x.stride(1), w.stride(0), w.stride(1), out.stride(0), out.stride(1),
                             BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8, num_warps=8, num_stages=4)
    return out


def reference(x, w, bias):
    y = x.float() @ w.float() + bias.float()
    return torch.nn.functional.gelu(y).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g).to(torch.float16)
    w = (torch.randn(K, N, generator=g) / K ** 0.5).to(torch.float16)
    bias = (torch.randn(N, generator=g) * 0.1).to(torch.float16)
    return x.to(device), w.to(device), bias.to(device)


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 6144, "N": 11008, "K": 4096},
    {"M": 2048, "N": 14336, "K": 4096},
    {"M": 3000, "N": 5120, "K": 5120},
    {"M": 5000, "N": 3072, "K": 8192},
    {"M": 8192, "N": 8192, "K": 2048},
]
SMALL_CASES = [{"M": 40, "N": 72, "K": 96}, {"M": 33, "N": 64, "K": 130}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return (M * K + K * N + M * N + N) * 2


def flops(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * M * N * K


DTYPE_FLOPS = "fp16"
