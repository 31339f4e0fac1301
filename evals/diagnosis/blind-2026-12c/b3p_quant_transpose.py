import torch
import triton
import triton.language as tl


@triton.jit
def quant_transpose_kernel(x_ptr, scale_ptr, qt_ptr, M, N,
                           BLOCK_N: tl.constexpr):
    # qt[n, m] = clamp(round(x[m, n] / scale), -127, 127) as int8
    m = tl.program_id(0)
    inv_scale = 1.0 / tl.load(scale_ptr)
    for n0 in range(0, N, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        mask = offs_n < N
        x = tl.load(x_ptr + m * N + offs_n, mask=mask, other=0.0).to(tl.float32)
        q = tl.floor(x * inv_scale + 0.5)
        q = tl.minimum(tl.maximum(q, -127.0), 127.0)
        tl.store(qt_ptr + offs_n * M + m, q.to(tl.int8), mask=mask)


def entry(x, scale):
    M, N = x.shape
    qt = torch.empty((N, M), device=x.device, dtype=torch.int8)
    quant_transpose_kernel[(M,)](x, scale, qt, M, N, BLOCK_N=1024, num_warps=4)
    return qt


def reference(x, scale):
    inv = 1.0 / scale.float()
    q = torch.floor(x.float() * inv + 0.5).clamp(-127, 127)
    return q.to(torch.int8).t().contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N = case["m"], case["n"]
    x = torch.randn(M, N, generator=g) * 2.0
    scale = x.abs().amax() / 127.0
    return x.to(torch.bfloat16).to(device), scale.reshape(1).to(torch.float32).to(device)


CASES = [
    {"m": 8192, "n": 4096},
    {"m": 16384, "n": 5120},
    {"m": 6144, "n": 7168},
    {"m": 12000, "n": 4096},
    {"m": 4000, "n": 14336},
    {"m": 10240, "n": 3584},
]
SMALL_CASES = [{"m": 48, "n": 80}, {"m": 33, "n": 64}]
TOLERANCES = {"int8": (1, 0)}


def bytes_moved(case):
    return 3 * case["m"] * case["n"]


def flops(case):
    return 4 * case["m"] * case["n"]
