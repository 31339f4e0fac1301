import torch, triton, triton.language as tl


@triton.jit
def linear_bias_kernel(a_ptr, w_ptr, bias_ptr, c_ptr, M, N, K,
                       stride_am, stride_ak, stride_wk, stride_wn, stride_cm, stride_cn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr):
    # C = A @ W + bias, grouped tile order
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
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_wn[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        w = tl.load(w_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K * stride_ak
        w_ptrs += BLOCK_K * stride_wk

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    bias = tl.load(bias_ptr + offs_cn, mask=offs_cn < N, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


def entry(x, weight, bias):
    # x: [M, K] fp16, weight: [K, N] fp16, bias: [N] fp16
    M, K = x.shape
    _, N = weight.shape
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 256, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    linear_bias_kernel[grid](
        x, weight, bias, out, M, N, K,
        x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), out.stride(0), out.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=8, num_stages=1)
    return out


def reference(x, weight, bias):
    return (x.float() @ weight.float() + bias.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn((M, K), generator=g, dtype=torch.float32).to(torch.float16)
    w = (torch.randn((K, N), generator=g, dtype=torch.float32) / K ** 0.5).to(torch.float16)
    b = torch.randn((N,), generator=g, dtype=torch.float32).to(torch.float16)
    return x.to(device), w.to(device), b.to(device)


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 4096, "K": 4096},
    {"M": 4096, "N": 11008, "K": 4096},
    {"M": 6144, "N": 5120, "K": 5120},
    {"M": 3000, "N": 7168, "K": 2816},
    {"M": 8192, "N": 1792, "K": 8192},
]
SMALL_CASES = [{"M": 64, "N": 96, "K": 80}, {"M": 33, "N": 40, "K": 48}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * (M * K + K * N + N + M * N)


def flops(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * M * N * K + M * N


DTYPE_FLOPS = "fp16"
