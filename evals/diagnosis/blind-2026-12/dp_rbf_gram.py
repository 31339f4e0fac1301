"""Gaussian (RBF) kernel matrix K[i, j] = exp(-||x_i - y_j||^2 / (2 D)) between two fp32 point clouds, as used by GP / kernel-ridge solvers. Planted: the x.y cross-term tl.dot is pinned to input_precision="ieee", so it runs on FMA units instead of tensor cores."""
import torch
import triton
import triton.language as tl


@triton.jit
def _rbf_gram_kernel(
    X, Y, Out,
    N, M, D,
    stride_xn, stride_yn, stride_on,
    neg_gamma_log2e,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(N, BLOCK_M)
    num_pid_n = tl.cdiv(M, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    mask_m = offs_m < N
    mask_n = offs_n < M

    x_ptrs = X + offs_m[:, None] * stride_xn + offs_d[None, :]
    y_ptrs = Y + offs_n[:, None] * stride_yn + offs_d[None, :]

    xy = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    xx = tl.zeros((BLOCK_M,), dtype=tl.float32)
    yy = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        d_ok = offs_d < D - d0
        x = tl.load(x_ptrs, mask=mask_m[:, None] & d_ok[None, :], other=0.0)
        y = tl.load(y_ptrs, mask=mask_n[:, None] & d_ok[None, :], other=0.0)
        xx += tl.sum(x * x, axis=1)
        yy += tl.sum(y * y, axis=1)
        # the cross term cancels against the norms, keep it in full fp32
        xy = tl.dot(x, tl.trans(y), xy, input_precision="ieee")
        x_ptrs += BLOCK_D
        y_ptrs += BLOCK_D

    d2 = tl.maximum(xx[:, None] + yy[None, :] - 2.0 * xy, 0.0)
    k = tl.exp2(neg_gamma_log2e * d2)
    out_ptrs = Out + offs_m[:, None].to(tl.int64) * stride_on + offs_n[None, :]
    tl.store(out_ptrs, k, mask=mask_m[:, None] & mask_n[None, :])


def entry(x, y):
    N, D = x.shape
    M = y.shape[0]
    out = torch.empty((N, M), device=x.device, dtype=torch.float32)
    gamma = 1.0 / (2.0 * D)
    BLOCK_M, BLOCK_N, BLOCK_D = 128, 128, 32
    grid = (triton.cdiv(N, BLOCK_M) * triton.cdiv(M, BLOCK_N),)
    _rbf_gram_kernel[grid](
        x, y, out, N, M, D,
        x.stride(0), y.stride(0), out.stride(0),
        -gamma * 1.4426950408889634,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D, GROUP_M=8,
        num_warps=8, num_stages=3,
    )
    return out


def reference(x, y):
    D = x.shape[1]
    xd, yd = x.double(), y.double()
    d2 = (xd * xd).sum(1)[:, None] + (yd * yd).sum(1)[None, :] - 2.0 * (xd @ yd.T)
    return torch.exp(-d2.clamp_min(0.0) / (2.0 * D)).float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, M, D = case["N"], case["M"], case["D"]
    # a few clusters so the kernel values are spread out, not all ~exp(-1)
    centers = torch.randn(16, D, generator=g) * 0.75
    x = centers[torch.randint(0, 16, (N,), generator=g)] + torch.randn(N, D, generator=g) * 0.6
    y = centers[torch.randint(0, 16, (M,), generator=g)] + torch.randn(M, D, generator=g) * 0.6
    return x.float().contiguous().to(device), y.float().contiguous().to(device)


CASES = [
    {"N": 16384, "M": 16384, "D": 128},
    {"N": 12289, "M": 8191, "D": 256},
    {"N": 20000, "M": 6007, "D": 64},
    {"N": 4099, "M": 30011, "D": 96},
]
SMALL_CASES = [
    {"N": 70, "M": 45, "D": 40},
    {"N": 130, "M": 129, "D": 64},
]
TOLERANCES = {"float32": (2e-4, 1e-3)}


def bytes_moved(case):
    return 4 * (case["N"] * case["D"] + case["M"] * case["D"] + case["N"] * case["M"])


def flops(case):
    return 2 * case["N"] * case["M"] * case["D"] + 6 * case["N"] * case["M"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
