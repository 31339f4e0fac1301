"""Row-wise log_softmax over LM-head logits [tokens, vocab] (16-bit in, fp32 logprobs out), chunked two-pass online reduction. Planted: the 16-bit logits are first copied into an fp32 staging buffer by a separate cast kernel, and the main kernel reads that fp32 copy twice."""
import torch
import triton
import triton.language as tl


@triton.jit
def _cast_to_fp32_kernel(src_ptr, dst_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask).to(tl.float32), mask=mask)


@triton.jit
def _log_softmax_kernel(x_ptr, out_ptr, V, stride_x, stride_o, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * stride_x
    o_row = out_ptr + row.to(tl.int64) * stride_o
    cols = tl.arange(0, BLOCK_V)

    # pass 1: per-lane online max / sum-exp, then combine
    m = tl.full([BLOCK_V], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK_V], dtype=tl.float32)
    for start in range(0, V, BLOCK_V):
        x = tl.load(x_row + start + cols, mask=start + cols < V, other=float("-inf"))
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        s = tl.where(m_new == float("-inf"), 0.0, s)   # lanes that have only seen padding
        m = m_new
    row_max = tl.max(m, 0)
    row_sum = tl.sum(s * tl.exp(m - row_max), 0)
    lse = row_max + tl.log(row_sum)

    # pass 2: write logprobs
    for start in range(0, V, BLOCK_V):
        cmask = start + cols < V
        x = tl.load(x_row + start + cols, mask=cmask, other=0.0)
        tl.store(o_row + start + cols, x - lse, mask=cmask)


def entry(logits):
    T, V = logits.shape
    assert logits.is_contiguous()
    # the reduction kernel works on fp32 logits
    x32 = torch.empty((T, V), device=logits.device, dtype=torch.float32)
    n = T * V
    _cast_to_fp32_kernel[(triton.cdiv(n, 4096),)](logits, x32, n, BLOCK=4096, num_warps=8)
    out = torch.empty((T, V), device=logits.device, dtype=torch.float32)
    _log_softmax_kernel[(T,)](x32, out, V, x32.stride(0), out.stride(0), BLOCK_V=2048, num_warps=8)
    return out


def reference(logits):
    return torch.log_softmax(logits.float(), dim=-1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, V = case["T"], case["V"]
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    logits = 3.0 * torch.randn(T, V, generator=g)
    hot = torch.randint(0, V, (T, 4), generator=g)
    logits.scatter_add_(1, hot, torch.full((T, 4), 12.0))
    return (logits.to(dtype).to(device),)


CASES = [
    {"T": 4096, "V": 32000, "dtype": "bfloat16"},
    {"T": 2048, "V": 128256, "dtype": "bfloat16"},
    {"T": 1000, "V": 151936, "dtype": "float16"},
    {"T": 4096, "V": 50257, "dtype": "bfloat16"},
]
SMALL_CASES = [
    {"T": 3, "V": 5000, "dtype": "bfloat16"},
    {"T": 5, "V": 777, "dtype": "float16"},
]
TOLERANCES = {"float32": (1e-4, 1e-5)}


def bytes_moved(case):
    T, V = case["T"], case["V"]
    return T * V * (2 + 4)


def flops(case):
    return 5 * case["T"] * case["V"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
