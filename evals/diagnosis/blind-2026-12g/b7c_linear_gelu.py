import torch, triton, triton.language as tl


# y = gelu(x @ W^T + b), W in nn.Linear layout [N, K]; exact (erf) GELU.
@triton.jit
def _linear_gelu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                        stride_xm, stride_wn, stride_ym,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N

    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        mask_k = (k0 + offs_k) < K
        a = tl.load(x_ptrs, mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        b = tl.load(w_ptrs, mask=mask_n[None, :] & mask_k[:, None], other=0.0)
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    h = acc + bias[None, :]
    y = 0.5 * h * (1.0 + tl.math.erf(h * 0.7071067811865476))
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :], y.to(y_ptr.dtype.element_ty),
             mask=mask_m[:, None] & mask_n[None, :])


def entry(x, weight, bias):
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 32
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _linear_gelu_kernel[grid](x, weight, bias, y, M, N, K,
                              x.stride(0), weight.stride(0), y.stride(0),
                              BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                              num_warps=8, num_stages=3)
    return y


def reference(x, weight, bias):
    h = x.float() @ weight.float().t() + bias.float()
    return torch.nn.functional.gelu(h).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g, dtype=torch.float32).to(torch.float16)
    w = (torch.randn(N, K, generator=g, dtype=torch.float32) * K ** -0.5).to(torch.float16)
    b = (0.1 * torch.randn(N, generator=g, dtype=torch.float32)).to(torch.float16)
    return x.to(device), w.to(device), b.to(device)


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 11008, "K": 4096},
    {"M": 3000, "N": 5120, "K": 1536},
    {"M": 16384, "N": 3072, "K": 768},
    {"M": 2048, "N": 14336, "K": 4096},
    {"M": 6000, "N": 2816, "K": 1200},
]
SMALL_CASES = [{"M": 70, "N": 96, "K": 80}, {"M": 33, "N": 50, "K": 64}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * (M * K + N * K + N + M * N)


def flops(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * M * N * K + 8 * M * N


DTYPE_FLOPS = "fp16"
