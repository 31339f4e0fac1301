import torch, triton, triton.language as tl


# Squared Euclidean distances between points and centroids (k-means assignment step):
#   d[i, j] = |x_i|^2 + |c_j|^2 - 2 <x_i, c_j>
@triton.jit
def _sqdist_kernel(x_ptr, c_ptr, out_ptr, M, N, D,
                   stride_xm, stride_cn, stride_om,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                   GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    mask_m = offs_m < M
    mask_n = offs_n < N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    x_sq = tl.zeros((BLOCK_M,), dtype=tl.float32)
    c_sq = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        dd = d0 + offs_d
        mask_d = dd < D
        x = tl.load(x_ptr + offs_m[:, None] * stride_xm + dd[None, :],
                    mask=mask_m[:, None] & mask_d[None, :], other=0.0)
        # centroid tile loaded as [BLOCK_D, BLOCK_N] (c^T)
        c = tl.load(c_ptr + offs_n[None, :] * stride_cn + dd[:, None],
                    mask=mask_n[None, :] & mask_d[:, None], other=0.0)
        acc = tl.dot(x, c, acc)
        x_sq += tl.sum(x * x, axis=1)
        c_sq += tl.sum(c * c, axis=0)

    dist = x_sq[:, None] + c_sq[None, :] - 2.0 * acc
    dist = tl.maximum(dist, 0.0)
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :], dist,
             mask=mask_m[:, None] & mask_n[None, :])


def entry(x, centroids):
    M, D = x.shape
    N = centroids.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=torch.float32)
    BLOCK_M, BLOCK_N, BLOCK_D = 128, 128, 32
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _sqdist_kernel[grid](x, centroids, out, M, N, D,
                         x.stride(0), centroids.stride(0), out.stride(0),
                         BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D, GROUP_M=8,
                         num_warps=8, num_stages=2)
    return out


def reference(x, centroids):
    xd = x.double()
    cd = centroids.double()
    d = (xd * xd).sum(1)[:, None] + (cd * cd).sum(1)[None, :] - 2.0 * (xd @ cd.t())
    return d.clamp_min(0.0).float()


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(case["M"], case["D"], generator=g, dtype=torch.float32)
    c = torch.randn(case["N"], case["D"], generator=g, dtype=torch.float32)
    return x.to(device), c.to(device)


CASES = [
    {"M": 65536, "N": 1024, "D": 256},
    {"M": 50000, "N": 2048, "D": 128},
    {"M": 100000, "N": 1200, "D": 192},
    {"M": 32768, "N": 4096, "D": 512},
    {"M": 20011, "N": 2800, "D": 320},
    {"M": 131072, "N": 512, "D": 96},
]
SMALL_CASES = [{"M": 100, "N": 70, "D": 40}, {"M": 64, "N": 130, "D": 32}]
TOLERANCES = {"float32": (1e-2, 1e-3)}


def bytes_moved(case):
    M, N, D = case["M"], case["N"], case["D"]
    return 4 * (M * D + N * D + M * N)


def flops(case):
    M, N, D = case["M"], case["N"], case["D"]
    return 2 * M * N * D + 3 * M * N


DTYPE_FLOPS = "tf32"
