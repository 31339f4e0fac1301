import torch, triton, triton.language as tl


@triton.jit
def w8a16_matmul_kernel(
    a_ptr, w_ptr, scale_ptr, c_ptr,
    M, N, K,
    stride_am, stride_wk, stride_cm,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # C = (A @ Wq) * scale, A: fp16 [M, K], Wq: int8 [K, N], scale: per output channel [N]
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
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_remaining = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_remaining), other=0.0)
        wq = tl.load(w_ptrs, mask=(offs_k[:, None] < k_remaining) & mask_n[None, :], other=0)
        acc = tl.dot(a, wq.to(tl.float16), acc)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * stride_wk

    scale = tl.load(scale_ptr + offs_n, mask=mask_n, other=0.0)
    acc = acc * scale[None, :]
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def entry(x, wq, scale):
    M, K = x.shape
    N = wq.shape[1]
    x = x.contiguous()
    wq = wq.contiguous()
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 256, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    w8a16_matmul_kernel[grid](
        x, wq, scale, out, M, N, K,
        x.stride(0), wq.stride(0), out.stride(0),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=4, num_stages=3,
    )
    return out


def reference(x, wq, scale):
    return ((x.float() @ wq.float()) * scale[None, :]).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn((M, K), generator=g, dtype=torch.float32)
    w = torch.randn((K, N), generator=g, dtype=torch.float32)
    scale = w.abs().amax(dim=0) / 127.0
    wq = torch.clamp(torch.round(w / scale), -127, 127).to(torch.int8)
    scale = scale / (K ** 0.5)
    return (x.to(torch.float16).to(device), wq.to(device), scale.to(device))


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 2048, "N": 11008, "K": 4096},
    {"M": 3000, "N": 5120, "K": 5120},
    {"M": 8192, "N": 2560, "K": 2560},
    {"M": 1000, "N": 14336, "K": 4096},
    {"M": 6144, "N": 6144, "K": 1536},
]
SMALL_CASES = [{"M": 70, "N": 300, "K": 128}, {"M": 129, "N": 256, "K": 96}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * M * K + K * N + 4 * N + 2 * M * N


def flops(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * M * N * K


DTYPE_FLOPS = "fp16"
