import torch, triton, triton.language as tl


@triton.jit
def swiglu_gemm_kernel(x_ptr, wg_ptr, wu_ptr, out_ptr,
                       M, N, K,
                       stride_xm, stride_xk,
                       stride_wn, stride_wk,
                       stride_om, stride_on,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr):
    # out = silu(x @ wg^T) * (x @ wu^T), gate and up weights stored as [N, K]
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
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_off = offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk
    wg_ptrs = wg_ptr + w_off
    wu_ptrs = wu_ptr + w_off

    acc_g = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_u = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_rem), other=0.0)
        bmask = mask_n[None, :] & (offs_k[:, None] < k_rem)
        bg = tl.load(wg_ptrs, mask=bmask, other=0.0)
        bu = tl.load(wu_ptrs, mask=bmask, other=0.0)
        acc_g = tl.dot(a, bg, acc_g)
        acc_u = tl.dot(a, bu, acc_u)
        x_ptrs += BLOCK_K * stride_xk
        wg_ptrs += BLOCK_K * stride_wk
        wu_ptrs += BLOCK_K * stride_wk

    h = acc_g * tl.sigmoid(acc_g) * acc_u
    o_ptrs = out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on
    tl.store(o_ptrs, h.to(tl.float16), mask=mask_m[:, None] & mask_n[None, :])


def entry(x, w_gate, w_up):
    M, K = x.shape
    N = w_gate.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    swiglu_gemm_kernel[grid](x, w_gate, w_up, out, M, N, K,
                             x.stride(0), x.stride(1),
                             w_gate.stride(0), w_gate.stride(1),
                             out.stride(0), out.stride(1),
                             BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                             num_warps=8, num_stages=3)
    return out


def reference(x, w_gate, w_up):
    g = x.float() @ w_gate.float().t()
    u = x.float() @ w_up.float().t()
    return (torch.nn.functional.silu(g) * u).to(torch.float16)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g, dtype=torch.float32).to(torch.float16)
    wg = (torch.randn(N, K, generator=g, dtype=torch.float32) * (K ** -0.5)).to(torch.float16)
    wu = (torch.randn(N, K, generator=g, dtype=torch.float32) * (K ** -0.5)).to(torch.float16)
    return (x.to(device), wg.to(device), wu.to(device))


CASES = [
    {"M": 4096, "N": 11008, "K": 4096},
    {"M": 2048, "N": 14336, "K": 4096},
    {"M": 8192, "N": 2816, "K": 1024},
    {"M": 3000, "N": 8960, "K": 1536},
    {"M": 6144, "N": 5632, "K": 2048},
    {"M": 1000, "N": 13824, "K": 5120},
]
SMALL_CASES = [{"M": 48, "N": 80, "K": 72}, {"M": 33, "N": 64, "K": 40}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * (M * K + 2 * N * K + M * N)


def flops(case):
    return 4 * case["M"] * case["N"] * case["K"]


DTYPE_FLOPS = "fp16"
