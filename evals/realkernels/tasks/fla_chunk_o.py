"""fla's chunked linear-attention output: per chunk of 64 tokens, the inter-chunk part q @ h plus the causal
intra-chunk part (q k^T masked) @ v, three tl.dot per tile (autotuned BK, BV), the kernel every chunk_* op ends with."""

import torch

from fla.ops.common.chunk_o import chunk_fwd_o  # kopt: inline


def entry(q, k, v, h):
    return chunk_fwd_o(q, k, v, h, scale=SCALE)


def reference(q, k, v, h):
    b, t, hd, d = q.shape
    n = t // 64
    qc, kc, vc = (x.float().view(b, n, 64, hd, d) for x in (q, k, v))
    inter = torch.einsum("bnchk,bnhkv->bnchv", qc, h.float())
    scores = torch.einsum("bnchk,bnshk->bnhcs", qc, kc)
    causal = torch.ones(64, 64, dtype=torch.bool, device=q.device).tril()
    intra = torch.einsum("bnhcs,bnshv->bnchv", scores.masked_fill(~causal, 0), vc)
    return (SCALE * (inter + intra)).reshape(b, t, hd, d).to(q.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    b, t, h, d = case["batch"], case["seq"], case["heads"], case["dim"]
    q, k, v = (torch.randn(b, t, h, d, device=device, generator=g).to(dtype) for _ in range(3))
    states = (torch.randn(b, t // 64, h, d, d, device=device, generator=g) / d ** 0.5).to(dtype)
    return q, k, v, states


SCALE = 128 ** -0.5
FEW_CASES = "a model fixes the head dim (128 or 64) and the chunk (64): only batch, length and heads vary"
CASES = [{"batch": 8, "seq": 4096, "heads": 16, "dim": 128}, {"batch": 1, "seq": 32768, "heads": 32, "dim": 128},
         {"batch": 32, "seq": 2048, "heads": 8, "dim": 64}, {"batch": 4, "seq": 8192, "heads": 16, "dim": 128}]
HELD_OUT = [{"batch": 2, "seq": 16384, "heads": 24, "dim": 128}]
SMALL_CASES = [{"batch": 1, "seq": 64, "heads": 1, "dim": 16, "dtype": "float32"},
               {"batch": 1, "seq": 128, "heads": 2, "dim": 16, "dtype": "float32"}]
TOLERANCES = {"bfloat16": (3e-2, 3e-2), "float32": (1e-3, 1e-3)}
DTYPE_FLOPS = "bf16"


def flops(case):
    b, t, h, d = case["batch"], case["seq"], case["heads"], case["dim"]
    return 2 * b * t * h * d * (d + 64 + d)


def bytes_moved(case):
    b, t, h, d = case["batch"], case["seq"], case["heads"], case["dim"]
    return 2 * (4 * b * t * h * d + b * (t // 64) * h * d * d)
