import torch, triton, triton.language as tl


# Batched matmul C[b] = A[b] @ B[b] (fp16 in, fp32 accumulate, fp16 out).
@triton.jit
def _bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                stride_ab, stride_am, stride_bb, stride_bk, stride_cb, stride_cm,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    bid = tl.program_id(1)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N

    a_ptrs = a_ptr + bid.to(tl.int64) * stride_ab + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + bid.to(tl.int64) * stride_bb + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        mask_k = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=mask_k[:, None] & mask_n[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + bid.to(tl.int64) * stride_cb + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def entry(a, b):
    B, M, K = a.shape
    N = b.shape[2]
    c = torch.empty((B, M, N), device=a.device, dtype=a.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 256, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), B)
    _bmm_kernel[grid](a, b, c, M, N, K,
                      a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                      BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                      num_warps=8, num_stages=3)
    return c


def reference(a, b):
    return torch.bmm(a.float(), b.float()).to(a.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    B, M, N, K = case["B"], case["M"], case["N"], case["K"]
    a = torch.randn(B, M, K, generator=g, dtype=torch.float32).to(torch.float16)
    b = (torch.randn(B, K, N, generator=g, dtype=torch.float32) * K ** -0.5).to(torch.float16)
    return a.to(device), b.to(device)


CASES = [
    {"B": 4, "M": 4096, "N": 4096, "K": 4096},
    {"B": 32, "M": 1024, "N": 1536, "K": 2048},
    {"B": 12, "M": 2000, "N": 2880, "K": 1040},
    {"B": 64, "M": 512, "N": 768, "K": 4096},
    {"B": 6, "M": 3072, "N": 5120, "K": 2560},
    {"B": 24, "M": 1500, "N": 1008, "K": 3072},
]
SMALL_CASES = [{"B": 2, "M": 70, "N": 100, "K": 96}, {"B": 3, "M": 16, "N": 40, "K": 130}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    B, M, N, K = case["B"], case["M"], case["N"], case["K"]
    return 2 * B * (M * K + K * N + M * N)


def flops(case):
    B, M, N, K = case["B"], case["M"], case["N"], case["K"]
    return 2 * B * M * N * K


DTYPE_FLOPS = "fp16"
