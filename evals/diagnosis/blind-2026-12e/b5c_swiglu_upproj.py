import torch, triton, triton.language as tl


@triton.jit
def swiglu_upproj_kernel(x_ptr, wg_ptr, wu_ptr, h_ptr, M, N, K,
                         stride_xm, stride_wk, stride_hm,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         GROUP_M: tl.constexpr):
    # h = silu(x @ wg) * (x @ wu), weights stored [K, N]
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
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    wg_ptrs = wg_ptr + offs_k[:, None] * stride_wk + offs_n[None, :]
    wu_ptrs = wu_ptr + offs_k[:, None] * stride_wk + offs_n[None, :]

    acc_g = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_u = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_rem), other=0.0)
        bg = tl.load(wg_ptrs, mask=(offs_k[:, None] < k_rem) & (offs_n[None, :] < N), other=0.0)
        bu = tl.load(wu_ptrs, mask=(offs_k[:, None] < k_rem) & (offs_n[None, :] < N), other=0.0)
        acc_g = tl.dot(a, bg, acc_g)
        acc_u = tl.dot(a, bu, acc_u)
        x_ptrs += BLOCK_K
        wg_ptrs += BLOCK_K * stride_wk
        wu_ptrs += BLOCK_K * stride_wk

    h = acc_g * tl.sigmoid(acc_g) * acc_u
    h_ptrs = h_ptr + offs_m[:, None] * stride_hm + offs_n[None, :]
    tl.store(h_ptrs, h.to(h_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def entry(x, w_gate, w_up):
    M, K = x.shape
    N = w_gate.shape[1]
    h = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 32
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    swiglu_upproj_kernel[grid](x, w_gate, w_up, h, M, N, K,
                               x.stride(0), w_gate.stride(0), h.stride(0),
                               BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                               num_warps=4, num_stages=3)
    return h


def reference(x, w_gate, w_up):
    g = x.float() @ w_gate.float()
    u = x.float() @ w_up.float()
    return (torch.nn.functional.silu(g) * u).to(x.dtype)


def make_inputs(case, device, seed):
    gen = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=gen).to(torch.float16)
    wg = (torch.randn(K, N, generator=gen) / K ** 0.5).to(torch.float16)
    wu = (torch.randn(K, N, generator=gen) / K ** 0.5).to(torch.float16)
    return x.to(device), wg.to(device), wu.to(device)


CASES = [
    {"M": 4096, "N": 11008, "K": 4096},
    {"M": 2048, "N": 14336, "K": 4096},
    {"M": 3000, "N": 8192, "K": 2048},
    {"M": 8192, "N": 5632, "K": 2048},
    {"M": 1536, "N": 13824, "K": 5120},
]
SMALL_CASES = [{"M": 70, "N": 96, "K": 80}, {"M": 33, "N": 40, "K": 64}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * (M * K + 2 * K * N + M * N)


def flops(case):
    return 4 * case["M"] * case["N"] * case["K"]


DTYPE_FLOPS = "fp16"
