import torch
import triton
import triton.language as tl


@triton.jit
def _w8a16_linear_kernel(x_ptr, wq_ptr, scale_ptr, y_ptr, M, N, K,
                         stride_xm, stride_wk, stride_ym,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         GROUP_M: tl.constexpr):
    # y = (x @ dequant(wq)) with int8 weights [K, N] and one fp16 scale per output channel.
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
    m_mask = offs_m < M
    n_mask = offs_n < N
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = wq_ptr + offs_k[:, None] * stride_wk + offs_n[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        if k0 + BLOCK_K <= K:
            a = tl.load(x_ptrs, mask=m_mask[:, None], other=0.0)
            w = tl.load(w_ptrs, mask=n_mask[None, :], other=0)
        else:
            k_mask = (k0 + offs_k) < K
            a = tl.load(x_ptrs, mask=m_mask[:, None] & k_mask[None, :], other=0.0)
            w = tl.load(w_ptrs, mask=k_mask[:, None] & n_mask[None, :], other=0)
        acc = tl.dot(a, w.to(a.dtype), acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * stride_wk

    scale = tl.load(scale_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    y = acc * scale[None, :]
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


def entry(x, wq, scale):
    M, K = x.shape
    N = wq.shape[1]
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 256, 64
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _w8a16_linear_kernel[grid](x, wq, scale, y, M, N, K, x.stride(0), wq.stride(0), y.stride(0),
                               BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                               num_warps=8, num_stages=3)
    return y


def reference(x, wq, scale):
    return ((x.float() @ wq.float()) * scale.float()[None, :]).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, generator=g).to(torch.float16)
    wq = torch.randint(-127, 128, (K, N), generator=g, dtype=torch.int8)
    scale = ((0.5 + torch.rand(N, generator=g)) / (127.0 * 0.577 * K ** 0.5)).to(torch.float16)
    return (x.to(device), wq.to(device), scale.to(device))


CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 2048, "N": 11008, "K": 4096},
    {"M": 3000, "N": 14336, "K": 4096},
    {"M": 8192, "N": 5120, "K": 2880},
    {"M": 5000, "N": 3584, "K": 4000},
    {"M": 1536, "N": 8192, "K": 8192},
]
SMALL_CASES = [
    {"M": 40, "N": 72, "K": 96},
    {"M": 130, "N": 260, "K": 200},
]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    M, N, K = case["M"], case["N"], case["K"]
    return 2 * M * K + K * N + 2 * N + 2 * M * N


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


DTYPE_FLOPS = "fp16"
