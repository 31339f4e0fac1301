import torch, triton, triton.language as tl


@triton.jit
def wgrad_kernel(x_ptr, dy_ptr, dw_ptr, T, K, N,
                 stride_xt, stride_xk, stride_dyt, stride_dyn, stride_wk, stride_wn,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_T: tl.constexpr):
    # dw[K, N] = x[T, K]^T @ dy[T, N], accumulated in fp32
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_t = tl.arange(0, BLOCK_T)
    xt_ptrs = x_ptr + offs_m[:, None] * stride_xk + offs_t[None, :] * stride_xt
    dy_ptrs = dy_ptr + offs_t[:, None] * stride_dyt + offs_n[None, :] * stride_dyn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for t0 in range(0, T, BLOCK_T):
        t_mask = (t0 + offs_t) < T
        a = tl.load(xt_ptrs, mask=(offs_m[:, None] < K) & t_mask[None, :], other=0.0)
        b = tl.load(dy_ptrs, mask=t_mask[:, None] & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        xt_ptrs += BLOCK_T * stride_xt
        dy_ptrs += BLOCK_T * stride_dyt

    w_ptrs = dw_ptr + offs_m[:, None] * stride_wk + offs_n[None, :] * stride_wn
    tl.store(w_ptrs, acc, mask=(offs_m[:, None] < K) & (offs_n[None, :] < N))


def entry(x, dy):
    T, K = x.shape
    N = dy.shape[1]
    dw = torch.empty((K, N), device=x.device, dtype=torch.float32)
    BLOCK_M, BLOCK_N, BLOCK_T = 128, 128, 64
    grid = (triton.cdiv(K, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    wgrad_kernel[grid](x, dy, dw, T, K, N,
                       x.stride(0), x.stride(1), dy.stride(0), dy.stride(1),
                       dw.stride(0), dw.stride(1),
                       BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_T=BLOCK_T,
                       num_warps=8, num_stages=4)
    return dw


def reference(x, dy):
    return x.float().t() @ dy.float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, K, N = case["T"], case["K"], case["N"]
    x = torch.randn(T, K, generator=g, dtype=torch.float32).to(torch.float16)
    dy = (torch.randn(T, N, generator=g, dtype=torch.float32) / T ** 0.5).to(torch.float16)
    return x.to(device), dy.to(device)


CASES = [
    {"T": 65536, "K": 1024, "N": 1024},
    {"T": 49152, "K": 768, "N": 768},
    {"T": 50000, "K": 1024, "N": 640},
    {"T": 40000, "K": 640, "N": 1280},
    {"T": 65536, "K": 512, "N": 1536},
]
SMALL_CASES = [{"T": 300, "K": 48, "N": 80}, {"T": 129, "K": 130, "N": 32}, {"T": 1000, "K": 64, "N": 48}]
TOLERANCES = {"float32": (2e-3, 2e-3)}


def bytes_moved(case):
    T, K, N = case["T"], case["K"], case["N"]
    return 2 * T * (K + N) + 4 * K * N


def flops(case):
    return 2 * case["T"] * case["K"] * case["N"]


DTYPE_FLOPS = "fp16"
