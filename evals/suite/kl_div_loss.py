"""KL divergence, batchmean, from log-probabilities and target probabilities (torch.nn.functional.kl_div
with log_target=False), fp32 scalar result. Family: loss.

First pass: one program per 1024-element block computes its partial sum and adds it (pre-divided by
the batch size) into the scalar with an atomic."""

import torch
import triton
import triton.language as tl

FAMILY = "loss"


@triton.jit
def kl_div_kernel(logp_ptr, q_ptr, loss_ptr, n_elements, batch, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    logp = tl.load(logp_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    q = tl.load(q_ptr + offs, mask=mask, other=1.0).to(tl.float32)
    term = tl.where(mask, q * (tl.log(q) - logp), 0.0)
    tl.atomic_add(loss_ptr, tl.sum(term, axis=0) / batch)


def entry(logp, q):
    loss = torch.zeros((), device=logp.device, dtype=torch.float32)
    n = logp.numel()
    kl_div_kernel[(triton.cdiv(n, 1024),)](logp, q, loss, n, logp.shape[0], BLOCK=1024)
    return loss


def reference(logp, q):
    return torch.nn.functional.kl_div(logp.float(), q.float(), reduction="batchmean")


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    logp = torch.log_softmax(torch.randn(case["M"], case["N"], generator=g), dim=-1).to(dtype)
    q = torch.softmax(torch.randn(case["M"], case["N"], generator=g), dim=-1).to(dtype)
    return logp.to(device), q.to(device)


CASES = [
    {"M": 4096, "N": 32_000, "dtype": "float32"},
    {"M": 8192, "N": 4096, "dtype": "bfloat16"},
    {"M": 3001, "N": 5003, "dtype": "float32"},
    {"M": 65_536, "N": 1000, "dtype": "float16"},
    {"M": 127, "N": 131_071, "dtype": "float32"},
]
HELD_OUT = [{"M": 2000, "N": 10_007, "dtype": "float32"}, {"M": 50_000, "N": 333, "dtype": "bfloat16"}]
SMALL_CASES = [{"M": 9, "N": 2500, "dtype": "float32"}, {"M": 23, "N": 77, "dtype": "float16"},
               {"M": 4, "N": 1100, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (1e-5, 1e-4)}


def flops(case):
    return 4 * case["M"] * case["N"]


def bytes_moved(case):
    return 2 * case["M"] * case["N"] * getattr(torch, case["dtype"]).itemsize + 4
