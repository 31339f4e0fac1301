"""Per-token cross-entropy loss (reduction='none', ignore_index=-100) from bf16 LM-head logits. Planted: row max, sum-of-exp and the final loss are three kernels, so the logits are streamed from HBM twice."""
import torch
import triton
import triton.language as tl


@triton.jit
def _xent_fwd_kernel(LOGITS, TARGET, LOSS, V, stride_row,
                     IGNORE_INDEX: tl.constexpr, BLOCK_V: tl.constexpr):
    # one pass over the row: online (running-max) log-sum-exp
    row = tl.program_id(0)
    base = LOGITS + row.to(tl.int64) * stride_row
    m = float("-inf")
    s = 0.0
    for v0 in range(0, V, BLOCK_V):
        cols = v0 + tl.arange(0, BLOCK_V)
        x = tl.load(base + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    tgt = tl.load(TARGET + row)
    valid = tgt != IGNORE_INDEX
    x_t = tl.load(base + tgt, mask=valid, other=0.0).to(tl.float32)
    loss = tl.where(valid, tl.log(s) + m - x_t, 0.0)
    tl.store(LOSS + row, loss)


def entry(logits, target):
    T, V = logits.shape
    assert logits.stride(1) == 1
    loss = torch.empty(T, device=logits.device, dtype=torch.float32)
    BLOCK_V = 4096
    _xent_fwd_kernel[(T,)](logits, target, loss, V, logits.stride(0),
                           IGNORE_INDEX=-100, BLOCK_V=BLOCK_V, num_warps=8)
    return loss


def reference(logits, target):
    return torch.nn.functional.cross_entropy(logits.float(), target, reduction="none", ignore_index=-100)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, V = case["T"], case["V"]
    logits = (torch.randn(T, V, generator=g) * 2.0).to(torch.bfloat16)
    target = torch.randint(0, V, (T,), generator=g, dtype=torch.int64)
    ignore = torch.rand(T, generator=g) < 0.05   # padding positions
    target[ignore] = -100
    return (logits.to(device), target.to(device))


CASES = [
    {"T": 8192, "V": 32000},
    {"T": 4096, "V": 128256},
    {"T": 16384, "V": 50257},
    {"T": 2048, "V": 151936},
]

SMALL_CASES = [
    {"T": 9, "V": 1000},
    {"T": 33, "V": 5003},
]

TOLERANCES = {"float32": (1e-3, 1e-4)}


def bytes_moved(case):
    return case["T"] * case["V"] * 2 + case["T"] * (8 + 4)


def flops(case):
    return 4 * case["T"] * case["V"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
