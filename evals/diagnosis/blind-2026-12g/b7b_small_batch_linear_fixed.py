import torch, triton, triton.language as tl


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                  stride_xm, stride_wn, stride_ym,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # y = x @ w^T + b with x [M, K], w [N, K]
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None]
    mask_m = offs_m < M
    mask_n = offs_n < N
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(x_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < K - k0), other=0.0)
        b = tl.load(w_ptrs, mask=mask_n[None, :] & (offs_k[:, None] < K - k0), other=0.0)
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    acc += bias[None, :]
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def entry(x, weight, bias):
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    linear_kernel[grid](x, weight, bias, y, M, N, K,
                        x.stride(0), weight.stride(0), y.stride(0),
                        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                        num_warps=4, num_stages=3)
    return y


def reference(x, weight, bias):
    return (x.float() @ weight.float().t() + bias.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g).to(torch.float16)
    w = (torch.randn(N, K, generator=g) / K ** 0.5).to(torch.float16)
    b = (0.1 * torch.randn(N, generator=g)).to(torch.float16)
    return x.to(device), w.to(device), b.to(device)


CASES = [
    {"M": 128, "N": 4096, "K": 8192},
    {"M": 200, "N": 5120, "K": 5120},
    {"M": 256, "N": 3072, "K": 8192},
    {"M": 96, "N": 8192, "K": 4096},
    {"M": 128, "N": 11008, "K": 4096},
    {"M": 320, "N": 2560, "K": 6144},
]
SMALL_CASES = [{"M": 24, "N": 72, "K": 96}, {"M": 40, "N": 300, "K": 128}]
TOLERANCES = {"float16": (2e-2, 2e-2)}
DTYPE_FLOPS = "fp16"


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * (M * K + N * K + M * N + N)


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]
