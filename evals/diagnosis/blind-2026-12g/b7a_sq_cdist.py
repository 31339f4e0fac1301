import torch, triton, triton.language as tl


# Squared euclidean distances between points and centroids (k-means / retrieval):
#   dist[i, j] = |x_i|^2 + |c_j|^2 - 2 <x_i, c_j>

@triton.jit
def _sq_dist_kernel(x_ptr, c_ptr, out_ptr, N, K, D,
                    stride_xn, stride_ck, stride_on,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                    GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(N, BLOCK_M)
    num_pid_n = tl.cdiv(K, BLOCK_N)
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
    mask_n = offs_n < K

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    xx = tl.zeros((BLOCK_M,), dtype=tl.float32)
    cc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        dd = d0 + offs_d
        mask_d = dd < D
        x = tl.load(x_ptr + offs_m[:, None] * stride_xn + dd[None, :],
                    mask=mask_m[:, None] & mask_d[None, :], other=0.0)
        ct = tl.load(c_ptr + offs_n[None, :] * stride_ck + dd[:, None],
                     mask=mask_d[:, None] & mask_n[None, :], other=0.0)
        acc = tl.dot(x, ct, acc, input_precision="ieee")
        xx += tl.sum(x * x, axis=1)
        cc += tl.sum(ct * ct, axis=0)

    dist = xx[:, None] + cc[None, :] - 2.0 * acc
    dist = tl.maximum(dist, 0.0)
    tl.store(out_ptr + offs_m[:, None] * stride_on + offs_n[None, :], dist,
             mask=mask_m[:, None] & mask_n[None, :])


def entry(x, centroids):
    N, D = x.shape
    K = centroids.shape[0]
    out = torch.empty((N, K), device=x.device, dtype=torch.float32)
    BLOCK_M, BLOCK_N, BLOCK_D = 128, 128, 32
    grid = (triton.cdiv(N, BLOCK_M) * triton.cdiv(K, BLOCK_N),)
    _sq_dist_kernel[grid](x, centroids, out, N, K, D,
                          x.stride(0), centroids.stride(0), out.stride(0),
                          BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D, GROUP_M=8,
                          num_warps=8, num_stages=3)
    return out


def reference(x, centroids):
    x64 = x.double()
    c64 = centroids.double()
    d = (x64 * x64).sum(1)[:, None] + (c64 * c64).sum(1)[None, :] - 2.0 * (x64 @ c64.t())
    return d.clamp_min(0.0).float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["N"], case["D"], generator=g)
    c = torch.randn(case["K"], case["D"], generator=g)
    return x.to(device), c.to(device)


CASES = [
    {"N": 16384, "K": 4096, "D": 128},
    {"N": 20000, "K": 3000, "D": 256},
    {"N": 65536, "K": 1024, "D": 64},
    {"N": 8192, "K": 8192, "D": 96},
    {"N": 30000, "K": 5000, "D": 128},
]
SMALL_CASES = [{"N": 70, "K": 50, "D": 40}, {"N": 33, "K": 130, "D": 16}]
TOLERANCES = {"float32": (1e-2, 1e-3)}


def bytes_moved(case):
    N, K, D = case["N"], case["K"], case["D"]
    return 4 * (N * D + K * D + N * K)


def flops(case):
    return 2 * case["N"] * case["K"] * case["D"]


