"""Multi-tensor copy of a list of bf16 gradients into one flat fp32 bucket, unscaled by 1/loss_scale (DDP-style bucketing); fixed: tl.multiple_of hints on the table-loaded pointer, offsets and element counts let loads and stores vectorize to 16 bytes."""
import torch
import triton
import triton.language as tl

CHUNK = 65536


@triton.jit
def flatten_kernel(src_ptrs, dst_ptr, numels, dst_offsets, chunk_tensor, chunk_start, inv_scale,
                   CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    t = tl.load(chunk_tensor + c)
    start = tl.multiple_of(tl.load(chunk_start + c), 2048)
    n = tl.multiple_of(tl.load(numels + t), 8)
    src = tl.load(src_ptrs + t).to(tl.pointer_type(tl.bfloat16))
    # allocations are 256-byte aligned and every bucket offset is a multiple of 8 elements
    src = tl.multiple_of(src, 16)
    dst = dst_ptr + tl.multiple_of(tl.load(dst_offsets + t), 8)
    for off in range(0, CHUNK, BLOCK):
        offs = start + off + tl.arange(0, BLOCK)
        mask = offs < n
        g = tl.load(src + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(dst + offs, g * inv_scale, mask=mask)


def _tables(grads):
    # one host-built int64 table, copied to the device once: [src_ptrs | numels | dst_offsets | chunk_t | chunk_s]
    numels = torch.tensor([t.numel() for t in grads], dtype=torch.int64)
    ptrs = torch.tensor([t.data_ptr() for t in grads], dtype=torch.int64)
    dst_off = torch.cumsum(numels, 0) - numels
    nchunks = (numels + CHUNK - 1) // CHUNK
    chunk_t = torch.repeat_interleave(torch.arange(len(grads)), nchunks)
    first = torch.cumsum(nchunks, 0) - nchunks
    chunk_s = (torch.arange(chunk_t.numel()) - first[chunk_t]) * CHUNK
    T, C = len(grads), chunk_t.numel()
    meta = torch.cat([ptrs, numels, dst_off, chunk_t, chunk_s]).to(grads[0].device)
    return (meta[:T], meta[T:2 * T], meta[2 * T:3 * T], meta[3 * T:3 * T + C], meta[3 * T + C:],
            int(numels.sum()))


def entry(grads, loss_scale=1024.0):
    src_ptrs, numels, dst_off, chunk_t, chunk_s, total = _tables(grads)
    assert all(g.numel() % 8 == 0 for g in grads), "bucket offsets must stay 32-byte aligned"
    out = torch.empty(total, device=grads[0].device, dtype=torch.float32)
    flatten_kernel[(chunk_t.numel(),)](src_ptrs, out, numels, dst_off, chunk_t, chunk_s, 1.0 / loss_scale,
                                       CHUNK=CHUNK, BLOCK=2048, num_warps=4)
    return out


def reference(grads, loss_scale=1024.0):
    return torch.cat([g.float().flatten() for g in grads]) * (1.0 / loss_scale)


def _shapes(case):
    L, D, F = case["L"], case["D"], case["F"]
    shapes = []
    for _ in range(L):
        shapes += [(D,), (3 * D, D), (D, D), (D,), (F, D), (F, D), (D, F)]
    return shapes


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    grads = [(1024.0 * torch.randn(*s, generator=g)).to(torch.bfloat16).to(device) for s in _shapes(case)]
    return [grads]


CASES = [
    {"L": 2, "D": 4096, "F": 11008},
    {"L": 4, "D": 2048, "F": 5632},
    {"L": 8, "D": 1024, "F": 2816},
    {"L": 3, "D": 2560, "F": 6912},
    {"L": 6, "D": 1536, "F": 4097},
]
SMALL_CASES = [{"L": 1, "D": 16, "F": 40}]


def _numel(case):
    n = 0
    for s in _shapes(case):
        k = 1
        for d in s:
            k *= d
        n += k
    return n


def bytes_moved(case):
    return 6 * _numel(case)


def flops(case):
    return _numel(case)
