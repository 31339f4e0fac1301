import torch, triton, triton.language as tl

# Dequantise an int8 weight matrix with a per-row scale and a per-column scale
# (e.g. SmoothQuant-style channel factors): w[m, n] = q[m, n] * row_scale[m] * col_scale[n] -> bf16


@triton.jit
def dequant_kernel(q_ptr, rs_ptr, cs_ptr, out_ptr, N, stride_q, stride_o, BLOCK_N: tl.constexpr):
    row = tl.program_id(1)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    q = tl.load(q_ptr + row * stride_q + cols, mask=mask, other=0).to(tl.float32)
    cs = tl.load(cs_ptr + cols, mask=mask, other=0.0)
    rs = tl.load(rs_ptr + row)
    w = q * (rs * cs)
    tl.store(out_ptr + row * stride_o + cols, w.to(out_ptr.dtype.element_ty), mask=mask)


def entry(q, row_scale, col_scale):
    M, N = q.shape
    out = torch.empty((M, N), device=q.device, dtype=torch.bfloat16)
    BLOCK_N = 2048
    dequant_kernel[(triton.cdiv(N, BLOCK_N), M)](q, row_scale, col_scale, out, N, q.stride(0), out.stride(0),
                                                 BLOCK_N=BLOCK_N, num_warps=4)
    return out


def reference(q, row_scale, col_scale):
    return (q.float() * row_scale[:, None] * col_scale[None, :]).to(torch.bfloat16)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N = case["M"], case["N"]
    w = torch.randn(M, N, generator=g)
    q = torch.clamp(torch.round(w * 40.0), -127, 127).to(torch.int8)
    row_scale = (torch.rand(M, generator=g) * 0.02 + 0.005).float()
    col_scale = (torch.randn(N, generator=g).abs() * 0.5 + 0.75).float()
    return q.to(device), row_scale.to(device), col_scale.to(device)


CASES = [
    {"M": 4096, "N": 11008},
    {"M": 14336, "N": 4096},
    {"M": 5120, "N": 13824},
    {"M": 8192, "N": 8192},
    {"M": 3000, "N": 12288},
    {"M": 28672, "N": 4096},
]
SMALL_CASES = [{"M": 9, "N": 300}, {"M": 4, "N": 1000}]
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}


def bytes_moved(case):
    M, N = case["M"], case["N"]
    return M * N * (1 + 2) + (M + N) * 4


def flops(case):
    return 2 * case["M"] * case["N"]
