import torch, triton, triton.language as tl


@triton.jit
def gate_up_silu_kernel(x_ptr, wg_ptr, wu_ptr, y_ptr, M, N, K,
                        stride_xm, stride_wn, stride_ym,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr):
    # y = silu(x @ wg^T) * (x @ wu^T); x [M, K], wg/wu [N, K] (nn.Linear layout), fp16 in/out
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
    wg_ptrs = wg_ptr + offs_n[None, :] * stride_wn + offs_k[:, None]
    wu_ptrs = wu_ptr + offs_n[None, :] * stride_wn + offs_k[:, None]
    m_ok = offs_m[:, None] < M
    n_ok = offs_n[None, :] < N

    acc_g = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_u = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=m_ok & (offs_k[None, :] < k_rem), other=0.0)
        bg = tl.load(wg_ptrs, mask=n_ok & (offs_k[:, None] < k_rem), other=0.0)
        bu = tl.load(wu_ptrs, mask=n_ok & (offs_k[:, None] < k_rem), other=0.0)
        acc_g = tl.dot(a, bg, acc_g)
        acc_u = tl.dot(a, bu, acc_u)
        x_ptrs += BLOCK_K
        wg_ptrs += BLOCK_K
        wu_ptrs += BLOCK_K

    y = acc_g * tl.sigmoid(acc_g) * acc_u
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, y.to(tl.float16), mask=m_ok & n_ok)


def entry(x, wg, wu):
    M, K = x.shape
    N = wg.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N, BLOCK_K = 16, 64, 128
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    gate_up_silu_kernel[grid](x, wg, wu, y, M, N, K,
                              x.stride(0), wg.stride(0), y.stride(0),
                              BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                              num_warps=4, num_stages=4)
    return y


def reference(x, wg, wu):
    g = x.float() @ wg.float().T
    u = x.float() @ wu.float().T
    return (torch.nn.functional.silu(g) * u).to(torch.float16)


def make_inputs(case, device, seed):
    gen = torch.Generator().manual_seed(seed)
    M, K, N = case["M"], case["K"], case["N"]
    x = torch.randn(M, K, generator=gen).to(torch.float16)
    wg = (torch.randn(N, K, generator=gen) / K ** 0.5).to(torch.float16)
    wu = (torch.randn(N, K, generator=gen) / K ** 0.5).to(torch.float16)
    return x.to(device), wg.to(device), wu.to(device)


CASES = [
    {"M": 2048, "K": 4096, "N": 5632},
    {"M": 3000, "K": 2048, "N": 8192},
    {"M": 1024, "K": 5120, "N": 3456},
    {"M": 4096, "K": 4096, "N": 4096},
    {"M": 1536, "K": 3072, "N": 8000},
]
SMALL_CASES = [{"M": 40, "K": 96, "N": 72}, {"M": 7, "K": 128, "N": 64}]
TOLERANCES = {"float16": (2e-2, 2e-2)}
DTYPE_FLOPS = "fp16"


def bytes_moved(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 2 * (M * K + 2 * N * K + M * N)


def flops(case):
    return 4 * case["M"] * case["K"] * case["N"]
