import torch, triton, triton.language as tl


@triton.jit
def sqdist_kernel(x_ptr, y_ptr, out_ptr, M, N, D,
                  stride_xm, stride_yn, stride_om,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                  GROUP_M: tl.constexpr):
    # out[i, j] = ||x_i||^2 + ||y_j||^2 - 2 <x_i, y_j>, clamped at 0
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
    offs_d = tl.arange(0, BLOCK_D)
    mask_m = offs_m < M
    mask_n = offs_n < N
    xy = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    xx = tl.zeros((BLOCK_M,), dtype=tl.float32)
    yy = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        d_mask = (d0 + offs_d) < D
        x = tl.load(x_ptr + offs_m[:, None] * stride_xm + (d0 + offs_d)[None, :],
                    mask=mask_m[:, None] & d_mask[None, :], other=0.0)
        yt = tl.load(y_ptr + offs_n[None, :] * stride_yn + (d0 + offs_d)[:, None],
                     mask=d_mask[:, None] & mask_n[None, :], other=0.0)
        xy = tl.dot(x, yt, xy, input_precision="ieee")
        xx += tl.sum(x * x, axis=1)
        yy += tl.sum(yt * yt, axis=0)
    dist = xx[:, None] + yy[None, :] - 2.0 * xy
    dist = tl.maximum(dist, 0.0)
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :], dist,
             mask=mask_m[:, None] & mask_n[None, :])


def entry(x, y):
    M, D = x.shape
    N = y.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=torch.float32)
    BLOCK_M, BLOCK_N, BLOCK_D = 128, 128, 32
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    sqdist_kernel[grid](x, y, out, M, N, D, x.stride(0), y.stride(0), out.stride(0),
                        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D, GROUP_M=8,
                        num_warps=8, num_stages=3)
    return out


def reference(x, y):
    xd, yd = x.double(), y.double()
    d = (xd * xd).sum(1)[:, None] + (yd * yd).sum(1)[None, :] - 2.0 * (xd @ yd.t())
    return d.clamp_min(0).float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["D"], generator=g)
    y = torch.randn(case["N"], case["D"], generator=g)
    return x.to(device), y.to(device)


CASES = [
    {"M": 8192, "N": 8192, "D": 128},
    {"M": 16384, "N": 4096, "D": 256},
    {"M": 10000, "N": 10000, "D": 96},
    {"M": 4096, "N": 20000, "D": 512},
    {"M": 6000, "N": 12000, "D": 160},
]
SMALL_CASES = [{"M": 70, "N": 90, "D": 40}, {"M": 33, "N": 129, "D": 64}]
TOLERANCES = {"float32": (1e-3, 1e-4)}


def bytes_moved(case):
    M, N, D = case["M"], case["N"], case["D"]
    return 4 * (M * D + N * D + M * N)


def flops(case):
    return 2 * case["M"] * case["N"] * case["D"]


DTYPE_FLOPS = "tf32"
