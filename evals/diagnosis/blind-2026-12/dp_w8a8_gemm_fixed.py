"""W8A8 (SmoothQuant-style) int8 GEMM: out = (A_q @ W_q^T) * a_scale[:, None] * w_scale[None, :], int8 x int8 -> int32 accumulate, per-token / per-channel fp32 scales, bf16 output. Planted: the K-loop picks an unmasked "fast path" load inside a runtime if/else, which keeps the loads out of the software pipeliner (no cp.async multi-buffering)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _w8a8_gemm_kernel(
    A, W, AScale, WScale, C,
    M, N, K,
    stride_am, stride_wn, stride_cm,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
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
    rm = offs_m % M
    rn = offs_n % N
    a_ptrs = A + rm[:, None] * stride_am + offs_k[None, :]
    w_ptrs = W + rn[None, :] * stride_wn + offs_k[:, None]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k0, other=0)
        w = tl.load(w_ptrs, mask=offs_k[:, None] < K - k0, other=0)
        acc += tl.dot(a, w, out_dtype=tl.int32)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    a_s = tl.load(AScale + rm)
    w_s = tl.load(WScale + rn)
    out = acc.to(tl.float32) * a_s[:, None] * w_s[None, :]
    c_ptrs = C + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, out.to(tl.bfloat16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def entry(a_q, w_q, a_scale, w_scale):
    M, K = a_q.shape
    N = w_q.shape[0]
    out = torch.empty((M, N), device=a_q.device, dtype=torch.bfloat16)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 128
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _w8a8_gemm_kernel[grid](
        a_q, w_q, a_scale, w_scale, out,
        M, N, K,
        a_q.stride(0), w_q.stride(0), out.stride(0),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=8, num_stages=3,
    )
    return out


def reference(a_q, w_q, a_scale, w_scale):
    acc = a_q.double() @ w_q.double().T
    return (acc * a_scale.double()[:, None] * w_scale.double()[None, :]).to(torch.bfloat16)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    a_q = torch.randint(-127, 128, (M, K), generator=g, dtype=torch.int8)
    w_q = torch.randint(-127, 128, (N, K), generator=g, dtype=torch.int8)
    a_scale = torch.rand(M, generator=g) * 0.02 + 0.005
    w_scale = torch.rand(N, generator=g) * 0.002 + 0.0005
    return a_q.to(device), w_q.to(device), a_scale.float().to(device), w_scale.float().to(device)


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 14336, "K": 4096},
    {"M": 2000, "N": 11008, "K": 4000},
    {"M": 5000, "N": 6144, "K": 5120},
]
SMALL_CASES = [
    {"M": 40, "N": 72, "K": 208},
    {"M": 130, "N": 260, "K": 256},
]
TOLERANCES = {"bfloat16": (2e-2, 1.6e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return M * K + N * K + 4 * (M + N) + 2 * M * N


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
