import torch, triton, triton.language as tl


@triton.jit
def _cross_entropy_fwd_kernel(logits_ptr, target_ptr, loss_ptr, V, stride_row,
                              BLOCK_V: tl.constexpr):
    # one program per token: loss = logsumexp(logits) - logits[target]
    row = tl.program_id(0)
    row_ptr = logits_ptr + row.to(tl.int64) * stride_row
    m = tl.full([], float("-inf"), tl.float32)
    s = tl.full([], 0.0, tl.float32)
    for start in range(0, V, BLOCK_V):
        offs = start + tl.arange(0, BLOCK_V)
        x = tl.load(row_ptr + offs, mask=offs < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    tgt = tl.load(target_ptr + row)
    x_t = tl.load(row_ptr + tgt).to(tl.float32)
    tl.store(loss_ptr + row, tl.log(s) + m - x_t)


def entry(logits, target):
    # logits: [N, V] bf16, target: [N] int64 -> per-token loss [N] fp32
    N, V = logits.shape
    loss = torch.empty(N, device=logits.device, dtype=torch.float32)
    _cross_entropy_fwd_kernel[(N,)](logits, target, loss, V, logits.stride(0),
                                    BLOCK_V=4096, num_warps=4)
    return loss


def reference(logits, target):
    return torch.nn.functional.cross_entropy(logits.float(), target, reduction="none")


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, V = case["N"], case["V"]
    logits = (torch.randn(N, V, generator=g) * 2.0).to(torch.bfloat16)
    target = torch.randint(0, V, (N,), generator=g, dtype=torch.int64)
    return logits.to(device), target.to(device)


CASES = [
    {"N": 4096, "V": 32000},
    {"N": 2048, "V": 128256},
    {"N": 4096, "V": 50257},
    {"N": 1536, "V": 151936},
    {"N": 1000, "V": 256000},
]
SMALL_CASES = [{"N": 6, "V": 1000}, {"N": 3, "V": 777}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    return case["N"] * case["V"] * 2 + case["N"] * (8 + 4)


def flops(case):
    return 4 * case["N"] * case["V"]
