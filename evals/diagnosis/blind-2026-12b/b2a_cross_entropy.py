"""Per-row cross-entropy loss of bf16 logits [M, V] against int64 targets (fp32 loss); planted: one kernel materializes the full fp32 log-softmax [M, V] and a second kernel gathers the target column from it."""
import torch
import triton
import triton.language as tl


@triton.jit
def log_softmax_kernel(x_ptr, out_ptr, V, stride_x, stride_o, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    o_row = out_ptr + row * stride_o
    m_i = -float("inf")
    s_i = 0.0
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m_i, tl.max(x, axis=0))
        s_i = s_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m_i = m_new
    lse = m_i + tl.log(s_i)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < V, other=0.0).to(tl.float32)
        tl.store(o_row + cols, x - lse, mask=cols < V)


@triton.jit
def nll_kernel(logp_ptr, target_ptr, loss_ptr, M, stride, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = rows < M
    t = tl.load(target_ptr + rows, mask=m, other=0)
    lp = tl.load(logp_ptr + rows.to(tl.int64) * stride + t, mask=m, other=0.0)
    tl.store(loss_ptr + rows, -lp, mask=m)


def entry(logits, target):
    M, V = logits.shape
    logp = torch.empty(M, V, device=logits.device, dtype=torch.float32)
    log_softmax_kernel[(M,)](logits, logp, V, logits.stride(0), logp.stride(0), BLOCK=4096, num_warps=8)
    loss = torch.empty(M, device=logits.device, dtype=torch.float32)
    nll_kernel[(triton.cdiv(M, 256),)](logp, target, loss, M, logp.stride(0), BLOCK=256)
    return loss


def reference(logits, target):
    return torch.nn.functional.cross_entropy(logits.float(), target, reduction="none")


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, V = case["M"], case["V"]
    logits = torch.randn(M, V, generator=g).to(torch.bfloat16)
    target = torch.randint(0, V, (M,), generator=g, dtype=torch.int64)
    return (logits.to(device), target.to(device))


CASES = [{"M": 16384, "V": 32000}, {"M": 8192, "V": 50257}, {"M": 4096, "V": 128256},
         {"M": 2047, "V": 151936}, {"M": 12000, "V": 32768}]
SMALL_CASES = [{"M": 5, "V": 3000}, {"M": 3, "V": 517}]
TOLERANCES = {"float32": (1e-3, 1e-4)}


def bytes_moved(case):
    return 2 * case["M"] * case["V"] + 12 * case["M"]


def flops(case):
    return 4 * case["M"] * case["V"]
