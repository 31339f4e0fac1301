import torch, triton, triton.language as tl


@triton.jit
def w4a16_gemv_kernel(x_ptr, qw_ptr, scale_ptr, y_ptr, N, K, stride_qn,
                      GROUP: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # y[n] = sum_k x[k] * (q[n, k] - 8) * scale[n, k // GROUP]
    # q is 4-bit, two values per byte along k (low nibble = even k)
    pid = tl.program_id(0)
    offs_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < N
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        x = tl.load(x_ptr + k).to(tl.float32)
        packed = tl.load(qw_ptr + offs_n[:, None] * stride_qn + (k // 2)[None, :],
                         mask=n_mask[:, None], other=0)
        shift = ((k % 2) * 4).to(tl.uint8)
        q = ((packed.to(tl.uint8) >> shift[None, :]) & 0xF).to(tl.float32) - 8.0
        s = tl.load(scale_ptr + offs_n[:, None] * (K // GROUP) + (k0 // GROUP),
                    mask=n_mask[:, None], other=0.0).to(tl.float32)
        acc += tl.sum(q * s * x[None, :], axis=1)
    tl.store(y_ptr + offs_n, acc.to(y_ptr.dtype.element_ty), mask=n_mask)


def entry(x, qweight, scales):
    N = qweight.shape[0]
    K = x.shape[0]
    group = K // scales.shape[1]
    y = torch.empty((N,), device=x.device, dtype=x.dtype)
    BLOCK_N, BLOCK_K = 16, 128
    w4a16_gemv_kernel[(triton.cdiv(N, BLOCK_N),)](x, qweight, scales, y, N, K, qweight.stride(0),
                                                 GROUP=group, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                                                 num_warps=4)
    return y


def reference(x, qweight, scales):
    N = qweight.shape[0]
    K = x.shape[0]
    group = K // scales.shape[1]
    p = qweight.to(torch.int32) & 0xFF
    q = torch.stack([p & 0xF, (p >> 4) & 0xF], dim=-1).reshape(N, K).float() - 8.0
    w = q * scales.float().repeat_interleave(group, dim=1)
    return (w @ x.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, K, G = case["N"], case["K"], case["group"]
    x = torch.randn((K,), generator=g, dtype=torch.float32).to(torch.bfloat16)
    qweight = torch.randint(-128, 128, (N, K // 2), generator=g, dtype=torch.int32).to(torch.int8)
    scales = (torch.rand((N, K // G), generator=g, dtype=torch.float32) * 0.02 + 0.005).to(torch.bfloat16)
    return x.to(device), qweight.to(device), scales.to(device)


CASES = [
    {"N": 16384, "K": 16384, "group": 128},
    {"N": 28672, "K": 8192, "group": 128},
    {"N": 8192, "K": 28672, "group": 128},
    {"N": 13824, "K": 5120, "group": 128},
    {"N": 22016, "K": 11008, "group": 128},
    {"N": 10000, "K": 14336, "group": 128},
]
SMALL_CASES = [{"N": 40, "K": 256, "group": 128}, {"N": 17, "K": 512, "group": 128}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    N, K, G = case["N"], case["K"], case["group"]
    return N * K // 2 + 2 * N * (K // G) + 2 * K + 2 * N


def flops(case):
    return 2 * case["N"] * case["K"]
