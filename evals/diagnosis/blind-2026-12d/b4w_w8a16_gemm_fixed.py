import torch, triton, triton.language as tl


@triton.jit
def w8a16_gemm_kernel(x_ptr, wq_ptr, scale_ptr, out_ptr,
                      M, N, K,
                      stride_xm, stride_xk,
                      stride_wn, stride_wk,
                      stride_om, stride_on,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr):
    # out[m, n] = scale[n] * sum_k x[m, k] * wq[n, k]   (int8 weight, per-output-channel scale)
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
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = wq_ptr + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        k_rem = K - k
        a = tl.load(x_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_rem), other=0.0)
        wq = tl.load(w_ptrs, mask=mask_n[None, :] & (offs_k[:, None] < k_rem), other=0)
        acc = tl.dot(a, wq.to(tl.float16), acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    scale = tl.load(scale_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    y = acc * scale[None, :]
    o_ptrs = out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on
    tl.store(o_ptrs, y.to(tl.float16), mask=mask_m[:, None] & mask_n[None, :])


def entry(x, wq, scale):
    M, K = x.shape
    N = wq.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 256, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    w8a16_gemm_kernel[grid](x, wq, scale, out, M, N, K,
                            x.stride(0), x.stride(1),
                            wq.stride(0), wq.stride(1),
                            out.stride(0), out.stride(1),
                            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                            num_warps=8, num_stages=3)
    return out


def reference(x, wq, scale):
    return ((x.float() @ wq.float().t()) * scale.float()[None, :]).to(torch.float16)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g, dtype=torch.float32).to(torch.float16)
    w = torch.randn(N, K, generator=g, dtype=torch.float32)
    absmax = w.abs().amax(dim=1).clamp_min(1e-6)
    wq = torch.round(w / absmax[:, None] * 127.0).clamp(-127, 127).to(torch.int8)
    scale = (absmax / 127.0 * (K ** -0.5)).to(torch.float16)
    return (x.to(device), wq.to(device), scale.to(device))


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 2048, "N": 14336, "K": 4096},
    {"M": 8192, "N": 5120, "K": 1536},
    {"M": 3000, "N": 6144, "K": 2816},
    {"M": 1536, "N": 11008, "K": 5120},
    {"M": 5000, "N": 2752, "K": 4096},
]
SMALL_CASES = [{"M": 48, "N": 80, "K": 72}, {"M": 33, "N": 64, "K": 136}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * M * K + N * K + 2 * N + 2 * M * N


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


DTYPE_FLOPS = "fp16"
