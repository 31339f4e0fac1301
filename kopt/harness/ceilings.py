"""The device's ceilings for the roofline, measured once per device and cached in KOPT_HOME:
device-to-device copy bandwidth (read + write counted) and dense matmul rates via torch."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from kopt.config import kopt_home

COPY_BYTES = 1 << 30
MATMUL_N = 8192


def _median_ms(fn, reps: int) -> float:
    import torch

    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def _copy_ms() -> float:
    """Median ms of one COPY_BYTES device-to-device copy (its buffers are freed on return)."""
    import torch

    src = torch.empty(COPY_BYTES, dtype=torch.uint8, device="cuda").random_()
    dst = torch.empty_like(src)
    return _median_ms(lambda: dst.copy_(src), 30)


def _matmul_ms(dtype: Any) -> float:
    """Median ms of one MATMUL_N square matmul in `dtype` (its operands are freed on return)."""
    import torch

    a = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=dtype)
    b = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=dtype)
    return _median_ms(lambda: torch.matmul(a, b), 10)


def measure_ceilings() -> dict[str, Any]:
    """Copy GB/s and matmul TFLOP/s (bf16, fp16, fp32 without tf32, tf32) on the current GPU."""
    import torch

    copy_ms = _copy_ms()
    rates = {}
    saved_tf32 = torch.backends.cuda.matmul.allow_tf32
    try:
        for label, dtype, tf32 in (("bf16", torch.bfloat16, False), ("fp16", torch.float16, False),
                                   ("fp32", torch.float32, False), ("tf32", torch.float32, True)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            rates[label] = 2 * MATMUL_N**3 / (_matmul_ms(dtype) * 1e-3) / 1e12
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved_tf32
    torch.cuda.empty_cache()
    return {"copy_gbps": 2 * COPY_BYTES / (copy_ms * 1e-3) / 1e9, "matmul_tflops": rates}


def device_key() -> str:
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return f"{props.name}|sm_{props.major}{props.minor}|torch {torch.__version__}"


def _cache_paths() -> list[Path]:
    """Where the table may live: KOPT_HOME, then in the Triton cache (the one place a sandboxed child may write)."""
    paths = [kopt_home() / "ceilings.json"]
    if os.environ.get("TRITON_CACHE_DIR"):
        paths.append(Path(os.environ["TRITON_CACHE_DIR"]) / "kopt-ceilings.json")
    return paths


def get_ceilings(refresh: bool = False) -> dict[str, Any]:
    """Cached per device in KOPT_HOME/ceilings.json; measured (a few seconds) on first use."""
    key = device_key()
    paths = _cache_paths()
    for path in paths:
        try:
            table = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if key in table and not refresh:
            return {"device": key, **table[key]}
    measured = measure_ceilings()
    for path in paths:  # the first that can be written keeps it; none writable costs a re-measure next time
        try:
            table = json.loads(path.read_text()) if path.is_file() else {}
        except (OSError, ValueError):
            table = {}
        table[key] = measured
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                json.dump(table, f, indent=2)
            os.replace(tmp, path)
            break
        except OSError:
            continue
    return {"device": key, **measured}
