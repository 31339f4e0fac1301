"""liger-kernel generalized Jensen-Shannon divergence forward: loss per element and its gradient in one pass."""

import torch

from liger_kernel.ops.jsd import jsd_forward  # kopt: inline


def entry(log_q, log_p):
    return jsd_forward(log_q, log_p, None, 0.5, -100, False)


def reference(log_q, log_p):
    q, p = log_q.float().exp(), log_p.float().exp()
    m = 0.5 * (p + q)
    log_m = m.log()
    n = log_q.shape[0]
    loss = 0.5 * (p * (log_p.float() - log_m)).sum() + 0.5 * (q * (log_q.float() - log_m)).sum()
    dx = 0.5 * q * (log_q.float() - log_m) / n
    return (loss / n).to(log_q.dtype), dx.to(log_q.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "float32"))
    shape = (case["rows"], case["vocab"])
    return tuple(torch.log_softmax(torch.randn(*shape, device=device, generator=g), -1).to(dtype) for _ in range(2))


CASES = [{"rows": 4096, "vocab": 32000}, {"rows": 2048, "vocab": 128256}, {"rows": 8192, "vocab": 32000},
         {"rows": 1000, "vocab": 151936}, {"rows": 4097, "vocab": 50257}]
HELD_OUT = [{"rows": 3000, "vocab": 65536}]
SMALL_CASES = [{"rows": 4, "vocab": 64, "dtype": "float32"}, {"rows": 3, "vocab": 100, "dtype": "float32"},
               {"rows": 5, "vocab": 33, "dtype": "float32"}]
TOLERANCES = {"float32": (1e-5, 1e-4)}


def bytes_moved(case):
    return 4 * 4 * case["rows"] * case["vocab"]
