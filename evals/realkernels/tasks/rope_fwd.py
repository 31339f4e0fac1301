"""liger-kernel rotary position embedding forward on q and k (HF layout), rotated in place in their buffers."""

import torch

from liger_kernel.ops.rope import rope_forward  # kopt: inline


def entry(q, k, cos, sin):
    q, k, _, _ = rope_forward(q, k, cos, sin)
    return q, k


def _rotate(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return (x.float() * cos[:, None] + rotated.float() * sin[:, None]).to(x.dtype)


def reference(q, k, cos, sin):
    return _rotate(q, cos.float(), sin.float()), _rotate(k, cos.float(), sin.float())


def make_inputs(case, device, seed):
    """q, k as a model hands them over: (batch, heads, seq, dim) views of (batch, seq, heads, dim) buffers."""
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    b, s, hq, hk, d = case["batch"], case["seq"], case["q_heads"], case["kv_heads"], case["dim"]
    q = torch.randn(b, s, hq, d, device=device, generator=g).to(dtype).transpose(1, 2)
    k = torch.randn(b, s, hk, d, device=device, generator=g).to(dtype).transpose(1, 2)
    pos = torch.arange(s, device=device, dtype=torch.float32)[:, None]
    inv = 10000 ** (-torch.arange(0, d, 2, device=device, dtype=torch.float32) / d)
    angles = torch.cat([pos * inv, pos * inv], dim=-1)[None]
    return q, k, angles.cos().to(dtype), angles.sin().to(dtype)


CASES = [{"batch": 1, "seq": 4096, "q_heads": 32, "kv_heads": 8, "dim": 128},
         {"batch": 4, "seq": 2048, "q_heads": 32, "kv_heads": 32, "dim": 128},
         {"batch": 2, "seq": 8192, "q_heads": 28, "kv_heads": 4, "dim": 128},
         {"batch": 8, "seq": 1000, "q_heads": 16, "kv_heads": 16, "dim": 64},
         {"batch": 1, "seq": 16384, "q_heads": 64, "kv_heads": 8, "dim": 128}]
HELD_OUT = [{"batch": 3, "seq": 3000, "q_heads": 40, "kv_heads": 8, "dim": 128}]
SMALL_CASES = [{"batch": 1, "seq": 4, "q_heads": 4, "kv_heads": 2, "dim": 16, "dtype": "float32"},
               {"batch": 2, "seq": 3, "q_heads": 3, "kv_heads": 1, "dim": 8, "dtype": "float32"}]


def bytes_moved(case):
    n = case["batch"] * case["seq"] * case["dim"]
    return 2 * (2 * n * (case["q_heads"] + case["kv_heads"]) + 2 * case["seq"] * case["dim"])
