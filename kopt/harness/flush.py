"""The L2 flush that bench runs before every timed call, as a Triton kernel of its own.

bench splits the profiler's kernel stream into calls at each flush. A torch `fill_` as the flush
broke that whenever the code under test launched the same fill kernel (torch.compile's cumsum does:
the profile showed twice the calls). A kernel named `kopt_l2_flush` is never launched by anything else.
Imported only in the bench child: it imports triton.
"""

import triton
import triton.language as tl

FLUSH_BLOCK = 8192


@triton.jit
def kopt_l2_flush(ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ptr + offs, value, mask=offs < n)


def flush_l2(buf, value: int) -> None:
    """Overwrite all of `buf` (an int32 tensor larger than the L2) with `value`."""
    n = buf.numel()
    kopt_l2_flush[(triton.cdiv(n, FLUSH_BLOCK),)](buf, n, value, BLOCK=FLUSH_BLOCK)
