import torch, triton, triton.language as tl


@triton.jit
def attn_scores_kernel(q_ptr, k_ptr, s_ptr, M, N, scale,
                       stride_qb, stride_qm, stride_kb, stride_kn, stride_sb, stride_sm,
                       HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_D: tl.constexpr):
    # s[b, m, n] = scale * sum_d q[b, m, d] * k[b, n, d]
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    bh = tl.program_id(2)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rd = tl.arange(0, BLOCK_D)
    q_base = q_ptr + bh * stride_qb
    k_base = k_ptr + bh * stride_kb
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for d0 in range(0, HEAD_DIM, BLOCK_D):
        q = tl.load(q_base + rm[:, None] * stride_qm + (d0 + rd)[None, :],
                    mask=rm[:, None] < M, other=0.0)
        k = tl.load(k_base + rn[:, None] * stride_kn + (d0 + rd)[None, :],
                    mask=rn[:, None] < N, other=0.0)
        acc += tl.dot(q, tl.trans(k))
    acc = acc * scale
    s_ptrs = s_ptr + bh * stride_sb + rm[:, None] * stride_sm + rn[None, :]
    tl.store(s_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def entry(q, k):
    B, H, M, D = q.shape
    N = k.shape[2]
    qf = q.reshape(B * H, M, D)
    kf = k.reshape(B * H, N, D)
    s = torch.empty((B, H, M, N), device=q.device, dtype=torch.float32)
    sf = s.view(B * H, M, N)
    BM, BN = 32, 32
    grid = (triton.cdiv(N, BN), triton.cdiv(M, BM), B * H)
    attn_scores_kernel[grid](qf, kf, sf, M, N, D ** -0.5,
                             qf.stride(0), qf.stride(1), kf.stride(0), kf.stride(1),
                             sf.stride(0), sf.stride(1),
                             HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN, BLOCK_D=16, num_warps=4)
    return s


def reference(q, k):
    D = q.shape[-1]
    return torch.matmul(q.float(), k.float().transpose(-1, -2)) * (D ** -0.5)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, H, M, N, D = case["B"], case["H"], case["M"], case["N"], case["D"]
    q = torch.randn(B, H, M, D, generator=g).to(torch.float16)
    k = torch.randn(B, H, N, D, generator=g).to(torch.float16)
    return q.to(device), k.to(device)


CASES = [
    {"B": 4, "H": 16, "M": 1024, "N": 1024, "D": 64},
    {"B": 2, "H": 32, "M": 1000, "N": 1000, "D": 128},
    {"B": 8, "H": 8, "M": 512, "N": 1536, "D": 64},
    {"B": 1, "H": 40, "M": 777, "N": 2049, "D": 128},
    {"B": 3, "H": 12, "M": 2048, "N": 640, "D": 64},
]
SMALL_CASES = [{"B": 1, "H": 2, "M": 40, "N": 36, "D": 16}, {"B": 2, "H": 1, "M": 17, "N": 70, "D": 32}]
TOLERANCES = {"float32": (1e-3, 1e-3)}


def bytes_moved(case):
    B, H, M, N, D = case["B"], case["H"], case["M"], case["N"], case["D"]
    return B * H * (2 * M * D + 2 * N * D + 4 * M * N)


def flops(case):
    return 2 * case["B"] * case["H"] * case["M"] * case["N"] * case["D"]


DTYPE_FLOPS = "fp16"
