import torch, triton, triton.language as tl

# SwiGLU activation on the fused gate/up projection output:
#   h = [gate | up]  (shape [M, 2*N]),  out = silu(gate) * up   (shape [M, N])


@triton.jit
def swiglu_kernel(g_ptr, u_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(g_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(u_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = g * tl.sigmoid(g) * u
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def entry(h):
    gate, up = h.chunk(2, dim=-1)
    gate = gate.contiguous()
    up = up.contiguous()
    out = torch.empty_like(gate)
    n = out.numel()
    BLOCK = 1024
    swiglu_kernel[(triton.cdiv(n, BLOCK),)](gate, up, out, n, BLOCK=BLOCK, num_warps=4)
    return out


def reference(h):
    g, u = h.float().chunk(2, dim=-1)
    return (torch.nn.functional.silu(g) * u).to(h.dtype)


def make_inputs(case, device, seed):
    gen = torch.Generator().manual_seed(seed)
    h = torch.randn(case["M"], 2 * case["N"], generator=gen, dtype=torch.float32).to(torch.bfloat16)
    return (h.to(device),)


CASES = [
    {"M": 4096, "N": 11008},
    {"M": 8192, "N": 14336},
    {"M": 3000, "N": 13824},
    {"M": 6144, "N": 5632},
    {"M": 2048, "N": 28672},
    {"M": 10000, "N": 4864},
]
SMALL_CASES = [{"M": 7, "N": 48}, {"M": 12, "N": 80}]
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}


def bytes_moved(case):
    return case["M"] * case["N"] * 2 * 3


def flops(case):
    return 5 * case["M"] * case["N"]
