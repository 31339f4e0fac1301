import torch, triton, triton.language as tl

GROUP = 128


@triton.jit
def w4a16_gemv_kernel(qw_ptr, scale_ptr, x_ptr, out_ptr, N, K,
                      GROUP: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # out[n] = sum_k (nibble(n, k) - 8) * scale[n, k // GROUP] * x[k]; low nibble holds the even k
    NG: tl.constexpr = BLOCK_K // GROUP
    HALF: tl.constexpr = GROUP // 2
    pid_n = tl.program_id(0)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < N
    offs_g = tl.arange(0, NG)
    offs_j = tl.arange(0, HALF)
    # packed byte (g, j) of a tile holds k = 2 * (g * HALF + j) and k + 1
    pk = offs_g[:, None] * HALF + offs_j[None, :]
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        p = tl.load(qw_ptr + offs_n[:, None, None] * (K // 2) + k0 // 2 + pk[None, :, :],
                    mask=n_mask[:, None, None], other=0)
        lo = ((p & 0xF).to(tl.int32) - 8).to(tl.float32)
        hi = ((p >> 4).to(tl.int32) - 8).to(tl.float32)
        x_even = tl.load(x_ptr + k0 + 2 * pk).to(tl.float32)
        x_odd = tl.load(x_ptr + k0 + 2 * pk + 1).to(tl.float32)
        part = tl.sum(lo * x_even[None, :, :] + hi * x_odd[None, :, :], axis=2)
        s = tl.load(scale_ptr + offs_n[:, None] * (K // GROUP) + k0 // GROUP + offs_g[None, :],
                    mask=n_mask[:, None], other=0.0).to(tl.float32)
        acc += tl.sum(part * s, axis=1)
    tl.store(out_ptr + offs_n, acc.to(out_ptr.dtype.element_ty), mask=n_mask)


def entry(x, qweight, scales):
    # x: [K] bf16, qweight: [N, K // 2] uint8 (two int4 per byte), scales: [N, K // GROUP] bf16
    N = qweight.shape[0]
    K = x.shape[0]
    out = torch.empty((N,), dtype=x.dtype, device=x.device)
    BLOCK_N = 16
    BLOCK_K = next(b for b in (512, 256, 128) if K % b == 0)
    w4a16_gemv_kernel[(triton.cdiv(N, BLOCK_N),)](qweight, scales, x, out, N, K,
                                                  GROUP=GROUP, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                                                  num_warps=4)
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
