import torch
import torch.nn.functional as F
import triton
import triton.language as tl

IGNORE_INDEX = -100


@triton.jit
def cross_entropy_kernel(logits_ptr, labels_ptr, loss_ptr, V, stride_t, ignore_index,
                         BLOCK_V: tl.constexpr):
    # loss[t] = logsumexp(logits[t, :]) - logits[t, label[t]]   (0 where label == ignore_index)
    row = tl.program_id(0)
    row_ptr = logits_ptr + row.to(tl.int64) * stride_t
    label = tl.load(labels_ptr + row)
    m = -float("inf")
    s = 0.0
    for v0 in range(0, V, BLOCK_V):
        cols = v0 + tl.arange(0, BLOCK_V)
        x = tl.load(row_ptr + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    lse = m + tl.log(s)
    valid = label != ignore_index
    safe_label = tl.where(valid, label, 0)
    target = tl.load(row_ptr + safe_label).to(tl.float32)
    loss = tl.where(valid, lse - target, 0.0)
    tl.store(loss_ptr + row, loss)


def entry(logits, labels):
    # logits: [T, V] (bf16), labels: [T] int64; per-token loss, fp32
    T, V = logits.shape
    loss = torch.empty(T, device=logits.device, dtype=torch.float32)
    cross_entropy_kernel[(T,)](logits, labels, loss, V, logits.stride(0), IGNORE_INDEX,
                               BLOCK_V=4096, num_warps=8)
    return loss


def reference(logits, labels):
    return F.cross_entropy(logits.float(), labels, reduction="none", ignore_index=IGNORE_INDEX)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, V = case["T"], case["V"]
    logits = (torch.randn(T, V, generator=g, dtype=torch.float32) * 2.0).to(torch.bfloat16)
    labels = torch.randint(0, V, (T,), generator=g, dtype=torch.int64)
    drop = torch.rand(T, generator=g) < 0.1
    labels[drop] = IGNORE_INDEX
    return logits.to(device), labels.to(device)


CASES = [
    {"T": 4096, "V": 32000},
    {"T": 2048, "V": 128256},
    {"T": 1536, "V": 151936},
    {"T": 8192, "V": 50304},
    {"T": 3000, "V": 65536},
    {"T": 6000, "V": 49152},
]
SMALL_CASES = [{"T": 8, "V": 1000}, {"T": 5, "V": 4100}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    T, V = case["T"], case["V"]
    return 2 * T * V + 8 * T + 4 * T


def flops(case):
    return 4 * case["T"] * case["V"]
