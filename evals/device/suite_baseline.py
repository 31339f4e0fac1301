"""Baseline of the operator suite (evals/suite/) on the GPU: every operator's INITIAL kernel against
torch eager and torch.compile of its reference, case by case, so anyone can see how untuned the
starting points are (and that none is deliberately slow).

For every operator and CASE: fresh inputs (seed = case index), a correctness check of entry against
reference with the task's tolerances, then triton.testing.do_bench (L2 flushed, median) of entry,
of reference (eager) and of torch.compile(reference) (default mode; it recompiles on new shapes
and dtypes as a user's would). The roofline time is max(bytes_moved / copy bandwidth,
flops / matmul rate for DTYPE_FLOPS, fp32 otherwise), from kopt's measured ceilings.

Run from the repository root (Python 3.12, torch, triton 3.6):
    OUT=/tmp/out python3 evals/device/suite_baseline.py                     # all ops (~6-8 min)
    OUT=/tmp/out python3 evals/device/suite_baseline.py --shard 0/2         # half the ops
    OUT=/tmp/out python3 evals/device/suite_baseline.py --ops softmax,gelu --no-compile
Writes under $OUT: suite_baseline.csv (one row per op x case), suite_baseline.json (rows, ceilings,
versions, skipped), suite_baseline.md (per-op table for evals/RESULTS.md). torch.compile is measured
only while --budget-s lasts (the rest is marked skipped); the summary table is printed last.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SUITE = ROOT / "evals" / "suite"
OUT = Path(os.environ.get("OUT", "/tmp/out"))
os.environ.setdefault("KOPT_HOME", str(OUT / "kopt_home"))

import torch  # noqa: E402
import triton  # noqa: E402
from triton.testing import do_bench  # noqa: E402

from kopt.harness.ceilings import get_ceilings  # noqa: E402
from kopt.task import load_task  # noqa: E402

FIELDS = ["op", "family", "case", "shape", "dtype", "ok", "max_abs_err", "triton_ms", "eager_ms", "compile_ms",
          "vs_eager", "vs_compile", "roofline_ms", "roofline_frac", "error"]


def bench_ms(fn, rep_ms: int) -> float:
    return float(do_bench(fn, warmup=max(5, rep_ms // 4), rep=rep_ms, return_mode="median"))


def check(task, out, ref) -> tuple[bool, float]:
    outs = out if isinstance(out, tuple) else (out,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    ok, worst = len(outs) == len(refs), 0.0
    for o, r in zip(outs, refs):
        if o.shape != r.shape or o.dtype != r.dtype:
            return False, math.inf
        atol, rtol = task.tolerance(str(o.dtype).removeprefix("torch."))
        diff = (o.double() - r.double()).abs()
        worst = max(worst, float(diff.max()) if diff.numel() else 0.0)
        ok = ok and bool(torch.isfinite(o.double()).all()) and bool((diff <= atol + rtol * r.double().abs()).all())
    return ok, worst


def roofline_ms(task, case, ceilings) -> float:
    rates = ceilings["matmul_tflops"]
    peak = rates.get(task.dtype_flops or "fp32", rates["fp32"]) * 1e12
    return 1e3 * max(task.bytes_moved(case) / (ceilings["copy_gbps"] * 1e9), task.flops(case) / peak)


def run_op(path: Path, args, ceilings, deadline: float) -> list[dict]:
    task = load_task(path)
    family = getattr(task.module, "FAMILY", "")
    compiled = None
    rows = []
    for i, case in enumerate(task.cases):
        row = {"op": task.name, "family": family, "case": i, "dtype": case.get("dtype", ""),
               "shape": json.dumps({k: v for k, v in case.items() if k != "dtype"})}
        try:
            inputs = task.make_inputs(case, "cuda", i)
            out = task.entry(*inputs)
            ref = task.reference(*inputs)
            row["ok"], row["max_abs_err"] = check(task, out, ref)
            del out, ref
            row["triton_ms"] = bench_ms(lambda: task.entry(*inputs), args.rep_ms)
            row["eager_ms"] = bench_ms(lambda: task.reference(*inputs), args.rep_ms)
            if not args.no_compile and time.time() < deadline:
                compiled = compiled or torch.compile(task.reference)
                compiled(*inputs)  # compile (or recompile) outside the timing
                row["compile_ms"] = bench_ms(lambda: compiled(*inputs), args.rep_ms)
            row["roofline_ms"] = roofline_ms(task, case, ceilings)
            row["roofline_frac"] = row["roofline_ms"] / row["triton_ms"]
            row["vs_eager"] = row["eager_ms"] / row["triton_ms"]
            if "compile_ms" in row:
                row["vs_compile"] = row["compile_ms"] / row["triton_ms"]
            del inputs
        except Exception as exc:  # noqa: BLE001 - one failing case is a result, not the end of the run
            row["ok"] = False
            row["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
            traceback.print_exc(limit=3)
        torch.cuda.empty_cache()
        rows.append(row)
        print(f"  {task.name}[{i}] ok={row.get('ok')} triton={row.get('triton_ms', float('nan')):.4f} ms "
              f"eager={row.get('eager_ms', float('nan')):.4f} ms compile={row.get('compile_ms', float('nan')):.4f} ms",
              flush=True)
    return rows


def geomean(values: list[float]) -> float:
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def per_op_table(rows: list[dict]) -> list[dict]:
    table = []
    for op in sorted({r["op"] for r in rows}):
        mine = [r for r in rows if r["op"] == op]
        fracs = [r["roofline_frac"] for r in mine if "roofline_frac" in r]
        table.append({"op": op, "family": mine[0]["family"], "ok": f"{sum(bool(r.get('ok')) for r in mine)}/{len(mine)}",
                      "vs_eager": geomean([r.get("vs_eager") for r in mine]),
                      "vs_compile": geomean([r.get("vs_compile") for r in mine]),
                      "roofline": statistics.median(fracs) if fracs else float("nan")})
    return table


def markdown(table: list[dict], rows: list[dict], meta: dict) -> str:
    lines = [f"Initial kernels vs torch on {meta['gpu']} (driver {meta['driver']}, triton {meta['triton']}, "
             f"torch {meta['torch']}), {meta['date']}. Per operator: geomean over its 5 cases of "
             "torch time / initial-kernel time (>1: the initial kernel is faster), median fraction of roofline.",
             "", "| op | family | correct | vs eager | vs torch.compile | roofline |", "|---|---|---|---|---|---|"]
    for t in table:
        lines.append(f"| {t['op']} | {t['family']} | {t['ok']} | {t['vs_eager']:.2f}x | {t['vs_compile']:.2f}x | "
                     f"{100 * t['roofline']:.0f}% |")
    lines += ["", f"All cases: geomean vs eager {geomean([r.get('vs_eager') for r in rows]):.2f}x, vs torch.compile "
              f"{geomean([r.get('vs_compile') for r in rows]):.2f}x, median roofline "
              f"{100 * statistics.median([r['roofline_frac'] for r in rows if 'roofline_frac' in r] or [float('nan')]):.0f}%; "
              f"correct {sum(bool(r.get('ok')) for r in rows)}/{len(rows)} cases."]
    return "\n".join(lines) + "\n"


def versions() -> dict:
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        driver = "unknown"
    return {"gpu": torch.cuda.get_device_name(), "driver": driver, "triton": triton.__version__,
            "torch": torch.__version__, "python": sys.version.split()[0], "date": time.strftime("%Y-%m-%d")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default="", help="comma-separated operator names (default: all)")
    parser.add_argument("--shard", default="0/1", help="i/n: every n-th operator starting at i")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--budget-s", type=float, default=420, help="stop measuring torch.compile after this")
    parser.add_argument("--rep-ms", type=int, default=40, help="do_bench rep (ms) per measurement")
    args = parser.parse_args()
    paths = sorted(p for p in SUITE.glob("*.py") if not p.name.startswith("_"))
    if args.ops:
        wanted = set(args.ops.split(","))
        paths = [p for p in paths if p.stem in wanted]
    index, count = map(int, args.shard.split("/"))
    paths = paths[index::count]
    OUT.mkdir(parents=True, exist_ok=True)
    torch._dynamo.config.cache_size_limit = 64  # five cases x dtypes must not fall back to eager
    start = time.time()
    ceilings = get_ceilings()
    rows: list[dict] = []
    for path in paths:
        print(f"{path.stem} ({time.time() - start:.0f}s)", flush=True)
        rows += run_op(path, args, ceilings, start + args.budget_s)
    meta = versions()
    skipped = sorted({r["op"] for r in rows if "compile_ms" not in r})
    with open(OUT / "suite_baseline.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    table = per_op_table(rows)
    (OUT / "suite_baseline.json").write_text(json.dumps(
        {"meta": meta, "ceilings": ceilings, "rows": rows, "per_op": table, "compile_skipped": skipped,
         "wall_s": time.time() - start}, indent=1, default=str))
    text = markdown(table, rows, meta)
    (OUT / "suite_baseline.md").write_text(text)
    print(text)
    if skipped:
        print(f"torch.compile not measured (budget) for: {', '.join(skipped)}")
    print(f"wall {time.time() - start:.0f}s; results in {OUT}")


if __name__ == "__main__":
    main()
