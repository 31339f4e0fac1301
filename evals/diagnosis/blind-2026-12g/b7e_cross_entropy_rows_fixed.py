import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def cross_entropy_kernel(logits_ptr, target_ptr, loss_ptr, V, stride_row, ignore_index,
                         BLOCK: tl.constexpr):
    # loss[r] = logsumexp(logits[r, :]) - logits[r, target[r]]   (0 for ignored rows)
    row = tl.program_id(0)
    row_ptr = logits_ptr + row * stride_row
    m = tl.full([BLOCK], -1.0e30, dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for v0 in range(0, V, BLOCK):
        cols = v0 + tl.arange(0, BLOCK)
        x = tl.load(row_ptr + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    m_row = tl.max(m, axis=0)
    s_row = tl.sum(s * tl.exp(m - m_row), axis=0)
    lse = m_row + tl.log(s_row)
    tgt = tl.load(target_ptr + row)
    valid = tgt != ignore_index
    x_t = tl.load(row_ptr + tl.where(valid, tgt, 0)).to(tl.float32)
    loss = tl.where(valid, lse - x_t, 0.0)
    tl.store(loss_ptr + row, loss)


def entry(logits, target):
    # logits: [N, V] (bf16), target: [N] int64 -> per-row loss [N] fp32
    N, V = logits.shape
    loss = torch.empty(N, device=logits.device, dtype=torch.float32)
    BLOCK = 4096
    cross_entropy_kernel[(N,)](logits, target, loss, V, logits.stride(0), -100, BLOCK=BLOCK)
    return loss


def reference(logits, target):
    return F.cross_entropy(logits.float(), target, ignore_index=-100, reduction="none")


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, V = case["N"], case["V"]
    logits = (torch.randn(N, V, generator=g, dtype=torch.float32) * 2.0).to(torch.bfloat16)
    target = torch.randint(0, V, (N,), generator=g, dtype=torch.int64)
    target[torch.rand(N, generator=g) < 0.1] = -100
    return (logits.to(device), target.to(device))


CASES = [
    {"N": 4096, "V": 32000},
    {"N": 2048, "V": 50304},
    {"N": 1024, "V": 128256},
    {"N": 640, "V": 151936},
    {"N": 3000, "V": 49152},
]
SMALL_CASES = [
    {"N": 9, "V": 1000},
    {"N": 4, "V": 5000},
]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    N, V = case["N"], case["V"]
    return N * V * 2 + N * 8 + N * 4


def flops(case):
    return 4 * case["N"] * case["V"]
