import torch, triton, triton.language as tl


# The shared-expert block emits one fused projection per token: the first
# `hidden` columns are the activations for the down projection, the trailing
# `n_router` columns are router logits consumed elsewhere.

@triton.jit
def _down_proj_kernel(a_ptr, w_ptr, c_ptr, M, N, K,
                      stride_am, stride_wn, stride_cm,
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
    mask_m = offs_m < M
    mask_n = offs_n < N

    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    w_ptrs = w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_rem), other=0.0)
        b = tl.load(w_ptrs, mask=(offs_k[:, None] < k_rem) & mask_n[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def entry(fused, w_down):
    # fused: (tokens, hidden + n_router) ; w_down: (out_features, hidden)
    N, K = w_down.shape
    M = fused.shape[0]
    c = torch.empty((M, N), device=fused.device, dtype=fused.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _down_proj_kernel[grid](fused, w_down, c, M, N, K,
                            fused.stride(0), w_down.stride(0), c.stride(0),
                            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                            num_warps=8, num_stages=3)
    return c


def reference(fused, w_down):
    K = w_down.shape[1]
    return (fused[:, :K].float() @ w_down.float().t()).to(fused.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, K, N, E = case["M"], case["K"], case["N"], case["E"]
    fused = torch.randn(M, K + E, generator=g).to(torch.float16)
    w = (torch.randn(N, K, generator=g) / K ** 0.5).to(torch.float16)
    return fused.to(device), w.to(device)


CASES = [
    {"M": 8192, "K": 4096, "N": 4096, "E": 8},
    {"M": 6000, "K": 2048, "N": 7168, "E": 8},
    {"M": 4096, "K": 5120, "N": 5120, "E": 24},
    {"M": 12288, "K": 1408, "N": 2048, "E": 40},
    {"M": 3000, "K": 7168, "N": 7168, "E": 8},
    {"M": 10000, "K": 3584, "N": 3584, "E": 56},
]
SMALL_CASES = [{"M": 40, "K": 64, "N": 48, "E": 8}, {"M": 33, "K": 96, "N": 40, "E": 24}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 2 * (M * K + N * K + M * N)


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


DTYPE_FLOPS = "fp16"
