"""Embedding lookup, out[t] = table[ids[t]] (int64 ids, a [V, D] table). Family: gather.

First pass: one program per token, the whole embedding row in one block of next_power_of_2(D)."""

import torch
import triton
import triton.language as tl

FAMILY = "gather"


@triton.jit
def embedding_kernel(ids_ptr, table_ptr, out_ptr, D, BLOCK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    row = tl.load(ids_ptr + token)
    cols = tl.arange(0, BLOCK)
    mask = cols < D
    vec = tl.load(table_ptr + row * D + cols, mask=mask)
    tl.store(out_ptr + token * D + cols, vec, mask=mask)


def entry(ids, table):
    D = table.shape[1]
    out = torch.empty((ids.numel(), D), device=table.device, dtype=table.dtype)
    embedding_kernel[(ids.numel(),)](ids, table, out, D, BLOCK=triton.next_power_of_2(D))
    return out


def reference(ids, table):
    return torch.nn.functional.embedding(ids, table)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    table = torch.randn(case["V"], case["D"], generator=g).to(getattr(torch, case["dtype"]))
    ids = torch.randint(0, case["V"], (case["T"],), generator=g)
    return ids.to(device), table.to(device)


CASES = [
    {"T": 16_384, "V": 32_000, "D": 4096, "dtype": "bfloat16"},
    {"T": 65_536, "V": 50_257, "D": 768, "dtype": "float16"},
    {"T": 8191, "V": 128_256, "D": 2048, "dtype": "bfloat16"},
    {"T": 200_003, "V": 30_522, "D": 128, "dtype": "float32"},
    {"T": 4097, "V": 151_936, "D": 3584, "dtype": "float16"},
]
HELD_OUT = [{"T": 10_000, "V": 100_000, "D": 1000, "dtype": "float32"}, {"T": 30_001, "V": 65_024, "D": 5120, "dtype": "bfloat16"}]
SMALL_CASES = [{"T": 37, "V": 100, "D": 33, "dtype": "float32"}, {"T": 20, "V": 7, "D": 130, "dtype": "float16"},
               {"T": 9, "V": 50, "D": 64, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (0.0, 0.0), "float16": (0.0, 0.0), "bfloat16": (0.0, 0.0)}


def flops(case):
    return case["T"] * case["D"]


def bytes_moved(case):
    return 2 * case["T"] * case["D"] * getattr(torch, case["dtype"]).itemsize + 8 * case["T"]
