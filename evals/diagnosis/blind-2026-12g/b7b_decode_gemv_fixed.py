import torch, triton, triton.language as tl


@triton.jit
def gemv_kernel(x_ptr, w_ptr, b_ptr, y_ptr, K, N,
                BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    # y[n] = sum_k w[n, k] * x[k] + b[n], w is [N, K] row-major
    pid = tl.program_id(0)
    offs_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_n = offs_n < N
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        mask_k = offs_k < K
        x = tl.load(x_ptr + offs_k, mask=mask_k, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs_n[:, None] * K + offs_k[None, :],
                    mask=mask_n[:, None] & mask_k[None, :], other=0.0).to(tl.float32)
        acc += tl.sum(w * x[None, :], axis=1)
    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs_n, (acc + bias).to(y_ptr.dtype.element_ty), mask=mask_n)


def entry(x, weight, bias):
    # single-token decode projection: x [K], weight [N, K] (nn.Linear layout), bias [N]
    N, K = weight.shape
    y = torch.empty(N, dtype=x.dtype, device=x.device)
    BLOCK_N, BLOCK_K = 32, 256
    gemv_kernel[(triton.cdiv(N, BLOCK_N),)](x, weight, bias, y, K, N,
                                             BLOCK_K=BLOCK_K, BLOCK_N=BLOCK_N, num_warps=4)
    return y


def reference(x, weight, bias):
    return (weight.float() @ x.float() + bias.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, K = case["N"], case["K"]
    x = torch.randn(K, generator=g).to(torch.bfloat16)
    w = (torch.randn(N, K, generator=g) / K ** 0.5).to(torch.bfloat16)
    b = (torch.randn(N, generator=g) * 0.1).to(torch.bfloat16)
    return x.to(device), w.to(device), b.to(device)


CASES = [
    {"N": 8192, "K": 8192},
    {"N": 14336, "K": 4096},
    {"N": 4096, "K": 14336},
    {"N": 13824, "K": 5120},
    {"N": 10240, "K": 8192},
    {"N": 28672, "K": 4096},
]
SMALL_CASES = [{"N": 96, "K": 300}, {"N": 200, "K": 512}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    N, K = case["N"], case["K"]
    return 2 * (N * K + K + 2 * N)


def flops(case):
    return 2 * case["N"] * case["K"]
