import torch
import triton
import triton.language as tl


# log_softmax over the vocabulary for a [tokens, vocab] bf16 logits matrix
# (log-probabilities for sampling / scoring), fp32 output.  The vocabulary axis
# is split into chunks so that each (token, chunk) pair gets its own program.
@triton.jit
def _log_softmax_kernel(x_ptr, out_ptr, V, stride_x, stride_o, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    x_row = x_ptr + row * stride_x
    cols = tl.arange(0, BLOCK)

    # row statistics: running max and rescaled sum of exponentials
    m_i = tl.full([BLOCK], -1e30, dtype=tl.float32)
    s_i = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, V, BLOCK):
        offs = start + cols
        x = tl.load(x_row + offs, mask=offs < V, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m_i, x)
        s_i = s_i * tl.exp(m_i - m_new) + tl.exp(x - m_new)
        m_i = m_new
    m = tl.max(m_i, axis=0)
    lse = m + tl.log(tl.sum(s_i * tl.exp(m_i - m), axis=0))

    offs = chunk * BLOCK + cols
    mask = offs < V
    x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride_o + offs, x - lse, mask=mask)


def entry(logits):
    T, V = logits.shape
    out = torch.empty((T, V), dtype=torch.float32, device=logits.device)
    BLOCK = 4096
    grid = (T, triton.cdiv(V, BLOCK))
    _log_softmax_kernel[grid](logits, out, V, logits.stride(0), out.stride(0), BLOCK=BLOCK)
    return out


def reference(logits):
    return torch.log_softmax(logits.float(), dim=-1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, V = case["T"], case["V"]
    x = (torch.randn((T, V), generator=g, dtype=torch.float32) * 2.0).to(torch.bfloat16)
    return (x.to(device),)


CASES = [
    {"T": 512, "V": 128256},
    {"T": 1024, "V": 50257},
    {"T": 256, "V": 151936},
    {"T": 2048, "V": 32000},
    {"T": 300, "V": 256000},
    {"T": 777, "V": 65536},
]

SMALL_CASES = [
    {"T": 2, "V": 4500},
    {"T": 3, "V": 1500},
]

TOLERANCES = {"float32": (1e-4, 1e-5)}


def bytes_moved(case):
    return case["T"] * case["V"] * (2 + 4)


def flops(case):
    return case["T"] * case["V"] * 5
