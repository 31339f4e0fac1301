import torch
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["M", "stride_am", "stride_cm"])
def proj_kernel(a_ptr, w_ptr, c_ptr, M, N, K,
                stride_am, stride_wn, stride_cm,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                GROUP_M: tl.constexpr):
    # C[M, N] = A[M, K] @ W[N, K]^T with fp32 accumulation
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    w_ptrs = w_ptr + rn[None, :] * stride_wn + rk[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=rm[:, None] < M, other=0.0)
        w = tl.load(w_ptrs, mask=rn[None, :] < N, other=0.0)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def entry(x, weight):
    # x: [M, K] token activations; weight: [N, K]; returns x @ weight.T
    M, K = x.shape
    N = weight.shape[0]
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
    assert K % BLOCK_K == 0 and x.stride(1) == 1 and weight.stride(1) == 1
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    proj_kernel[grid](x, weight, out, M, N, K,
                      x.stride(0), weight.stride(0), out.stride(0),
                      BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                      num_warps=8, num_stages=3)
    return out


def reference(x, weight):
    return (x.float() @ weight.float().t()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, K, N = case["M"], case["K"], case["N"]
    x = torch.randn(M, K, generator=g, dtype=torch.float32).to(torch.float16)
    w = (torch.randn(N, K, generator=g, dtype=torch.float32) * (K ** -0.5)).to(torch.float16)
    return x.to(device), w.to(device)


CASES = [
    {"M": 4096, "K": 4096, "N": 4096},
    {"M": 2048, "K": 5120, "N": 13824},
    {"M": 3000, "K": 4096, "N": 14336},
    {"M": 6144, "K": 2048, "N": 8192},
    {"M": 1000, "K": 8192, "N": 7168},
    {"M": 5000, "K": 3584, "N": 3584},
]
SMALL_CASES = [{"M": 37, "K": 128, "N": 160}, {"M": 130, "K": 64, "N": 96}]
TOLERANCES = {"float16": (2e-2, 2e-2)}
DTYPE_FLOPS = "fp16"


def bytes_moved(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 2 * (M * K + N * K + M * N)


def flops(case):
    return 2 * case["M"] * case["K"] * case["N"]
