"""On the GPU: time a diagnosis set's slow and fixed kernels in one process, fast enough for 40 pairs in a call.

The sandboxed `kopt bench` costs ~1-2 min a pair with five pairs side by side (process starts, validation, a
checked call); these files are ours, not candidates, so they are timed here directly: per case, fresh inputs
from the task's make_inputs, a check of both outputs against the task's reference at its tolerances, then triton.testing.do_bench
(median of its runs, the L2 flushed between them) of each entry. Speedup = median over cases of slow/fixed.

  python3 evals/device/blind_timing.py --manifest evals/diagnosis/blind-2026-12/manifest.yaml --out $OUT/t.json
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time
from pathlib import Path

KEEP = 1.3


def flat(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def time_pair(task_path: Path, fixed_path: Path, device: str = "cuda") -> dict:
    import torch
    from triton.testing import do_bench

    from kopt.harness.gpulock import measuring
    from kopt.task import load_candidate, load_task

    def bench(fn) -> float:  # on CPU (the interpreter) one timed call: a check that the script runs, not a figure
        if device != "cuda":
            t = time.perf_counter(); fn(); return (time.perf_counter() - t) * 1e3
        with measuring():  # beside a campaign on the same GPU (KOPT_GPU_LOCK), the timed loops take turns
            return do_bench(fn, warmup=10, rep=60, return_mode="median")

    slow = load_task(task_path)
    fixed = load_candidate(fixed_path, slow)
    slow_ms, fixed_ms, mismatches = [], [], 0
    for i, case in enumerate(slow.cases if device == "cuda" else slow.interpreter_cases()):
        inputs = slow.make_inputs(case, device, 1000 + i)
        want = slow.reference(*copy.deepcopy(inputs))
        for got in (slow.entry(*inputs), fixed.entry(*inputs)):  # each against the reference, at the task's tolerance
            pairs = [(x, y) for x, y in zip(flat(want), flat(got)) if isinstance(x, torch.Tensor)]
            if not all(x.shape == y.shape and torch.allclose(y.double(), x.double(), *reversed(slow.tolerance(
                    str(x.dtype).removeprefix("torch."))), equal_nan=True) for x, y in pairs):
                mismatches += 1
                break
        slow_ms.append(bench(lambda: slow.entry(*inputs)))
        fixed_ms.append(bench(lambda: fixed.entry(*inputs)))
    ratios = [s / f for s, f in zip(slow_ms, fixed_ms) if f > 0]
    return {"slow_ms": slow_ms, "fixed_ms": fixed_ms, "mismatched_cases": mismatches,
            "speedup": round(statistics.median(ratios), 3), "device": torch.cuda.get_device_name() if device == "cuda" else "cpu (interpreter)"}


def main() -> None:
    import yaml

    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--only", default="", help="comma list of case names")
    ap.add_argument("--device", default="cuda", help="cpu: the Triton interpreter, to check the script here")
    args = ap.parse_args()
    if args.device != "cuda":
        os.environ["TRITON_INTERPRET"] = "1"
    rows = []
    for case in yaml.safe_load(args.manifest.read_text())["cases"]:
        if args.only and case["name"] not in args.only.split(","):
            continue
        t = time.perf_counter()
        row = {"case": case["name"]}
        try:
            row.update(time_pair(args.manifest.parent / f"{case['name']}.py", args.manifest.parent / f"{case['name']}_fixed.py",
                                 args.device))
        except Exception as exc:  # one bad pair must not end the sweep
            row.update(error=f"{type(exc).__name__}: {exc}"[:300], speedup=None)
        row["kept"] = bool(row.get("speedup") and row["speedup"] >= KEEP and not row.get("mismatched_cases"))
        row["seconds"] = round(time.perf_counter() - t, 1)
        rows.append(row)
        args.out.write_text(json.dumps({"keep": KEEP, "rows": rows}, indent=1))
        print(f"{case['name']}: speedup {row.get('speedup')} kept={row['kept']} ({row['seconds']} s)", flush=True)
    print(f"{sum(r['kept'] for r in rows)} of {len(rows)} kept", file=sys.stderr)


if __name__ == "__main__":
    main()
