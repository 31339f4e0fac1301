"""fp32 GEMM C = A @ B; planted: tl.dot with input_precision="ieee" forces FFMA instead of TF32 tensor cores."""
import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
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
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k0), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k0) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def entry(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty(M, N, device=a.device, dtype=a.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    matmul_kernel[grid](a, b, c, M, N, K,
                        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                        num_warps=8, num_stages=3)
    return c


def reference(a, b):
    return torch.matmul(a.float(), b.float()).to(a.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(case["M"], case["K"], generator=g).to(torch.float32)
    b = torch.randn(case["K"], case["N"], generator=g).to(torch.float32)
    return (a.to(device), b.to(device))


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 2048, "K": 3072},
    {"M": 3001, "N": 5120, "K": 4096},
    {"M": 2048, "N": 11008, "K": 4096},
    {"M": 6144, "N": 6144, "K": 1537},
]
SMALL_CASES = [{"M": 70, "N": 50, "K": 40}]
TOLERANCES = {"float32": (2.5e-1, 2e-2)}
DTYPE_FLOPS = "tf32"


def bytes_moved(case):
    e = 4
    return e * (case["M"] * case["K"] + case["K"] * case["N"] + case["M"] * case["N"])


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]
