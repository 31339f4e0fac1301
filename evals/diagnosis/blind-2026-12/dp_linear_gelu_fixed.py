"""fp16 MLP up-projection with fused epilogue: y = gelu(x @ W^T + b) (exact erf GELU), W in nn.Linear (out, in) layout. Planted: the GEMM runs with a small 64x32x32 tile and num_warps=2, which rules out Hopper wgmma and starves the tensor cores."""
import torch
import triton
import triton.language as tl


@triton.jit
def _linear_gelu_kernel(
    A, W, Bias, C,
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

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_wn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = A + offs_am[:, None] * stride_am + offs_k[None, :]
    w_ptrs = W + offs_wn[None, :] * stride_wn + offs_k[:, None]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_rem, other=0.0)
        w = tl.load(w_ptrs, mask=offs_k[:, None] < k_rem, other=0.0)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    bias = tl.load(Bias + offs_cn, mask=offs_cn < N, other=0.0).to(tl.float32)
    z = acc + bias[None, :]
    y = 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476))
    c_ptrs = C + offs_cm[:, None] * stride_cm + offs_cn[None, :]
    tl.store(c_ptrs, y.to(tl.float16), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def entry(x, weight, bias):
    M, K = x.shape
    N = weight.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _linear_gelu_kernel[grid](
        x, weight, bias, out,
        M, N, K,
        x.stride(0), weight.stride(0), out.stride(0),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=8, num_stages=3,
    )
    return out


def reference(x, weight, bias):
    z = x.float() @ weight.float().T + bias.float()
    return torch.nn.functional.gelu(z).to(torch.float16)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g).to(torch.float16)
    weight = (torch.randn(N, K, generator=g) / K ** 0.5).to(torch.float16)
    bias = (torch.randn(N, generator=g) * 0.1).to(torch.float16)
    return x.to(device), weight.to(device), bias.to(device)


CASES = [
    {"M": 8192, "N": 4096, "K": 4096},
    {"M": 4097, "N": 11008, "K": 4096},
    {"M": 16384, "N": 3072, "K": 768},
    {"M": 3333, "N": 5120, "K": 1280},
]
SMALL_CASES = [
    {"M": 45, "N": 70, "K": 40},
    {"M": 129, "N": 96, "K": 64},
]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * (M * K + N * K + N + M * N)


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
