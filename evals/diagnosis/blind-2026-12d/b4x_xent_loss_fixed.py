import torch, triton, triton.language as tl


@triton.jit
def xent_fwd_kernel(logits_ptr, labels_ptr, loss_ptr, lse_ptr, V, stride_row,
                    BLOCK_V: tl.constexpr):
    # per-row cross entropy: logsumexp(logits) - logits[label], online over vocab chunks
    row = tl.program_id(0)
    base = logits_ptr + row.to(tl.int64) * stride_row
    offs = tl.arange(0, BLOCK_V)
    m = tl.full((BLOCK_V,), float("-inf"), tl.float32)
    s = tl.zeros((BLOCK_V,), tl.float32)
    for v0 in range(0, V, BLOCK_V):
        mask = (v0 + offs) < V
        x = tl.load(base + v0 + offs, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        s = tl.where(m_new == float("-inf"), 0.0, s)
        m = m_new
    m_row = tl.max(m, axis=0)
    s_row = tl.sum(s * tl.exp(m - m_row), axis=0)
    lse = m_row + tl.log(s_row)
    label = tl.load(labels_ptr + row)
    tgt = tl.load(base + label).to(tl.float32)
    tl.store(loss_ptr + row, lse - tgt)
    tl.store(lse_ptr + row, lse)


def entry(logits, labels):
    N, V = logits.shape
    loss = torch.empty((N,), device=logits.device, dtype=torch.float32)
    lse = torch.empty((N,), device=logits.device, dtype=torch.float32)
    xent_fwd_kernel[(N,)](logits, labels, loss, lse, V, logits.stride(0), BLOCK_V=4096, num_warps=8)
    return loss, lse


def reference(logits, labels):
    x = logits.float()
    lse = torch.logsumexp(x, dim=-1)
    loss = lse - x.gather(1, labels.long()[:, None])[:, 0]
    return loss, lse


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, V = case["N"], case["V"]
    logits = (torch.randn((N, V), generator=g, dtype=torch.float32) * 2.0).to(torch.bfloat16)
    labels = torch.randint(0, V, (N,), generator=g, dtype=torch.int64).to(torch.int32)
    return logits.to(device), labels.to(device)


CASES = [
    {"N": 4096, "V": 32000},
    {"N": 2048, "V": 128256},
    {"N": 8192, "V": 50257},
    {"N": 3000, "V": 151936},
    {"N": 16384, "V": 32768},
    {"N": 6144, "V": 65536},
]
SMALL_CASES = [{"N": 8, "V": 1000}, {"N": 5, "V": 5003}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    N, V = case["N"], case["V"]
    return 2 * N * V + 4 * N + 8 * N


def flops(case):
    return 4 * case["N"] * case["V"]
