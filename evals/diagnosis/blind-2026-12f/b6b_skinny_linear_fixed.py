import torch
import triton
import triton.language as tl


@triton.jit
def linear_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # C[M, N] = A[M, K] @ B[K, N], fp32 accumulation
    pid_m = tl.program_id(1)
    pid_n = tl.program_id(0)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=rm[:, None] < M, other=0.0)
        b = tl.load(b_ptrs, mask=rn[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def entry(x, weight):
    # x: [M, K] activations, weight: [N, K] (nn.Linear layout); returns x @ weight.T
    M, K = x.shape
    N = weight.shape[0]
    assert K % 128 == 0
    w_t = weight.t()
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 128
    grid = (triton.cdiv(N, BLOCK_N), triton.cdiv(M, BLOCK_M))
    linear_kernel[grid](x, w_t, out, M, N, K,
                        x.stride(0), x.stride(1), w_t.stride(0), w_t.stride(1),
                        out.stride(0), out.stride(1),
                        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                        num_warps=4, num_stages=4)
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
    {"M": 16, "K": 8192, "N": 8192},
    {"M": 32, "K": 4096, "N": 14336},
    {"M": 64, "K": 5120, "N": 13824},
    {"M": 24, "K": 5120, "N": 13824},
    {"M": 40, "K": 3584, "N": 18944},
    {"M": 8, "K": 7168, "N": 9216},
]
SMALL_CASES = [{"M": 5, "K": 256, "N": 96}, {"M": 17, "K": 128, "N": 64}]
TOLERANCES = {"float16": (2e-2, 2e-2)}
DTYPE_FLOPS = "fp16"


def bytes_moved(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 2 * (M * K + N * K + M * N)


def flops(case):
    return 2 * case["M"] * case["K"] * case["N"]
