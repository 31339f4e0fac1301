import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_rows_kernel(x_ptr, p_ptr, n_cols, stride_x, stride_p, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    p_row = p_ptr + row * stride_p
    offs = tl.arange(0, BLOCK)
    # running max and running sum of exp over the vocabulary
    m = tl.full((BLOCK,), float("-inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        s = tl.where(m_new == float("-inf"), 0.0, s)
        m = m_new
    m_row = tl.max(m, axis=0)
    s_row = tl.sum(s * tl.exp(m - m_row), axis=0)
    inv = 1.0 / s_row
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(p_row + cols, tl.exp(x - m_row) * inv, mask=mask)


def entry(logits, target):
    # mean token-level cross entropy over a [tokens, vocab] logit matrix
    N, V = logits.shape
    probs = torch.empty((N, V), dtype=torch.float32, device=logits.device)
    _softmax_rows_kernel[(N,)](logits, probs, V, logits.stride(0), probs.stride(0), BLOCK=4096, num_warps=8)
    p_t = probs.gather(1, target[:, None]).squeeze(1)
    return -torch.log(p_t).mean()


def reference(logits, target):
    return torch.nn.functional.cross_entropy(logits.float(), target)


def make_inputs(case, device, seed):
    gen = torch.Generator().manual_seed(seed)
    N, V = case["N"], case["V"]
    logits = (2.0 * torch.randn((N, V), generator=gen, dtype=torch.float32)).to(torch.bfloat16)
    target = torch.randint(0, V, (N,), generator=gen, dtype=torch.int64)
    return logits.to(device), target.to(device)


CASES = [
    {"N": 2048, "V": 32000},
    {"N": 1024, "V": 128256},
    {"N": 2000, "V": 50257},
    {"N": 512, "V": 151936},
    {"N": 1536, "V": 65024},
    {"N": 4096, "V": 32768},
]
SMALL_CASES = [{"N": 6, "V": 1000}, {"N": 3, "V": 5000}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    N, V = case["N"], case["V"]
    return N * V * 2 + N * 8 + 4


def flops(case):
    return 4 * case["N"] * case["V"]
