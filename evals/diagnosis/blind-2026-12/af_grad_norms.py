"""Per-parameter L2 norms of a transformer's fp32 gradients (e.g. LAMB/LARS trust ratios, grad-norm logging). Planted: one sum-of-squares kernel launch per parameter tensor, so hundreds of tiny launches for biases and LayerNorm weights."""
import torch
import triton
import triton.language as tl


@triton.jit
def _sumsq_kernel(G, SQ, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(pid * BLOCK, n, nprog * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(G + offs, mask=offs < n, other=0.0)
        acc += x * x
    tl.atomic_add(SQ, tl.sum(acc, axis=0))


@triton.jit
def _sqrt_kernel(SQ, OUT, T, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < T
    tl.store(OUT + offs, tl.sqrt(tl.load(SQ + offs, mask=m, other=0.0)), mask=m)


def _num_sms(device):
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4


def entry(*grads):
    T = len(grads)
    device = grads[0].device
    sq = torch.zeros(T, device=device, dtype=torch.float32)
    BLOCK = 4096
    max_programs = 4 * _num_sms(device)
    for i, g in enumerate(grads):
        n = g.numel()
        grid = (min(triton.cdiv(n, BLOCK), max_programs),)
        _sumsq_kernel[grid](g, sq[i:], n, BLOCK=BLOCK, num_warps=8)
    out = torch.empty(T, device=device, dtype=torch.float32)
    _sqrt_kernel[(triton.cdiv(T, 1024),)](sq, out, T, BLOCK=1024, num_warps=4)
    return out


def reference(*grads):
    return torch.stack([g.float().norm() for g in grads])


def _param_shapes(case):
    d, f, L = case["d"], case["ffn"], case["layers"]
    shapes = []
    for _ in range(L):
        shapes += [(3 * d, d), (3 * d,), (d, d), (d,), (d,), (d,),
                   (f, d), (f,), (d, f), (d,), (d,), (d,)]
    shapes += [(d,), (d,)]
    return shapes


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    grads = []
    for shape in _param_shapes(case):
        scale = 10.0 ** (-3.0 + 2.0 * torch.rand((), generator=g).item())
        grads.append((torch.randn(shape, generator=g) * scale).to(device))
    return tuple(grads)


CASES = [
    {"layers": 24, "d": 1024, "ffn": 4096},
    {"layers": 32, "d": 768, "ffn": 3072},
    {"layers": 48, "d": 512, "ffn": 2048},
    {"layers": 12, "d": 1536, "ffn": 6144},
]

SMALL_CASES = [
    {"layers": 2, "d": 64, "ffn": 256},
    {"layers": 1, "d": 40, "ffn": 100},
]

TOLERANCES = {"float32": (1e-5, 1e-4)}


def bytes_moved(case):
    n = 0
    for s in _param_shapes(case):
        k = 1
        for v in s:
            k *= v
        n += k
    return 4 * n + 4 * len(_param_shapes(case))


def flops(case):
    return bytes_moved(case) // 2

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
