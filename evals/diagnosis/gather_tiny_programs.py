"""Embedding lookup out[i, :] = table[idx[i], :]. Planted: one program per 32 output values, so the
grid holds millions of tiny programs."""

import torch
import triton
import triton.language as tl


@triton.jit
def embedding_kernel(idx_ptr, table_ptr, out_ptr, D, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    per_row = tl.cdiv(D, BLOCK)
    i = pid // per_row
    cols = (pid % per_row) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < D
    row = tl.load(idx_ptr + i)
    v = tl.load(table_ptr + row * D + cols, mask=mask)
    tl.store(out_ptr + i * D + cols, v, mask=mask)


def entry(idx, table):
    D = table.shape[1]
    out = torch.empty((idx.numel(), D), device=table.device, dtype=table.dtype)
    embedding_kernel[(triton.cdiv(idx.numel() * D, 32),)](idx, table, out, D, BLOCK=32)
    return out


def reference(idx, table):
    return table[idx]


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    table = torch.randn(case["V"], case["D"], generator=g)
    idx = torch.randint(0, case["V"], (case["T"],), generator=g)
    return idx.to(device), table.to(device)


CASES = [{"V": 50_000, "D": 1024, "T": 32768}, {"V": 32000, "D": 4096, "T": 8192}, {"V": 128_000, "D": 512, "T": 65536},
         {"V": 1000, "D": 2048, "T": 16384}, {"V": 250_000, "D": 768, "T": 20000}]
SMALL_CASES = [{"V": 10, "D": 64, "T": 7}, {"V": 100, "D": 32, "T": 5}]


def bytes_moved(case):
    return 8 * case["T"] * case["D"] + 8 * case["T"]
