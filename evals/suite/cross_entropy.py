"""Cross-entropy loss (mean over rows) from logits and int64 class targets, fp32 result. Family: loss.

First pass: one program per row, one loop over the vocabulary in 1024-wide chunks with an online
max / sum-of-exponentials, then the row's loss added into the scalar with an atomic."""

import torch
import triton
import triton.language as tl

FAMILY = "loss"


@triton.jit
def cross_entropy_kernel(logits_ptr, target_ptr, loss_ptr, M, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = logits_ptr + row.to(tl.int64) * V
    m = tl.full((BLOCK,), -1e30, dtype=tl.float32)  # finite: lanes past V never see a real value
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        new_m = tl.maximum(m, x)
        s = s * tl.exp(m - new_m) + tl.exp(x - new_m)
        m = new_m
    row_max = tl.max(m, axis=0)
    lse = row_max + tl.log(tl.sum(s * tl.exp(m - row_max), axis=0))
    target = tl.load(target_ptr + row)
    picked = tl.load(base + target).to(tl.float32)
    tl.atomic_add(loss_ptr, (lse - picked) / M)


def entry(logits, target):
    M, V = logits.shape
    loss = torch.zeros((), device=logits.device, dtype=torch.float32)
    cross_entropy_kernel[(M,)](logits, target, loss, M, V, BLOCK=1024)
    return loss


def reference(logits, target):
    return torch.nn.functional.cross_entropy(logits.float(), target)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(case["M"], case["V"], generator=g).to(getattr(torch, case["dtype"]))
    target = torch.randint(0, case["V"], (case["M"],), generator=g)
    return logits.to(device), target.to(device)


CASES = [
    {"M": 4096, "V": 32_000, "dtype": "bfloat16"},
    {"M": 8192, "V": 50_257, "dtype": "float16"},
    {"M": 2047, "V": 128_256, "dtype": "bfloat16"},
    {"M": 65_536, "V": 1000, "dtype": "float32"},
    {"M": 16_384, "V": 4097, "dtype": "float32"},
]
HELD_OUT = [{"M": 3001, "V": 151_936, "dtype": "bfloat16"}, {"M": 10_000, "V": 30_522, "dtype": "float16"}]
SMALL_CASES = [{"M": 9, "V": 2500, "dtype": "float32"}, {"M": 23, "V": 77, "dtype": "float16"},
               {"M": 4, "V": 1100, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def flops(case):
    return 4 * case["M"] * case["V"]


def bytes_moved(case):
    return case["M"] * case["V"] * getattr(torch, case["dtype"]).itemsize + 8 * case["M"] + 4
