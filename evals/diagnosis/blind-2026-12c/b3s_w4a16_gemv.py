import torch, triton, triton.language as tl

GROUP = 128


@triton.jit
def dequant_int4_kernel(qw_ptr, scale_ptr, w_ptr, N, K,
                        GROUP: tl.constexpr, BLOCK_N: tl.constexpr):
    # w[n, k] = (nibble(n, k) - 8) * scale[n, k // GROUP]; low nibble holds the even k
    pid_n = tl.program_id(0)
    g = tl.program_id(1)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_p = tl.arange(0, GROUP // 2)
    n_mask = offs_n < N
    p = tl.load(qw_ptr + offs_n[:, None] * (K // 2) + g * (GROUP // 2) + offs_p[None, :],
                mask=n_mask[:, None], other=0)
    lo = (p & 0xF).to(tl.int32) - 8
    hi = (p >> 4).to(tl.int32) - 8
    q = tl.reshape(tl.join(lo, hi), (BLOCK_N, GROUP))
    s = tl.load(scale_ptr + offs_n * (K // GROUP) + g, mask=n_mask, other=0.0).to(tl.float32)
    w = q.to(tl.float32) * s[:, None]
    offs_k = g * GROUP + tl.arange(0, GROUP)
    tl.store(w_ptr + offs_n[:, None] * K + offs_k[None, :], w.to(w_ptr.dtype.element_ty),
             mask=n_mask[:, None])


@triton.jit
def gemv_kernel(w_ptr, x_ptr, out_ptr, N, K,
                BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # out[n] = sum_k w[n, k] * x[k]
    pid_n = tl.program_id(0)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < N
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        w = tl.load(w_ptr + offs_n[:, None] * K + offs_k[None, :], mask=n_mask[:, None], other=0.0)
        x = tl.load(x_ptr + offs_k)
        acc += tl.sum(w.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)
    tl.store(out_ptr + offs_n, acc.to(out_ptr.dtype.element_ty), mask=n_mask)


def entry(x, qweight, scales):
    # x: [K] bf16, qweight: [N, K // 2] uint8 (two int4 per byte), scales: [N, K // GROUP] bf16
    N = qweight.shape[0]
    K = x.shape[0]
    w = torch.empty((N, K), dtype=x.dtype, device=x.device)
    BN = 32
    dequant_int4_kernel[(triton.cdiv(N, BN), K // GROUP)](qweight, scales, w, N, K,
                                                         GROUP=GROUP, BLOCK_N=BN, num_warps=4)
    out = torch.empty((N,), dtype=x.dtype, device=x.device)
    BLOCK_N, BLOCK_K = 16, 256
    gemv_kernel[(triton.cdiv(N, BLOCK_N),)](w, x, out, N, K,
                                            BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4)
    return out


def reference(x, qweight, scales):
    N = qweight.shape[0]
    K = x.shape[0]
    lo = (qweight & 0xF).to(torch.int32) - 8
    hi = (qweight >> 4).to(torch.int32) - 8
    q = torch.stack([lo, hi], dim=-1).reshape(N, K).float()
    w = q * scales.float().repeat_interleave(GROUP, dim=1)
    return (w @ x.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, K = case["N"], case["K"]
    qweight = torch.randint(0, 256, (N, K // 2), generator=g, dtype=torch.int32).to(torch.uint8)
    scales = (torch.rand(N, K // GROUP, generator=g) * 0.02 + 0.005).to(torch.bfloat16)
    x = torch.randn(K, generator=g).to(torch.bfloat16)
    return x.to(device), qweight.to(device), scales.to(device)


CASES = [
    {"N": 28672, "K": 8192},
    {"N": 8192, "K": 28672},
    {"N": 57344, "K": 8192},
    {"N": 152064, "K": 3584},
    {"N": 36864, "K": 12288},
    {"N": 13824, "K": 5120},
]
SMALL_CASES = [{"N": 40, "K": 256}, {"N": 19, "K": 512}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    N, K = case["N"], case["K"]
    return N * K // 2 + N * (K // GROUP) * 2 + K * 2 + N * 2


def flops(case):
    return 2 * case["N"] * case["K"]
