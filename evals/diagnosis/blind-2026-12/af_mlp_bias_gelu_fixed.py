"""One layer of a wide-batch coordinate MLP (NeRF / implicit-field style): y = gelu(x @ W^T + b) in fp16 with fp32 accumulation. Planted: the GEMM writes an fp32 pre-activation tensor and a second kernel re-reads it for bias + GELU."""
import torch
import triton
import triton.language as tl


@triton.jit
def _matmul_bias_gelu_kernel(
    A, B, BIAS, C, M, N, K,
    stride_am, stride_ak, stride_bn, stride_bk, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
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
    a_ptrs = A + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = B + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    # fused epilogue: bias + exact GELU on the fp32 accumulator, one fp16 store
    bias = tl.load(BIAS + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    h = acc + bias[None, :]
    y = 0.5 * h * (1.0 + tl.math.erf(h * 0.7071067811865476))
    c_ptrs = C + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, y.to(C.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def entry(x, weight, bias):
    M, K = x.shape
    N = weight.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 128, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _matmul_bias_gelu_kernel[grid](
        x, weight, bias, out, M, N, K,
        x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), out.stride(0), out.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=4, num_stages=3,
    )
    return out


def reference(x, weight, bias):
    h = x.float() @ weight.float().t() + bias.float()
    return torch.nn.functional.gelu(h).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, K, N = case["M"], case["K"], case["N"]
    x = torch.randn(M, K, generator=g).to(torch.float16)
    weight = (torch.randn(N, K, generator=g) / K ** 0.5).to(torch.float16)
    bias = (torch.randn(N, generator=g) * 0.1).to(torch.float16)
    return (x.to(device), weight.to(device), bias.to(device))


CASES = [
    {"M": 262144, "K": 256, "N": 256},
    {"M": 200003, "K": 192, "N": 384},
    {"M": 524288, "K": 128, "N": 256},
    {"M": 131072, "K": 256, "N": 512},
]

SMALL_CASES = [
    {"M": 37, "K": 64, "N": 48},
    {"M": 130, "K": 96, "N": 136},
]

TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 2 * (M * K + N * K + N + M * N)


def flops(case):
    return 2 * case["M"] * case["K"] * case["N"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
