import torch, triton, triton.language as tl


@triton.jit
def _cross_entropy_fwd_kernel(logits_ptr, target_ptr, loss_ptr, V, stride_row, BLOCK_V: tl.constexpr):
    # loss = logsumexp(logits) - logits[target]
    row = tl.program_id(0)
    base = logits_ptr + row.to(tl.int64) * stride_row
    m = tl.full([BLOCK_V], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK_V], dtype=tl.float32)
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(base + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        s = tl.where(m_new == float("-inf"), 0.0, s)
        m = m_new
    m_row = tl.max(m, axis=0)
    lse = m_row + tl.log(tl.sum(s * tl.exp(m - m_row), axis=0))
    target = tl.load(target_ptr + row)
    x_t = tl.load(base + target).to(tl.float32)
    tl.store(loss_ptr + row, lse - x_t)


def entry(logits, target):
    # logits: [M, V] (bf16), target: [M] int64 -> per-token loss [M] fp32
    M, V = logits.shape
    loss = torch.empty((M,), device=logits.device, dtype=torch.float32)
    _cross_entropy_fwd_kernel[(M,)](logits, target, loss, V, logits.stride(0), BLOCK_V=4096, num_warps=4)
    return loss


def reference(logits, target):
    return torch.nn.functional.cross_entropy(logits.float(), target, reduction="none")


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, V = case["M"], case["V"]
    logits = (torch.randn((M, V), generator=g, dtype=torch.float32) * 2.0).to(torch.bfloat16)
    target = torch.randint(0, V, (M,), generator=g, dtype=torch.int64)
    return (logits.to(device), target.to(device))


CASES = [
    {"M": 4096, "V": 32000},
    {"M": 2048, "V": 128256},
    {"M": 4096, "V": 50304},
    {"M": 1536, "V": 151936},
    {"M": 8192, "V": 32768},
    {"M": 3000, "V": 49152},
]
SMALL_CASES = [{"M": 7, "V": 1000}, {"M": 4, "V": 517}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    return 2 * case["M"] * case["V"] + 12 * case["M"]


def flops(case):
    return 4 * case["M"] * case["V"]
