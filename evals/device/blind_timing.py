"""On the GPU: time a diagnosis set's slow and fixed kernels in one process, fast enough for 40 pairs in a call.

The sandboxed `kopt bench` costs ~1-2 min a pair with five pairs side by side (process starts, validation, a
checked call); these files are ours, not candidates, so they are timed here directly: per case, fresh inputs
from the task's make_inputs, a check of both outputs against the task's reference at its tolerances, then triton.testing.do_bench
(median of its runs, the L2 flushed between them) of each entry. Speedup = median over cases of slow/fixed.

  python3 evals/device/blind_timing.py --manifest evals/diagnosis/blind-2026-12/manifest.yaml --out $OUT/t.json

--workers N runs N processes over shards of the pairs: their compiles and checks overlap, their timed loops take
turns on the GPU through KOPT_GPU_LOCK (kopt.harness.gpulock), so the figures are those of one process alone.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
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
    ap.add_argument("--workers", type=int, default=1, help="processes over shards of the pairs (timed loops take turns)")
    ap.add_argument("--mark", action="store_true", help="then write h200_speedup / excluded into the manifest")
    ap.add_argument("--mark-from", type=Path, help="no timing: write the figures of this earlier --out into the manifest")
    args = ap.parse_args()
    if args.mark_from:
        return mark_manifest(args.manifest, json.loads(args.mark_from.read_text())["rows"])
    if args.mark:
        try:
            (run_shards if args.workers > 1 else sweep)(args)
        finally:
            if args.out.exists():
                mark_manifest(args.manifest, json.loads(args.out.read_text())["rows"])
        return None
    return (run_shards if args.workers > 1 else sweep)(args)


def sweep(args) -> None:
    """Time the manifest's pairs (or --only's) one after another, writing --out after each."""
    import yaml

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


def mark_manifest(manifest: Path, rows: list[dict]) -> None:
    """Add each timed case's `h200_speedup` (and `excluded` with the reason when it is not kept) to the end of its
    entry, keeping the manifest's comments and layout; a case already marked is left as it is."""
    by_name = {r["case"]: r for r in rows}
    out, name, marked = [], None, False

    def close() -> None:
        row = by_name.get(name)
        if name and row and not marked:
            if row.get("speedup") is not None:
                out.append(f"  h200_speedup: {row['speedup']}")
            if not row["kept"]:
                out.append("  excluded: " + json.dumps(  # quoted: an error text may hold ': '
                    f"the slow or the fixed kernel does not match the reference on the H200 ({row['mismatched_cases']} of its cases)"
                    if row.get("mismatched_cases") else
                    f"the fix is not >= {KEEP}x faster on the H200 ({row['speedup']}x)" if row.get("speedup") is not None
                    else f"the pair failed on the H200: {row.get('error', 'no figure')}"))

    for line in manifest.read_text().splitlines():
        if line.startswith("- name:"):
            close()
            name, marked = line.split(":", 1)[1].strip(), False
        marked |= line.startswith("  h200_speedup:")
        out.append(line)
    close()
    manifest.write_text("\n".join(out) + "\n")


def run_shards(args) -> None:
    """Time the pairs in args.workers child processes, one shard each, then write their rows in manifest order."""
    import yaml

    names = [c["name"] for c in yaml.safe_load(args.manifest.read_text())["cases"]
             if not args.only or c["name"] in args.only.split(",")]
    env = {**os.environ, "KOPT_GPU_LOCK": os.environ.get("KOPT_GPU_LOCK", "/tmp/kopt-gpu0.lock")}
    with tempfile.TemporaryDirectory() as tmp:
        shards = [names[i::args.workers] for i in range(args.workers) if names[i::args.workers]]
        outs = [Path(tmp) / f"shard{i}.json" for i in range(len(shards))]
        procs = [subprocess.Popen([sys.executable, __file__, "--manifest", str(args.manifest), "--out", str(out),
                                   "--only", ",".join(shard), "--device", args.device], env=env)
                 for shard, out in zip(shards, outs)]
        for proc in procs:
            proc.wait()
        rows = {r["case"]: r for out in outs if out.exists() for r in json.loads(out.read_text())["rows"]}
    ordered = [rows[n] for n in names if n in rows]
    args.out.write_text(json.dumps({"keep": KEEP, "rows": ordered}, indent=1))
    print(f"{sum(r['kept'] for r in ordered)} of {len(ordered)} kept ({len(names) - len(ordered)} missing)", file=sys.stderr)


if __name__ == "__main__":
    main()
