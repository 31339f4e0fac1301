import torch, triton, triton.language as tl


@triton.jit
def cross_entropy_fwd_kernel(logits_ptr, targets_ptr, loss_ptr, V, stride_row,
                             BLOCK_V: tl.constexpr):
    # loss[row] = logsumexp(logits[row, :]) - logits[row, target[row]]
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * stride_row
    offs = tl.arange(0, BLOCK_V)
    m = tl.full((BLOCK_V,), -float("inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK_V,), dtype=tl.float32)
    for start in range(0, V, BLOCK_V):
        cols = start + offs
        x = tl.load(base + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        s = tl.where(m_new == -float("inf"), 0.0, s)
        m = m_new
    m_row = tl.max(m, axis=0)
    s_row = tl.sum(s * tl.exp(m - m_row), axis=0)
    lse = m_row + tl.log(s_row)
    target = tl.load(targets_ptr + row)
    x_t = tl.load(base + target).to(tl.float32)
    tl.store(loss_ptr + row, lse - x_t)


def entry(logits, targets):
    # logits: [N, V] bf16 from the LM head, targets: [N] int64 token ids
    N, V = logits.shape
    loss = torch.empty((N,), device=logits.device, dtype=torch.float32)
    cross_entropy_fwd_kernel[(N,)](logits, targets, loss, V, logits.stride(0),
                                   BLOCK_V=4096, num_warps=8)
    return loss


def reference(logits, targets):
    return torch.nn.functional.cross_entropy(logits.float(), targets, reduction="none")


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    N, V = case["N"], case["V"]
    logits = (2.0 * torch.randn((N, V), generator=g, dtype=torch.float32)).to(torch.bfloat16)
    targets = torch.randint(0, V, (N,), generator=g, dtype=torch.int64)
    return logits.to(device), targets.to(device)


CASES = [
    {"N": 4096, "V": 32000},
    {"N": 2048, "V": 128256},
    {"N": 8192, "V": 50257},
    {"N": 3000, "V": 152064},
    {"N": 16384, "V": 32768},
    {"N": 1024, "V": 256000},
]
SMALL_CASES = [{"N": 8, "V": 5000}, {"N": 5, "V": 777}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    N, V = case["N"], case["V"]
    return 2 * N * V + 8 * N + 4 * N


def flops(case):
    N, V = case["N"], case["V"]
    return 4 * N * V
