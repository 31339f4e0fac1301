"""Writes a passing result.json where the old worker wrote it, then exits 0.

task: vector_add
expect: cheat/denied_import
dynamic: cheat/missing_outputs
"""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


import json
import os
import sys

_request = {}


def entry(x, y):
    for arg in sys.argv:
        if arg.endswith(".json"):
            with open(arg, "w") as f:
                json.dump({"ok": True, "reason": None, "message": None, "result": {"cases": []}}, f)
    os._exit(0)
