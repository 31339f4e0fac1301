import torch, triton, triton.language as tl

# Int8 quantization of an activation with a per-tensor scale, producing both the
# row-major copy (for the forward GEMM) and the transposed copy (for the
# weight-gradient GEMM). Rounds half up, saturates to [-127, 127].

QMAX = 127.0


@triton.jit
def _cast_transpose_kernel(x_ptr, scale_ptr, out_ptr, out_t_ptr, M, N,
                           stride_xm, stride_om, stride_tn,
                           QMAX: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    pid_n = tl.program_id(1)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    s = tl.load(scale_ptr)
    x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=0.0).to(tl.float32)
    q = tl.clamp(tl.floor(x * s + 0.5), -QMAX, QMAX).to(tl.int8)
    tl.store(out_ptr + row * stride_om + cols, q, mask=mask)
    tl.store(out_t_ptr + cols * stride_tn + row, q, mask=mask)


def entry(x, scale):
    M, N = x.shape
    out = torch.empty((M, N), device=x.device, dtype=torch.int8)
    out_t = torch.empty((N, M), device=x.device, dtype=torch.int8)
    BLOCK_N = 1024
    grid = (M, triton.cdiv(N, BLOCK_N))
    _cast_transpose_kernel[grid](x, scale, out, out_t, M, N,
                                 x.stride(0), out.stride(0), out_t.stride(0),
                                 QMAX=QMAX, BLOCK_N=BLOCK_N, num_warps=4)
    return out, out_t


def reference(x, scale):
    q = torch.floor(x.float() * scale + 0.5).clamp(-QMAX, QMAX).to(torch.int8)
    return q, q.t().contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g, dtype=torch.float32) * 2.0
    scale = torch.full((1,), 2.0 ** int(torch.randint(3, 6, (1,), generator=g)), dtype=torch.float32)
    return (x.to(torch.bfloat16).to(device), scale.to(device))


CASES = [
    {"M": 8192, "N": 8192},
    {"M": 16384, "N": 4096},
    {"M": 4096, "N": 14336},
    {"M": 6000, "N": 5120},
    {"M": 12288, "N": 3000},
    {"M": 24576, "N": 2048},
]
SMALL_CASES = [{"M": 48, "N": 80}, {"M": 33, "N": 130}]


def bytes_moved(case):
    return case["M"] * case["N"] * (2 + 1 + 1)


def flops(case):
    return 2 * case["M"] * case["N"]
