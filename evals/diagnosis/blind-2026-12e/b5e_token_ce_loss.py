import torch, triton, triton.language as tl


@triton.jit
def row_logsumexp_kernel(logits_ptr, lse_ptr, V, stride_row, BLOCK_V: tl.constexpr):
    # one program per token: streaming log-sum-exp over the vocabulary
    row = tl.program_id(0)
    base = logits_ptr + row.to(tl.int64) * stride_row
    offs = tl.arange(0, BLOCK_V)
    m = tl.full((BLOCK_V,), float("-inf"), tl.float32)
    s = tl.zeros((BLOCK_V,), tl.float32)
    for v0 in range(0, V, BLOCK_V):
        mask = (v0 + offs) < V
        x = tl.load(base + v0 + offs, mask=mask, other=float("-inf"))
        m_new = tl.maximum(m, x)
        scale = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        s = s * scale + tl.where(mask, tl.exp(x - m_new), 0.0)
        m = m_new
    m_row = tl.max(m, axis=0)
    s_row = tl.sum(s * tl.where(m == float("-inf"), 0.0, tl.exp(m - m_row)), axis=0)
    tl.store(lse_ptr + row, m_row + tl.log(s_row))


def entry(logits, targets):
    # per-token cross-entropy, computed in fp32
    logits = logits.float()
    T, V = logits.shape
    lse = torch.empty(T, device=logits.device, dtype=torch.float32)
    row_logsumexp_kernel[(T,)](logits, lse, V, logits.stride(0), BLOCK_V=2048, num_warps=8)
    target_logit = logits.gather(1, targets[:, None]).squeeze(1).float()
    return lse - target_logit


def reference(logits, targets):
    return torch.nn.functional.cross_entropy(logits.float(), targets, reduction="none")


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, V = case["T"], case["V"]
    logits = (torch.randn(T, V, generator=g) * 2.0).to(torch.bfloat16)
    targets = torch.randint(0, V, (T,), generator=g)
    return logits.to(device), targets.to(device)


CASES = [
    {"T": 2048, "V": 128256},
    {"T": 4096, "V": 32000},
    {"T": 1500, "V": 151936},
    {"T": 3000, "V": 50257},
    {"T": 8192, "V": 16384},
]
SMALL_CASES = [{"T": 6, "V": 1000}, {"T": 3, "V": 2500}]
TOLERANCES = {"float32": (1e-4, 1e-5)}


def bytes_moved(case):
    T, V = case["T"], case["V"]
    return 2 * T * V + 8 * T + 4 * T


def flops(case):
    return 3 * case["T"] * case["V"]
