import torch, triton, triton.language as tl


@triton.jit
def pairwise_dist_kernel(x_ptr, y_ptr, out_ptr, M, N, D,
                         stride_xm, stride_yn, stride_om,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                         GROUP_M: tl.constexpr):
    # out[i, j] = || x[i] - y[j] ||_2  via  |x|^2 + |y|^2 - 2 x.y
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    gsize = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % gsize
    pid_n = (pid % group) // gsize

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rd = tl.arange(0, BLOCK_D)
    mmask = rm < M
    nmask = rn < N
    xy = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    xx = tl.zeros((BLOCK_M,), dtype=tl.float32)
    yy = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        dd = d0 + rd
        dmask = dd < D
        a = tl.load(x_ptr + rm[:, None] * stride_xm + dd[None, :],
                    mask=mmask[:, None] & dmask[None, :], other=0.0)
        b = tl.load(y_ptr + rn[None, :] * stride_yn + dd[:, None],
                    mask=nmask[None, :] & dmask[:, None], other=0.0)
        xy = tl.dot(a, b, xy, input_precision="tf32x3")
        xx += tl.sum(a * a, axis=1)
        yy += tl.sum(b * b, axis=0)
    d2 = xx[:, None] + yy[None, :] - 2.0 * xy
    dist = tl.sqrt(tl.maximum(d2, 0.0))
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :], dist,
             mask=mmask[:, None] & nmask[None, :])


def entry(x, y):
    M, D = x.shape
    N = y.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=torch.float32)
    BM, BN, BD = 128, 128, 32
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    pairwise_dist_kernel[grid](x, y, out, M, N, D, x.stride(0), y.stride(0), out.stride(0),
                               BLOCK_M=BM, BLOCK_N=BN, BLOCK_D=BD, GROUP_M=8,
                               num_warps=8, num_stages=3)
    return out


def reference(x, y):
    return torch.cdist(x.double(), y.double()).float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, D = case["M"], case["N"], case["D"]
    x = torch.randn(M, D, generator=g, dtype=torch.float32)
    y = torch.randn(N, D, generator=g, dtype=torch.float32)
    return x.to(device), y.to(device)


CASES = [
    {"M": 8192, "N": 8192, "D": 128},
    {"M": 4096, "N": 16384, "D": 256},
    {"M": 10000, "N": 6000, "D": 96},
    {"M": 2048, "N": 20000, "D": 512},
    {"M": 6000, "N": 7777, "D": 192},
]
SMALL_CASES = [{"M": 40, "N": 70, "D": 48}, {"M": 129, "N": 17, "D": 32}]
TOLERANCES = {"float32": (1e-3, 1e-4)}


def bytes_moved(case):
    M, N, D = case["M"], case["N"], case["D"]
    return 4 * (M * D + N * D + M * N)


def flops(case):
    return 2 * case["M"] * case["N"] * case["D"]


DTYPE_FLOPS = "fp32"
