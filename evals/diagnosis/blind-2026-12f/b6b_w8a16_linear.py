import torch
import triton
import triton.language as tl


@triton.jit
def w8a16_linear_kernel(x_ptr, q_ptr, s_ptr, out_ptr, M, N, K,
                        stride_xm, stride_qn, stride_om,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # out[m, n] = scale[n] * sum_k x[m, k] * q[n, k]   (int8 weight, per-output-channel scale)
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rm[:, None] * stride_xm + rk[None, :]
    q_ptrs = q_ptr + rn[:, None] * stride_qn + rk[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs, mask=rm[:, None] < M, other=0.0).to(tl.float32)
        q = tl.load(q_ptrs, mask=rn[:, None] < N, other=0).to(tl.float32)
        acc += tl.sum(x[:, None, :] * q[None, :, :], axis=2)
        x_ptrs += BLOCK_K
        q_ptrs += BLOCK_K
    s = tl.load(s_ptr + rn, mask=rn < N, other=0.0)
    out = acc * s[None, :]
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :], out.to(out_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def entry(x, qweight, scale):
    # x: fp16 [M, K]; qweight: int8 [N, K]; scale: fp32 [N]
    M, K = x.shape
    N = qweight.shape[0]
    BLOCK_M, BLOCK_N, BLOCK_K = 16, 64, 16
    assert K % BLOCK_K == 0
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(N, BLOCK_N), triton.cdiv(M, BLOCK_M))
    w8a16_linear_kernel[grid](x, qweight, scale, out, M, N, K,
                              x.stride(0), qweight.stride(0), out.stride(0),
                              BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                              num_warps=4)
    return out


def reference(x, qweight, scale):
    w = qweight.float() * scale.float()[:, None]
    return (x.float() @ w.t()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, K, N = case["M"], case["K"], case["N"]
    x = torch.randn(M, K, generator=g, dtype=torch.float32).to(torch.float16)
    w = torch.randn(N, K, generator=g, dtype=torch.float32) * (K ** -0.5)
    scale = w.abs().amax(dim=1) / 127.0
    q = torch.clamp(torch.round(w / scale[:, None]), -127, 127).to(torch.int8)
    return x.to(device), q.to(device), scale.to(device)


CASES = [
    {"M": 128, "K": 4096, "N": 11008},
    {"M": 64, "K": 8192, "N": 8192},
    {"M": 256, "K": 4096, "N": 4096},
    {"M": 96, "K": 5120, "N": 13824},
    {"M": 200, "K": 3584, "N": 18944},
    {"M": 48, "K": 7168, "N": 7168},
]
SMALL_CASES = [{"M": 5, "K": 64, "N": 96}, {"M": 20, "K": 128, "N": 70}]
TOLERANCES = {"float16": (2e-2, 2e-2)}
DTYPE_FLOPS = "fp16"


def bytes_moved(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 2 * M * K + N * K + 4 * N + 2 * M * N


def flops(case):
    return 2 * case["M"] * case["K"] * case["N"]
