import torch, triton, triton.language as tl


@triton.jit
def gate_up_silu_kernel(x_ptr, wg_ptr, wu_ptr, y_ptr, M, N, K,
                        stride_xm, stride_wn, stride_ym,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr):
    # y = silu(x @ wg.T) * (x @ wu.T)
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
    wg_ptrs = wg_ptr + offs_k[:, None] + offs_n[None, :] * stride_wn
    wu_ptrs = wu_ptr + offs_k[:, None] + offs_n[None, :] * stride_wn

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
        wg_ptrs += BLOCK_K
        wu_ptrs += BLOCK_K

    y = acc_g * tl.sigmoid(acc_g) * acc_u
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def entry(x, w_gate, w_up):
    M, K = x.shape
    N = w_gate.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    gate_up_silu_kernel[grid](
        x, w_gate, w_up, y, M, N, K,
        x.stride(0), w_gate.stride(0), y.stride(0),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=8, num_stages=3)
    return y


def reference(x, w_gate, w_up):
    xf = x.float()
    g = xf @ w_gate.float().t()
    u = xf @ w_up.float().t()
    return (torch.nn.functional.silu(g) * u).to(x.dtype)


def make_inputs(case, device, seed):
    gen = torch.Generator().manual_seed(seed)
    M, K, N = case["M"], case["K"], case["N"]
    x = torch.randn(M, K, generator=gen, dtype=torch.float32).to(torch.float16)
    wg = (torch.randn(N, K, generator=gen, dtype=torch.float32) / (K ** 0.5)).to(torch.float16)
    wu = (torch.randn(N, K, generator=gen, dtype=torch.float32) / (K ** 0.5)).to(torch.float16)
    return x.to(device), wg.to(device), wu.to(device)


CASES = [
    {"M": 4096, "K": 2048, "N": 5632},
    {"M": 3000, "K": 4096, "N": 11008},
    {"M": 8192, "K": 1024, "N": 2816},
    {"M": 2500, "K": 3072, "N": 8192},
    {"M": 6144, "K": 2560, "N": 6912},
    {"M": 1536, "K": 5120, "N": 13824},
]
SMALL_CASES = [{"M": 40, "K": 96, "N": 72}, {"M": 130, "K": 64, "N": 200}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 2 * (M * K + 2 * N * K + M * N)


def flops(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 4 * M * N * K


DTYPE_FLOPS = "fp16"
