import torch, triton, triton.language as tl


@triton.jit
def cast_transpose_kernel(x_ptr, scale_ptr, out_ptr, M, N, BLOCK_N: tl.constexpr):
    # out[n, m] = bf16(x[m, n] * scale)
    m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = offs_n < N
    s = tl.load(scale_ptr)
    x = tl.load(x_ptr + m * N + offs_n, mask=mask, other=0.0)
    y = (x * s).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs_n * M + m, y, mask=mask)


def entry(x, scale):
    # x: fp32 master weight [M, N]; returns the scaled bf16 copy of x^T, [N, M]
    M, N = x.shape
    out = torch.empty((N, M), dtype=torch.bfloat16, device=x.device)
    BLOCK_N = 1024
    cast_transpose_kernel[(M, triton.cdiv(N, BLOCK_N))](x, scale, out, M, N,
                                                       BLOCK_N=BLOCK_N, num_warps=4)
    return out


def reference(x, scale):
    return (x * scale).t().contiguous().to(torch.bfloat16)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g)
    scale = (1.0 + 0.5 * torch.rand(1, generator=g)).float()
    return x.to(device), scale.to(device)


CASES = [
    {"M": 4096, "N": 4096},
    {"M": 8192, "N": 3072},
    {"M": 5120, "N": 13824},
    {"M": 4096, "N": 11008},
    {"M": 14336, "N": 4096},
    {"M": 6144, "N": 5120},
]
SMALL_CASES = [{"M": 48, "N": 80}, {"M": 64, "N": 200}]
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}


def bytes_moved(case):
    return case["M"] * case["N"] * (4 + 2) + 4


def flops(case):
    return case["M"] * case["N"]
