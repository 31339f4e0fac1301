"""Blockwise int8 -> bf16 dequantization of a flat buffer (bitsandbytes style, per-256 absmax); planted: every access is masked with an odd length, so loads/stores cannot be vectorized."""
import torch
import triton
import triton.language as tl

QBLOCK = 256


@triton.jit
def dequant_kernel(q_ptr, absmax_ptr, out_ptr, n, QBLOCK: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    q = tl.load(q_ptr + offs, mask=mask, other=0)
    s = tl.load(absmax_ptr + offs // QBLOCK, mask=mask, other=0.0)
    y = q.to(tl.float32) * (s * (1.0 / 127.0))
    tl.store(out_ptr + offs, y.to(tl.bfloat16), mask=mask)


def _launch(q, absmax, out, n):
    BLOCK = 2048
    dequant_kernel[(triton.cdiv(n, BLOCK),)](q, absmax, out, n, QBLOCK=QBLOCK, BLOCK=BLOCK, num_warps=4)


def entry(q, absmax):
    n = q.numel()
    out = torch.empty(n, device=q.device, dtype=torch.bfloat16)
    _launch(q, absmax, out, n)
    return out


def reference(q, absmax):
    n = q.numel()
    s = absmax.repeat_interleave(QBLOCK)[:n]
    return (q.float() * s * (1.0 / 127.0)).to(torch.bfloat16)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    n = case["n"]
    nb = (n + QBLOCK - 1) // QBLOCK
    x = torch.randn(nb * QBLOCK, generator=g, dtype=torch.float32).view(nb, QBLOCK)
    absmax = x.abs().amax(dim=1).clamp_min(1e-6)
    q = torch.round(x / absmax[:, None] * 127.0).clamp(-127, 127).to(torch.int8).reshape(-1)[:n]
    return (q.contiguous().to(device), absmax.to(device))


# flattened optimizer-state / parameter buffers: total lengths are arbitrary
CASES = [{"n": 100_000_007}, {"n": 67_108_863}, {"n": 150_994_945}, {"n": 33_554_433}, {"n": 81_920_003}]
SMALL_CASES = [{"n": 5_001}]
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}


def bytes_moved(case):
    n = case["n"]
    return n * 1 + n * 2 + 4 * ((n + QBLOCK - 1) // QBLOCK)


def flops(case):
    return 2 * case["n"]
