"""One GPU shared by several worker processes: only the measured sections take it, and they take it alone.

A campaign runs more than one worker per GPU because most of a round is CPU work (imports, Triton
compiles, ptxas, ncu's set-up). What must never overlap another measurement is what is measured: bench's
timed loop and ncu's profiled (replayed) call. Those sections hold an exclusive flock on the file named by
KOPT_GPU_LOCK (the campaign sets one per GPU). Compiles, warm-ups and validation run without it: their GPU
work comes in short bursts, and the GPU time-slices processes rather than running their kernels together,
so a burst delays a measured kernel's start but rarely its measured duration (evals/RESULTS.md compares
campaign timings taken this way with single-process ones). Without KOPT_GPU_LOCK the lock is a no-op:
one process per GPU needs no coordination.
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from typing import Iterator

ENV = "KOPT_GPU_LOCK"


@contextmanager
def measuring() -> Iterator[None]:
    """Hold the GPU alone for the duration (blocks until the other measuring processes are done)."""
    path = os.environ.get(ENV)
    if not path:
        yield
        return
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
