import torch, triton, triton.language as tl
import torch.nn.functional as F


@triton.jit
def _cross_entropy_kernel(x_ptr, t_ptr, loss_ptr, V, stride_x, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    # streaming log-sum-exp over the vocabulary
    m_vec = tl.full([BLOCK_V], -1e30, tl.float32)
    s_vec = tl.zeros([BLOCK_V], tl.float32)
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(x_row + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m_vec, x)
        s_vec = s_vec * tl.exp(m_vec - m_new) + tl.exp(x - m_new)
        m_vec = m_new
    m = tl.max(m_vec, axis=0)
    lse = m + tl.log(tl.sum(s_vec * tl.exp(m_vec - m), axis=0))
    t = tl.load(t_ptr + row)
    xt = tl.load(x_row + t).to(tl.float32)
    tl.store(loss_ptr + row, lse - xt)


def entry(logits, target):
    # per-token cross-entropy loss
    M, V = logits.shape
    loss = torch.empty((M,), device=logits.device, dtype=torch.float32)
    _cross_entropy_kernel[(M,)](logits, target, loss, V, logits.stride(0), BLOCK_V=4096, num_warps=8)
    return loss


def reference(logits, target):
    return F.cross_entropy(logits.float(), target, reduction="none")


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, V = case["M"], case["V"]
    logits = (2.0 * torch.randn(M, V, generator=g, dtype=torch.float32)).to(torch.bfloat16)
    target = torch.randint(0, V, (M,), generator=g, dtype=torch.int64)
    return logits.to(device), target.to(device)


CASES = [
    {"M": 2048, "V": 32000},
    {"M": 1024, "V": 50257},
    {"M": 512, "V": 128256},
    {"M": 384, "V": 151936},
    {"M": 1500, "V": 32000},
    {"M": 700, "V": 65024},
]
SMALL_CASES = [{"M": 6, "V": 1000}, {"M": 3, "V": 5000}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    M, V = case["M"], case["V"]
    return M * V * 2 + M * 8 + M * 4


def flops(case):
    return 4 * case["M"] * case["V"]
