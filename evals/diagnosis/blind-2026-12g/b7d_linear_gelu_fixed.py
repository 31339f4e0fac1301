import torch
import triton
import triton.language as tl


@triton.jit
def _linear_gelu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_wn, stride_ym,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # y = gelu(x @ w^T + b), x: [M, K], w: [N, K] (nn.Linear layout)
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=offs_k[None, :] < k_rem, other=0.0)
        b = tl.load(w_ptrs, mask=offs_k[:, None] < k_rem, other=0.0)
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    z = acc + bias[None, :]
    out = 0.5 * z * (1.0 + tl.math.erf(z * 0.7071067811865476))
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(y_ptrs, out.to(y_ptr.dtype.element_ty), mask=mask)


def entry(x, weight, bias):
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _linear_gelu_kernel[grid](
        x, weight, bias, y, M, N, K,
        x.stride(0), weight.stride(0), y.stride(0),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=8, num_stages=4,
    )
    return y


def reference(x, weight, bias):
    z = x.float() @ weight.float().t() + bias.float()
    return torch.nn.functional.gelu(z).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn((M, K), generator=g, dtype=torch.float32)
    w = torch.randn((N, K), generator=g, dtype=torch.float32) * (K ** -0.5)
    b = torch.randn((N,), generator=g, dtype=torch.float32) * 0.1
    return (x.to(torch.float16).to(device), w.to(torch.float16).to(device), b.to(torch.float16).to(device))


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 2816, "K": 1024},
    {"M": 2000, "N": 5120, "K": 2560},
    {"M": 3072, "N": 12288, "K": 1536},
    {"M": 6000, "N": 3000, "K": 4000},
    {"M": 1536, "N": 8192, "K": 8192},
]
SMALL_CASES = [
    {"M": 40, "N": 72, "K": 96},
    {"M": 64, "N": 48, "K": 80},
]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * (M * K + N * K + N + M * N)


def flops(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * M * N * K


DTYPE_FLOPS = "fp16"
