import torch, triton, triton.language as tl


@triton.jit
def linear_wgrad_kernel(dy_ptr, x_ptr, dw_ptr, T, N, K,
                        stride_dyt, stride_dyn, stride_xt, stride_xk, stride_wn, stride_wk,
                        BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_T: tl.constexpr):
    # dW[n, k] = sum_t dY[t, n] * X[t, k]
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    offs_t = tl.arange(0, BLOCK_T)
    a_ptrs = dy_ptr + offs_n[:, None] * stride_dyn + offs_t[None, :] * stride_dyt
    b_ptrs = x_ptr + offs_t[:, None] * stride_xt + offs_k[None, :] * stride_xk
    mask_n = offs_n < N
    mask_k = offs_k < K
    acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    for t0 in range(0, T, BLOCK_T):
        mask_t = offs_t < T - t0
        a = tl.load(a_ptrs, mask=mask_n[:, None] & mask_t[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=mask_t[:, None] & mask_k[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_T * stride_dyt
        b_ptrs += BLOCK_T * stride_xt
    w_ptrs = dw_ptr + offs_n[:, None] * stride_wn + offs_k[None, :] * stride_wk
    tl.store(w_ptrs, acc, mask=mask_n[:, None] & mask_k[None, :])


def entry(dy, x):
    T, N = dy.shape
    K = x.shape[1]
    dw = torch.empty((N, K), device=dy.device, dtype=torch.float32)
    BLOCK_N, BLOCK_K, BLOCK_T = 128, 256, 64
    grid = (triton.cdiv(N, BLOCK_N), triton.cdiv(K, BLOCK_K))
    linear_wgrad_kernel[grid](
        dy, x, dw, T, N, K,
        dy.stride(0), dy.stride(1), x.stride(0), x.stride(1), dw.stride(0), dw.stride(1),
        BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, BLOCK_T=BLOCK_T, num_warps=8, num_stages=3,
    )
    return dw


def reference(dy, x):
    return (dy.double().t() @ x.double()).float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, N, K = case["T"], case["N"], case["K"]
    dy = (torch.randn(T, N, generator=g) * 0.05).to(torch.float16)
    x = torch.randn(T, K, generator=g).to(torch.float16)
    return dy.to(device), x.to(device)


CASES = [
    {"T": 32768, "N": 1024, "K": 1024},
    {"T": 65536, "N": 768, "K": 1024},
    {"T": 40000, "N": 1024, "K": 768},
    {"T": 24576, "N": 1280, "K": 1024},
    {"T": 50000, "N": 768, "K": 768},
    {"T": 16384, "N": 1536, "K": 768},
]
SMALL_CASES = [{"T": 100, "N": 48, "K": 80}, {"T": 64, "N": 32, "K": 16}]
TOLERANCES = {"float32": (1e-3, 1e-3)}


def bytes_moved(case):
    T, N, K = case["T"], case["N"], case["K"]
    return T * N * 2 + T * K * 2 + N * K * 4


def flops(case):
    return 2 * case["T"] * case["N"] * case["K"]


DTYPE_FLOPS = "fp16"
