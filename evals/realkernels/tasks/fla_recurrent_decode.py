"""fla's fused recurrent linear attention forward, used as a decode step: a few new tokens per sequence update
each head's K x V state from the cache (initial_state) and read it out; one program per (V tile, K tile, head)."""

import torch

from fla.ops.common.fused_recurrent import fused_recurrent_fwd  # kopt: inline


def entry(q, k, v, state):
    return fused_recurrent_fwd(q, k, v, scale=SCALE, initial_state=state, output_final_state=True)


def reference(q, k, v, state):
    s = state.clone()
    outs = []
    for t in range(q.shape[1]):
        s = s + k[:, t, :, :, None].float() * v[:, t, :, None, :].float()
        outs.append(SCALE * torch.einsum("bhk,bhkv->bhv", q[:, t].float(), s))
    return torch.stack(outs, 1), s


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    b, t, h, d = case["batch"], case["tokens"], case["heads"], case["dim"]
    q, k, v = (torch.randn(b, t, h, d, device=device, generator=g).to(dtype) for _ in range(3))
    state = torch.randn(b, h, d, d, device=device, generator=g)
    return q, k, v, state


SCALE = 128 ** -0.5
CASES = [{"batch": 64, "tokens": 1, "heads": 16, "dim": 128}, {"batch": 256, "tokens": 1, "heads": 8, "dim": 128},
         {"batch": 1, "tokens": 1, "heads": 32, "dim": 128}, {"batch": 16, "tokens": 4, "heads": 32, "dim": 64},
         {"batch": 33, "tokens": 2, "heads": 12, "dim": 128}]
HELD_OUT = [{"batch": 100, "tokens": 1, "heads": 16, "dim": 64}]
SMALL_CASES = [{"batch": 2, "tokens": 2, "heads": 2, "dim": 16, "dtype": "float32"},
               {"batch": 1, "tokens": 3, "heads": 1, "dim": 32, "dtype": "float32"}]
TOLERANCES = {"float32": (1e-3, 1e-3)}


def bytes_moved(case):
    b, t, h, d = case["batch"], case["tokens"], case["heads"], case["dim"]
    return 2 * 3 * b * t * h * d + 4 * b * t * h * d + 2 * 4 * b * h * d * d
