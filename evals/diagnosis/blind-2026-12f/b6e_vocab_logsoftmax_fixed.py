import torch
import triton
import triton.language as tl


# log_softmax over the vocabulary for a [tokens, vocab] bf16 logits matrix
# (log-probabilities for sampling / scoring), fp32 output.  The vocabulary axis
# is split into chunks so that each (token, chunk) pair gets its own program.
@triton.jit
def _chunk_stats_kernel(x_ptr, m_ptr, s_ptr, V, stride_x, n_chunks, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    offs = chunk * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + offs, mask=offs < V, other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    s = tl.sum(tl.exp(x - m), axis=0)
    tl.store(m_ptr + row * n_chunks + chunk, m)
    tl.store(s_ptr + row * n_chunks + chunk, s)


@triton.jit
def _log_softmax_kernel(x_ptr, m_ptr, s_ptr, out_ptr, V, stride_x, stride_o, n_chunks,
                        BLOCK: tl.constexpr, BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)

    # combine the per-chunk statistics of this row
    c = tl.arange(0, BLOCK_C)
    cm = c < n_chunks
    m_c = tl.load(m_ptr + row * n_chunks + c, mask=cm, other=-1e30)
    s_c = tl.load(s_ptr + row * n_chunks + c, mask=cm, other=0.0)
    m = tl.max(m_c, axis=0)
    lse = m + tl.log(tl.sum(s_c * tl.exp(m_c - m), axis=0))

    offs = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = offs < V
    x = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride_o + offs, x - lse, mask=mask)


def entry(logits):
    T, V = logits.shape
    out = torch.empty((T, V), dtype=torch.float32, device=logits.device)
    BLOCK = 4096
    n_chunks = triton.cdiv(V, BLOCK)
    m_buf = torch.empty((T, n_chunks), dtype=torch.float32, device=logits.device)
    s_buf = torch.empty((T, n_chunks), dtype=torch.float32, device=logits.device)
    grid = (T, n_chunks)
    _chunk_stats_kernel[grid](logits, m_buf, s_buf, V, logits.stride(0), n_chunks, BLOCK=BLOCK)
    _log_softmax_kernel[grid](logits, m_buf, s_buf, out, V, logits.stride(0), out.stride(0),
                              n_chunks, BLOCK=BLOCK,
                              BLOCK_C=max(16, triton.next_power_of_2(n_chunks)))
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
