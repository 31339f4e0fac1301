"""liger-kernel Qwen2-VL multimodal RoPE forward: three position sections (time, height, width), q and k in place."""

import torch

from liger_kernel.ops.qwen2vl_mrope import qwen2vl_mrope_forward  # kopt: inline


def entry(q, k, cos, sin):
    q, k, _, _ = qwen2vl_mrope_forward(q, k, cos, sin, SECTION)
    return q, k


def _pick(table):
    """(3, batch, seq, dim) -> (batch, seq, dim): each section of the half dim from its own position table."""
    half = table.shape[-1] // 2
    bounds = [0, SECTION[0], SECTION[0] + SECTION[1], half]
    parts = [table[i, ..., bounds[i]:bounds[i + 1]] for i in range(3)]
    first = torch.cat(parts, dim=-1)
    return torch.cat([first, first], dim=-1)


def _rotate(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return (x.float() * cos[:, None] + rotated.float() * sin[:, None]).to(x.dtype)


def reference(q, k, cos, sin):
    c, s = _pick(cos.float()), _pick(sin.float())
    return _rotate(q, c, s), _rotate(k, c, s)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    b, s, hq, hk, d = case["batch"], case["seq"], case["q_heads"], case["kv_heads"], 128
    q = torch.randn(b, s, hq, d, device=device, generator=g).to(dtype).transpose(1, 2)
    k = torch.randn(b, s, hk, d, device=device, generator=g).to(dtype).transpose(1, 2)
    angles = 6.28 * torch.rand(3, b, s, d // 2, device=device, generator=g)
    angles = torch.cat([angles, angles], dim=-1)
    return q, k, angles.cos().to(dtype), angles.sin().to(dtype)


SECTION = [16, 24, 24]
CASES = [{"batch": 1, "seq": 4096, "q_heads": 28, "kv_heads": 4}, {"batch": 2, "seq": 2048, "q_heads": 16, "kv_heads": 2},
         {"batch": 1, "seq": 8192, "q_heads": 12, "kv_heads": 2}, {"batch": 4, "seq": 1000, "q_heads": 28, "kv_heads": 4},
         {"batch": 1, "seq": 16384, "q_heads": 28, "kv_heads": 4}]
HELD_OUT = [{"batch": 3, "seq": 3000, "q_heads": 16, "kv_heads": 2}]
SMALL_CASES = [{"batch": 1, "seq": 3, "q_heads": 2, "kv_heads": 1, "dtype": "float32"},
               {"batch": 2, "seq": 2, "q_heads": 3, "kv_heads": 1, "dtype": "float32"}]


def bytes_moved(case):
    n = case["batch"] * case["seq"] * 128
    return 2 * (2 * n * (case["q_heads"] + case["kv_heads"]) + 2 * 3 * n)
