import torch
import triton
import triton.language as tl


@triton.jit
def expert_gemm_kernel(
    x_ptr, w_ptr, y_ptr,
    C, N, K,
    stride_xe, stride_xc,
    stride_we, stride_wk,
    stride_ye, stride_yc,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # per-expert projection of capacity-padded token buffers: y[e] = x[e] @ w[e]
    pid = tl.program_id(0)
    e = tl.program_id(1)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    m_mask = offs_m < C
    n_mask = offs_n < N

    x_ptrs = x_ptr + e.to(tl.int64) * stride_xe + offs_m[:, None] * stride_xc + offs_k[None, :]
    w_ptrs = w_ptr + e.to(tl.int64) * stride_we + offs_k[:, None] * stride_wk + offs_n[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        k_mask = (k + offs_k) < K
        a = tl.load(x_ptrs, mask=m_mask[:, None] & k_mask[None, :], other=0.0)
        b = tl.load(w_ptrs, mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * stride_wk

    y_ptrs = y_ptr + e.to(tl.int64) * stride_ye + offs_m[:, None] * stride_yc + offs_n[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


def entry(x, w):
    # x: [E, C, K] tokens dispatched to each expert (capacity C), w: [E, K, N]
    E, C, K = x.shape
    N = w.shape[2]
    y = torch.empty((E, C, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 256, 64
    grid = (triton.cdiv(C, BLOCK_M) * triton.cdiv(N, BLOCK_N), E)
    expert_gemm_kernel[grid](
        x, w, y, C, N, K,
        x.stride(0), x.stride(1),
        w.stride(0), w.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=8, num_stages=3,
    )
    return y


def reference(x, w):
    return torch.bmm(x.float(), w.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    E, C, K, N = case["E"], case["C"], case["K"], case["N"]
    x = torch.randn(E, C, K, generator=g, dtype=torch.float32).to(torch.float16)
    w = (torch.randn(E, K, N, generator=g, dtype=torch.float32) / (K ** 0.5)).to(torch.float16)
    return x.to(device), w.to(device)


CASES = [
    {"E": 8, "C": 2048, "K": 4096, "N": 2048},
    {"E": 16, "C": 1000, "K": 2048, "N": 1408},
    {"E": 64, "C": 256, "K": 2048, "N": 1408},
    {"E": 8, "C": 1536, "K": 5120, "N": 1792},
    {"E": 32, "C": 600, "K": 1024, "N": 3072},
    {"E": 4, "C": 3000, "K": 3072, "N": 4096},
]
SMALL_CASES = [{"E": 2, "C": 40, "K": 48, "N": 72}, {"E": 3, "C": 17, "K": 64, "N": 32}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    E, C, K, N = case["E"], case["C"], case["K"], case["N"]
    return 2 * E * (C * K + K * N + C * N)


def flops(case):
    E, C, K, N = case["E"], case["C"], case["K"], case["N"]
    return 2 * E * C * N * K


DTYPE_FLOPS = "fp16"
