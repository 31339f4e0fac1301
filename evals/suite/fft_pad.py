"""Zero-pad the last dimension up to the next FFT-friendly length (the smallest 2^a 3^b 5^c >= N), as done
before torch.fft on odd-length signals. Family: misc.

First pass: a 2-D grid of (row, 1024-wide block of the padded row); masked load with 0 beyond N."""

import torch
import triton
import triton.language as tl

FAMILY = "misc"


def next_fast_len(n):
    """Smallest 2^a * 3^b * 5^c >= n."""
    best, p2 = 1 << max(n - 1, 0).bit_length(), 1
    while p2 < best:
        p3 = p2
        while p3 < best:
            p5 = p3
            while p5 < n:
                p5 *= 5
            best = min(best, p5)
            p3 *= 3
        p2 *= 2
    return best


@triton.jit
def fft_pad_kernel(x_ptr, y_ptr, N, L, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    tl.store(y_ptr + row * L + cols, x, mask=cols < L)


def entry(x):
    M, N = x.shape
    L = next_fast_len(N)
    y = torch.empty((M, L), device=x.device, dtype=x.dtype)
    fft_pad_kernel[(M, triton.cdiv(L, 1024))](x, y, N, L, BLOCK=1024)
    return y


def reference(x):
    return torch.nn.functional.pad(x, (0, next_fast_len(x.shape[1]) - x.shape[1]))


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g).to(getattr(torch, case["dtype"]))
    return (x.to(device),)


CASES = [
    {"M": 4096, "N": 4001, "dtype": "float32"},
    {"M": 1024, "N": 16_001, "dtype": "float32"},
    {"M": 8192, "N": 1021, "dtype": "float16"},
    {"M": 64, "N": 480_013, "dtype": "float32"},
    {"M": 65_536, "N": 97, "dtype": "bfloat16"},
]
HELD_OUT = [{"M": 2000, "N": 6007, "dtype": "float32"}, {"M": 300, "N": 44_101, "dtype": "float16"}]
SMALL_CASES = [{"M": 7, "N": 301, "dtype": "float32"}, {"M": 5, "N": 1021, "dtype": "float16"},
               {"M": 9, "N": 97, "dtype": "bfloat16"}]
TOLERANCES = {"float32": (0.0, 0.0), "float16": (0.0, 0.0), "bfloat16": (0.0, 0.0)}


def flops(case):
    return case["M"] * next_fast_len(case["N"])


def bytes_moved(case):
    return case["M"] * (case["N"] + next_fast_len(case["N"])) * getattr(torch, case["dtype"]).itemsize
