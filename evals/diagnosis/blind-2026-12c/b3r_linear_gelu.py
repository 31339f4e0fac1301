import torch, triton, triton.language as tl


@triton.jit
def linear_bias_gelu_kernel(
    a_ptr, w_ptr, bias_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_wk, stride_wn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # C = gelu(A @ W + bias), A: [M, K], W: [K, N]
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
    mask_m = offs_m < M
    mask_n = offs_n < N

    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_remaining = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_remaining), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < k_remaining) & mask_n[None, :], other=0.0)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K * stride_ak
        w_ptrs += BLOCK_K * stride_wk

    bias = tl.load(bias_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    # exact (erf) GELU
    out = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, out.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def entry(x, weight, bias):
    M, K = x.shape
    K2, N = weight.shape
    assert K == K2
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    linear_bias_gelu_kernel[grid](
        x, weight, bias, out, M, N, K,
        x.stride(0), x.stride(1), weight.stride(0), weight.stride(1),
        out.stride(0), out.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=8, num_stages=1,
    )
    return out


def reference(x, weight, bias):
    y = x.float() @ weight.float() + bias.float()
    return torch.nn.functional.gelu(y).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn((M, K), generator=g, dtype=torch.float32)
    w = torch.randn((K, N), generator=g, dtype=torch.float32) / (K ** 0.5)
    b = torch.randn((N,), generator=g, dtype=torch.float32) * 0.1
    return (x.to(torch.float16).to(device), w.to(torch.float16).to(device), b.to(torch.float16).to(device))


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 3000, "N": 11008, "K": 4096},
    {"M": 8192, "N": 3584, "K": 2560},
    {"M": 2048, "N": 14336, "K": 4096},
    {"M": 5120, "N": 5000, "K": 3072},
    {"M": 1536, "N": 8192, "K": 8192},
]
SMALL_CASES = [{"M": 96, "N": 200, "K": 96}, {"M": 130, "N": 64, "K": 64}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * (M * K + K * N + N + M * N)


def flops(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * M * N * K


DTYPE_FLOPS = "fp16"
