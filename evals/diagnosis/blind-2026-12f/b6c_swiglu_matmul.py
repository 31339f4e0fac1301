import torch
import triton
import triton.language as tl


@triton.jit
def swiglu_matmul_kernel(
    x_ptr, wg_ptr, wu_ptr, h_ptr,
    M, N, K,
    stride_xm, stride_wn, stride_hm,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # h = silu(x @ wg^T) * (x @ wu^T)
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
    m_mask = offs_m < M
    n_mask = offs_n < N
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    wg_ptrs = wg_ptr + offs_n[None, :] * stride_wn + offs_k[:, None]
    wu_ptrs = wu_ptr + offs_n[None, :] * stride_wn + offs_k[:, None]

    acc_g = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_u = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        k_mask = (k + offs_k) < K
        a = tl.load(x_ptrs, mask=m_mask[:, None] & k_mask[None, :], other=0.0)
        bg = tl.load(wg_ptrs, mask=n_mask[None, :] & k_mask[:, None], other=0.0)
        bu = tl.load(wu_ptrs, mask=n_mask[None, :] & k_mask[:, None], other=0.0)
        acc_g = tl.dot(a, bg, acc_g)
        acc_u = tl.dot(a, bu, acc_u)
        x_ptrs += BLOCK_K
        wg_ptrs += BLOCK_K
        wu_ptrs += BLOCK_K

    h = acc_g * tl.sigmoid(acc_g) * acc_u
    h_ptrs = h_ptr + offs_m[:, None] * stride_hm + offs_n[None, :]
    tl.store(h_ptrs, h.to(h_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


def entry(x, w_gate, w_up):
    M, K = x.shape
    N = w_gate.shape[0]
    h = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
    swiglu_matmul_kernel[grid](
        x, w_gate, w_up, h, M, N, K,
        x.stride(0), w_gate.stride(0), h.stride(0),
        BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8,
        num_warps=8, num_stages=1,
    )
    return h


def reference(x, w_gate, w_up):
    xf = x.float()
    g = xf @ w_gate.float().t()
    u = xf @ w_up.float().t()
    return (torch.nn.functional.silu(g) * u).to(x.dtype)


def make_inputs(case, device, seed):
    gen = torch.Generator().manual_seed(seed)
    M, K, N = case["M"], case["K"], case["N"]
    x = torch.randn(M, K, generator=gen, dtype=torch.float32).to(torch.float16)
    w_gate = (torch.randn(N, K, generator=gen, dtype=torch.float32) / (K ** 0.5)).to(torch.float16)
    w_up = (torch.randn(N, K, generator=gen, dtype=torch.float32) / (K ** 0.5)).to(torch.float16)
    return x.to(device), w_gate.to(device), w_up.to(device)


CASES = [
    {"M": 4096, "K": 4096, "N": 11008},
    {"M": 8192, "K": 2048, "N": 5632},
    {"M": 2000, "K": 5120, "N": 13824},
    {"M": 6144, "K": 3072, "N": 8192},
    {"M": 3000, "K": 4096, "N": 14336},
    {"M": 16384, "K": 1024, "N": 2816},
]
SMALL_CASES = [{"M": 40, "K": 96, "N": 48}, {"M": 17, "K": 64, "N": 130}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 2 * (M * K + 2 * N * K + M * N)


def flops(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 4 * M * N * K


DTYPE_FLOPS = "fp16"
