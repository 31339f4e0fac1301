import torch, triton, triton.language as tl


@triton.jit
def w8a16_matmul_kernel(x_ptr, w_ptr, scale_ptr, out_ptr, M, N, K,
                        stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr):
    # out[m, n] = sum_k x[m, k] * w[n, k] * scale[n]   (int8 weights, per-output-channel scale)
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
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        if k + BLOCK_K <= K:
            x = tl.load(x_ptrs)
            w = tl.load(w_ptrs)
        else:
            x = tl.load(x_ptrs, mask=offs_k[None, :] < K - k, other=0.0)
            w = tl.load(w_ptrs, mask=offs_k[:, None] < K - k, other=0)
        acc = tl.dot(x, w.to(tl.float16), acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    offs_om = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_on = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    scale = tl.load(scale_ptr + offs_on, mask=offs_on < N, other=0.0)
    acc = acc * scale[None, :]
    o_ptrs = out_ptr + offs_om[:, None] * stride_om + offs_on[None, :] * stride_on
    tl.store(o_ptrs, acc.to(tl.float16), mask=(offs_om[:, None] < M) & (offs_on[None, :] < N))


def entry(x, w_q, scale):
    # x: [M, K] fp16 activations, w_q: [N, K] int8 weights, scale: [N] fp32
    M, K = x.shape
    N = w_q.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 256, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    w8a16_matmul_kernel[grid](
        x, w_q, scale, out, M, N, K,
        x.stride(0), x.stride(1), w_q.stride(0), w_q.stride(1), out.stride(0), out.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=8, num_stages=3)
    return out


def reference(x, w_q, scale):
    return ((x.float() @ w_q.float().t()) * scale[None, :]).to(torch.float16)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn((M, K), generator=g, dtype=torch.float32).to(torch.float16)
    w = torch.randn((N, K), generator=g, dtype=torch.float32)
    amax = w.abs().amax(dim=1).clamp_min(1e-6)
    w_q = torch.round(w / amax[:, None] * 127.0).clamp(-127, 127).to(torch.int8)
    scale = (amax / 127.0 / K ** 0.5).to(torch.float32)
    return x.to(device), w_q.to(device), scale.to(device)


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 4096, "K": 4096},
    {"M": 4096, "N": 11008, "K": 4096},
    {"M": 2048, "N": 14336, "K": 4096},
    {"M": 3000, "N": 5120, "K": 5120},
    {"M": 4096, "N": 4096, "K": 11008},
]
SMALL_CASES = [{"M": 64, "N": 96, "K": 200}, {"M": 33, "N": 40, "K": 48}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * M * K + N * K + 4 * N + 2 * M * N


def flops(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * M * N * K + M * N


DTYPE_FLOPS = "fp16"
