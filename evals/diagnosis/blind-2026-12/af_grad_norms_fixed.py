"""Per-parameter L2 norms of a transformer's fp32 gradients (e.g. LAMB/LARS trust ratios, grad-norm logging). Planted: one sum-of-squares kernel launch per parameter tensor, so hundreds of tiny launches for biases and LayerNorm weights."""
import torch
import triton
import triton.language as tl


@triton.jit
def _multi_tensor_sumsq_kernel(ADDRS, NUMELS, CHUNK_TENSOR, CHUNK_START, SQ,
                               CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    # multi-tensor apply: one launch, each program handles one CHUNK of one
    # tensor, looked up in a (tensor id, start) table
    pid = tl.program_id(0)
    t = tl.load(CHUNK_TENSOR + pid)
    start = tl.load(CHUNK_START + pid)
    n = tl.load(NUMELS + t)
    ptr = tl.load(ADDRS + t).to(tl.pointer_type(tl.float32))
    end = tl.minimum(start + CHUNK, n)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(start, end, BLOCK):
        offs = off + tl.arange(0, BLOCK)
        x = tl.load(ptr + offs, mask=offs < end, other=0.0)
        acc += x * x
    tl.atomic_add(SQ + t, tl.sum(acc, axis=0))


@triton.jit
def _sqrt_kernel(SQ, OUT, T, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < T
    tl.store(OUT + offs, tl.sqrt(tl.load(SQ + offs, mask=m, other=0.0)), mask=m)


_META_CACHE = {}
_CHUNK = 65536


def _chunk_tables(grads, device):
    key = tuple((g.data_ptr(), g.numel()) for g in grads)
    meta = _META_CACHE.get(key)
    if meta is None:
        chunk_tensor, chunk_start = [], []
        for i, g in enumerate(grads):
            for s in range(0, g.numel(), _CHUNK):
                chunk_tensor.append(i)
                chunk_start.append(s)
        meta = (
            torch.tensor([g.data_ptr() for g in grads], dtype=torch.int64).to(device),
            torch.tensor([g.numel() for g in grads], dtype=torch.int64).to(device),
            torch.tensor(chunk_tensor, dtype=torch.int32).to(device),
            torch.tensor(chunk_start, dtype=torch.int64).to(device),
        )
        _META_CACHE[key] = meta
    return meta


def entry(*grads):
    T = len(grads)
    device = grads[0].device
    assert all(g.dtype == torch.float32 and g.is_contiguous() for g in grads)
    addrs, numels, chunk_tensor, chunk_start = _chunk_tables(grads, device)
    sq = torch.zeros(T, device=device, dtype=torch.float32)
    _multi_tensor_sumsq_kernel[(chunk_tensor.numel(),)](
        addrs, numels, chunk_tensor, chunk_start, sq, CHUNK=_CHUNK, BLOCK=4096, num_warps=8,
    )
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
