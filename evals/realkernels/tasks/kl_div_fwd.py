"""liger-kernel KL divergence forward (batchmean over log-probabilities), one program per row of the vocabulary."""

import torch

from liger_kernel.ops.kl_div import kldiv_forward_triton  # kopt: inline


def entry(y_pred, y_true):
    return kldiv_forward_triton(y_pred, y_true, False, "batchmean", 1e-10)


def reference(y_pred, y_true):
    p = y_true.float()
    loss = p * (torch.log(p.clamp_min(1e-10)) - y_pred.float())
    return loss.sum() / y_pred.shape[0]


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "float32"))
    shape = (case["rows"], case["vocab"])
    y_pred = torch.log_softmax(torch.randn(*shape, device=device, generator=g), -1).to(dtype)
    y_true = torch.softmax(torch.randn(*shape, device=device, generator=g), -1).to(dtype)
    return y_pred, y_true


CASES = [{"rows": 4096, "vocab": 32000}, {"rows": 2048, "vocab": 128256}, {"rows": 8192, "vocab": 32000},
         {"rows": 1000, "vocab": 151936}, {"rows": 4097, "vocab": 50257}]
HELD_OUT = [{"rows": 3000, "vocab": 65536}]
SMALL_CASES = [{"rows": 4, "vocab": 64, "dtype": "float32"}, {"rows": 3, "vocab": 100, "dtype": "float32"},
               {"rows": 5, "vocab": 33, "dtype": "float32"}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    return 2 * 4 * case["rows"] * case["vocab"]
