import torch, triton, triton.language as tl

# Per-token cross-entropy loss of language-model logits:
# loss[t] = logsumexp(logits[t, :]) - logits[t, labels[t]].


@triton.jit
def _xent_fwd_kernel(logits_ptr, labels_ptr, loss_ptr, V, stride_t, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = logits_ptr + row.to(tl.int64) * stride_t
    m = tl.full([BLOCK], -1.0e30, dtype=tl.float32)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for v0 in range(0, V, BLOCK):
        cols = v0 + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        acc = acc * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.max(m, axis=0)
    lse = row_max + tl.log(tl.sum(acc * tl.exp(m - row_max), axis=0))
    label = tl.load(labels_ptr + row)
    x_label = tl.load(base + label).to(tl.float32)
    tl.store(loss_ptr + row, lse - x_label)


def entry(logits, labels):
    T, V = logits.shape
    loss = torch.empty(T, device=logits.device, dtype=torch.float32)
    _xent_fwd_kernel[(T,)](logits, labels, loss, V, logits.stride(0), BLOCK=4096, num_warps=8)
    return loss


def reference(logits, labels):
    return torch.nn.functional.cross_entropy(logits.float(), labels, reduction="none")


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    T, V = case["T"], case["V"]
    logits = (torch.randn(T, V, generator=g, dtype=torch.float32) * 3.0).to(torch.bfloat16)
    labels = torch.randint(0, V, (T,), generator=g, dtype=torch.int64)
    return (logits.to(device), labels.to(device))


CASES = [
    {"T": 4096, "V": 32000},
    {"T": 2048, "V": 128256},
    {"T": 3000, "V": 50304},
    {"T": 1024, "V": 151936},
    {"T": 8192, "V": 32768},
    {"T": 6000, "V": 49152},
]
SMALL_CASES = [{"T": 7, "V": 1000}, {"T": 3, "V": 5000}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    return case["T"] * case["V"] * 2 + case["T"] * (8 + 4)


def flops(case):
    return 4 * case["T"] * case["V"]
