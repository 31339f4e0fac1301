import torch
import triton
import triton.language as tl


@triton.jit
def _linear_kernel(a_ptr, w_ptr, c_ptr, M, N, K,
                   stride_am, stride_ak, stride_wn, stride_wk, stride_cm, stride_cn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_wn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_wn[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k, other=0.0)
        w = tl.load(w_ptrs, mask=offs_k[:, None] < K - k, other=0.0)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K * stride_ak
        w_ptrs += BLOCK_K * stride_wk

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


def entry(a, weight):
    # y = a @ weight.T with a: [tokens, in_features], weight: [out_features, in_features] (nn.Linear layout)
    M, K = a.shape
    N = weight.shape[0]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _linear_kernel[grid](a, weight, c, M, N, K,
                         a.stride(0), a.stride(1), weight.stride(0), weight.stride(1), c.stride(0), c.stride(1),
                         BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8, num_warps=8, num_stages=3)
    return c


def reference(a, weight):
    return (a.float() @ weight.float().T).to(a.dtype)


def make_inputs(case, device, seed):
    gen = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    a = torch.randn((M, K), generator=gen, dtype=torch.float32)
    w = torch.randn((N, K), generator=gen, dtype=torch.float32) / (K ** 0.5)
    return a.to(torch.float16).to(device), w.to(torch.float16).to(device)


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 2048, "N": 14336, "K": 4096},
    {"M": 3000, "N": 4096, "K": 5120},
    {"M": 6144, "N": 5120, "K": 1536},
    {"M": 1536, "N": 11008, "K": 4000},
    {"M": 5000, "N": 3072, "K": 3072},
]
SMALL_CASES = [{"M": 40, "N": 48, "K": 100}, {"M": 17, "N": 130, "K": 64}]
TOLERANCES = {"float16": (2e-2, 2e-2)}
DTYPE_FLOPS = "fp16"


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return (M * K + N * K + M * N) * 2


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]
