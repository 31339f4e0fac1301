import torch, triton, triton.language as tl


@triton.jit
def lse_chunk_kernel(x_ptr, pm_ptr, ps_ptr, L, stride, NCHUNK,
                     CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    # running (max, sum of exp) of one chunk of a row
    chunk = tl.program_id(0)
    row = tl.program_id(1)
    base = x_ptr + row * stride
    m = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(chunk * CHUNK, chunk * CHUNK + CHUNK, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(base + offs, mask=offs < L, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.where(x == float("-inf"), 0.0, tl.exp(x - m_new))
        m = tl.where(m_new == float("-inf"), m, m_new)
    cm = tl.max(m, axis=0)
    cs = tl.sum(s * tl.exp(m - cm), axis=0)
    tl.store(pm_ptr + row * NCHUNK + chunk, cm)
    tl.store(ps_ptr + row * NCHUNK + chunk, cs)


@triton.jit
def lse_merge_kernel(pm_ptr, ps_ptr, out_ptr, NCHUNK, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, NCHUNK, BLOCK):
        idx = c0 + tl.arange(0, BLOCK)
        msk = idx < NCHUNK
        cm = tl.load(pm_ptr + row * NCHUNK + idx, mask=msk, other=float("-inf"))
        cs = tl.load(ps_ptr + row * NCHUNK + idx, mask=msk, other=0.0)
        m_new = tl.maximum(m, cm)
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - m_safe) + cs * tl.exp(cm - m_safe)
        m = m_new
    m_tot = tl.max(m, axis=0)
    s_tot = tl.sum(s * tl.exp(m - m_tot), axis=0)
    tl.store(out_ptr + row, m_tot + tl.log(s_tot))


def entry(scores):
    # scores: [B, L] similarity logits against a large bank; returns logsumexp per row
    B, L = scores.shape
    CHUNK, BLOCK = 32768, 4096
    nchunk = triton.cdiv(L, CHUNK)
    pm = torch.empty((B, nchunk), dtype=torch.float32, device=scores.device)
    ps = torch.empty((B, nchunk), dtype=torch.float32, device=scores.device)
    lse_chunk_kernel[(nchunk, B)](scores, pm, ps, L, scores.stride(0), nchunk,
                                  CHUNK=CHUNK, BLOCK=BLOCK, num_warps=8)
    out = torch.empty((B,), dtype=torch.float32, device=scores.device)
    lse_merge_kernel[(B,)](pm, ps, out, nchunk, BLOCK=128, num_warps=4)
    return out


def reference(scores):
    return torch.logsumexp(scores.float(), dim=1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(case["B"], case["L"], generator=g) * 3.0).to(torch.bfloat16)
    return (x.to(device),)


CASES = [
    {"B": 16, "L": 4 * 1024 * 1024},
    {"B": 64, "L": 1 << 20},
    {"B": 8, "L": 6_000_007},
    {"B": 32, "L": 2_500_000},
    {"B": 128, "L": 400_000},
    {"B": 5, "L": 12_345_678},
]
SMALL_CASES = [{"B": 3, "L": 70000}, {"B": 2, "L": 5000}]
TOLERANCES = {"float32": (1e-3, 1e-4)}


def bytes_moved(case):
    return case["B"] * case["L"] * 2 + case["B"] * 4


def flops(case):
    return 4 * case["B"] * case["L"]
