import torch, triton, triton.language as tl


@triton.jit
def bmm_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # C[b] = A[b] @ B[b]
    pid = tl.program_id(0)
    bid = tl.program_id(1)
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

    a_ptrs = a_ptr + bid * stride_ab + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + bid * stride_bb + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_remaining = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_remaining), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_remaining) & mask_n[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + bid * stride_cb + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def entry(a, b):
    B, M, K = a.shape
    N = b.shape[2]
    c = torch.empty((B, M, N), device=a.device, dtype=a.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), B)
    bmm_kernel[grid](
        a, b, c, M, N, K,
        a.stride(0), a.stride(1), a.stride(2),
        b.stride(0), b.stride(1), b.stride(2),
        c.stride(0), c.stride(1), c.stride(2),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=4, num_stages=2,
    )
    return c


def reference(a, b):
    return torch.bmm(a.float(), b.float()).to(a.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, M, N, K = case["B"], case["M"], case["N"], case["K"]
    a = torch.randn((B, M, K), generator=g, dtype=torch.float32)
    b = torch.randn((B, K, N), generator=g, dtype=torch.float32) / (K ** 0.5)
    return (a.to(torch.float16).to(device), b.to(torch.float16).to(device))


CASES = [
    {"B": 8, "M": 2048, "N": 2048, "K": 2048},
    {"B": 16, "M": 1024, "N": 1536, "K": 1024},
    {"B": 4, "M": 4096, "N": 4096, "K": 1024},
    {"B": 12, "M": 1000, "N": 3000, "K": 1536},
    {"B": 32, "M": 768, "N": 768, "K": 2048},
    {"B": 6, "M": 3072, "N": 1920, "K": 2560},
]
SMALL_CASES = [{"B": 2, "M": 70, "N": 90, "K": 80}, {"B": 3, "M": 64, "N": 130, "K": 64}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    B, M, N, K = case["B"], case["M"], case["N"], case["K"]
    return 2 * B * (M * K + K * N + M * N)


def flops(case):
    B, M, N, K = case["B"], case["M"], case["N"], case["K"]
    return 2 * B * M * N * K


DTYPE_FLOPS = "fp16"
