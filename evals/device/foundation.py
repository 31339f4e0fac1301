"""The foundation's acceptance on the H200: bench repeatability, ceilings, bench vs Nsight Compute,
and raw ncu outputs of the examples as parser fixtures.

Run from the repository root (Python 3.12, torch, triton 3.6, ncu on PATH):
    OUT=/tmp/out python3 evals/device/foundation.py            # everything (~6-8 min)
    OUT=/tmp/out python3 evals/device/foundation.py --part bench   # ceilings + bench twice (~3 min)
    OUT=/tmp/out python3 evals/device/foundation.py --part ncu     # ncu timing + raw captures (~4 min)
Writes under $OUT: foundation.json (all numbers), foundation.md (the table for evals/RESULTS.md),
ncu/<example>_{raw,details}.csv, ncu/<example>_details.txt, ncu/<example>.ncu-rep, ncu/<example>_meta.json,
kopt_home/ceilings.json. The last lines printed are the summary.

Checks: two bench runs of every example case agree within 3 %; bench's kernel time agrees with ncu's
gpu__time_duration (--clock-control none, caches flushed by ncu) within 10 %; ceilings vs the H200's
published peaks (4.8 TB/s HBM3e; 989 dense bf16/fp16 TFLOP/s, 494 tf32, 67 fp32).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"  # for the sandbox child

EXAMPLES = ["vector_add", "strided_scale", "softmax", "matmul"]
KERNELS = {"vector_add": "add_kernel", "strided_scale": "scale_rows_kernel", "softmax": "softmax_kernel",
           "matmul": "matmul_kernel"}
NCU_CASES = [0, 2]  # a power-of-two-ish case and an odd one, per example
NCU_SECTIONS = ["SpeedOfLight", "MemoryWorkloadAnalysis", "Occupancy", "LaunchStats", "WarpStateStats",
                "SchedulerStats", "SourceCounters"]
WARMUP, TIMED = 3, 7
H200_PEAKS = {"copy_gbps": 4800, "bf16": 989, "fp16": 989, "tf32": 494, "fp32": 67}


def drive(example: str, case_index: int, calls: int) -> None:
    """Child mode for ncu: warm up, then `calls` launches of the example on fresh inputs."""
    import torch

    from kopt.task import load_task

    task = load_task(ROOT / "examples" / f"{example}.py")
    case = task.cases[case_index]
    sets = [task.make_inputs(case, "cuda", 100 + i) for i in range(2)]
    for i in range(WARMUP + calls):
        task.entry(*sets[i % 2])
    torch.cuda.synchronize()


def run_bench_twice(out: Path) -> dict:
    from kopt.harness.bench import bench
    from kopt.harness.ceilings import get_ceilings  # noqa: F401  (measured inside the child, cached in KOPT_HOME)

    results = {}
    for example in EXAMPLES:
        runs = []
        for attempt in range(2):
            r = bench(ROOT / "examples" / f"{example}.py", timeout_s=580)
            if not r.ok:
                raise SystemExit(f"bench {example} failed: {r.reason}: {r.message}")
            runs.append(r)
            print(f"bench {example} run {attempt + 1}: " +
                  ", ".join(f"{c.kernel_ms:.4f} ms" for c in r.cases), flush=True)
        rows = []
        for a, b in zip(runs[0].cases, runs[1].cases):
            diff = abs(a.kernel_ms - b.kernel_ms) / min(a.kernel_ms, b.kernel_ms)
            rows.append({"case": a.case, "kernel_ms": [a.kernel_ms, b.kernel_ms], "event_ms": [a.event_ms, b.event_ms],
                         "runs": a.runs, "input_sets": a.input_sets, "gbps": a.gbps, "tflops": a.tflops,
                         "roofline_fraction": a.roofline_fraction, "bound": a.bound, "repeat_diff": diff,
                         "kernels": a.kernels})
        results[example] = {"cases": rows, "ceilings": runs[0].ceilings, "device": runs[0].device}
    return results


def _ncu(args: list[str], log: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run(["ncu", *args], capture_output=True, text=True)
    log.write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"ncu {' '.join(args[:6])}... failed ({proc.returncode}); see {log}")
    return proc


def _durations_ns(raw_csv: str) -> list[float]:
    """gpu__time_duration.sum per profiled launch from `--csv --page raw` (row 2 holds the units)."""
    rows = list(csv.reader(io.StringIO(raw_csv[raw_csv.index('"ID"'):] if '"ID"' in raw_csv else raw_csv)))
    header, units, data = rows[0], rows[1], rows[2:]
    col = header.index("gpu__time_duration.sum")
    scale = {"ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6}.get(units[col].strip(), 1)
    return [float(r[col].replace(",", "")) * scale for r in data if len(r) > col and r[col]]


def run_ncu(out: Path) -> dict:
    ncu_dir = out / "ncu"
    ncu_dir.mkdir(parents=True, exist_ok=True)
    me = [sys.executable, str(Path(__file__).resolve())]
    results = {}
    for example in EXAMPLES:
        kernel = KERNELS[example]
        select = ["--clock-control", "none", "--kernel-name", f"regex:^{kernel}$", "--launch-skip", str(WARMUP)]
        for case in NCU_CASES:
            proc = _ncu([*select, "--launch-count", str(TIMED), "--metrics", "gpu__time_duration.sum",
                         "--csv", "--page", "raw", *me, "--drive", example, "--case", str(case), "--calls", str(TIMED)],
                        ncu_dir / f"{example}_case{case}_timing.log")
            durations = _durations_ns(proc.stdout)
            results[f"{example}/{case}"] = {"ncu_ms": statistics.median(durations) / 1e6, "launches": len(durations)}
            print(f"ncu {example} case {case}: {results[f'{example}/{case}']['ncu_ms']:.4f} ms "
                  f"(median of {len(durations)})", flush=True)
        # raw fixtures: one launch of case 0 with the sections another engineer's parser reads
        rep = ncu_dir / f"{example}.ncu-rep"
        sections = [a for s in NCU_SECTIONS for a in ("--section", s)]
        _ncu([*select, "--launch-count", "1", *sections, "--import-source", "yes", "-f", "-o", str(rep.with_suffix("")),
              *me, "--drive", example, "--case", "0", "--calls", "1"], ncu_dir / f"{example}_capture.log")
        for page in ("raw", "details"):
            proc = _ncu(["--import", str(rep), "--csv", "--page", page], ncu_dir / f"{example}_{page}.log")
            (ncu_dir / f"{example}_{page}.csv").write_text(proc.stdout)
        proc = _ncu(["--import", str(rep), "--page", "details"], ncu_dir / f"{example}_details_text.log")
        (ncu_dir / f"{example}_details.txt").write_text(proc.stdout)
        (ncu_dir / f"{example}_meta.json").write_text(json.dumps(
            {"example": f"examples/{example}.py", "kernel": kernel, "case_index": 0, "sections": NCU_SECTIONS,
             "ncu_version": subprocess.run(["ncu", "--version"], capture_output=True, text=True).stdout.strip()}, indent=2))
    return results


def summarize(out: Path, benches: dict, ncu: dict) -> list[str]:
    lines = []
    ceilings = next(iter(benches.values()))["ceilings"] if benches else {}
    if ceilings:
        rates = ceilings["matmul_tflops"]
        lines.append(f"device: {ceilings['device']}")
        lines.append(f"ceilings: copy {ceilings['copy_gbps']:.0f} GB/s ({100 * ceilings['copy_gbps'] / H200_PEAKS['copy_gbps']:.0f}% "
                     f"of 4.8 TB/s); matmul TFLOP/s " + ", ".join(
                         f"{k} {v:.0f} ({100 * v / H200_PEAKS[k]:.0f}% of peak)" for k, v in rates.items()))
    lines.append("| example | case | bench ms (run 1, run 2) | repeat diff | ncu ms | bench vs ncu | GB/s | TFLOP/s | roofline |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    worst_repeat, worst_ncu = 0.0, 0.0
    for example in EXAMPLES:
        for i, row in enumerate(benches.get(example, {}).get("cases", [])):
            n = ncu.get(f"{example}/{i}")
            vs = abs(row["kernel_ms"][0] - n["ncu_ms"]) / n["ncu_ms"] if n else None
            worst_repeat = max(worst_repeat, row["repeat_diff"])
            worst_ncu = max(worst_ncu, vs or 0.0)
            fmt = lambda v, s: "-" if v is None else format(v, s)  # noqa: E731
            lines.append(f"| {example} | {row['case']} | {row['kernel_ms'][0]:.4f}, {row['kernel_ms'][1]:.4f} | "
                         f"{100 * row['repeat_diff']:.1f}% | {fmt(n and n['ncu_ms'], '.4f')} | "
                         f"{fmt(vs and 100 * vs, '.1f')} % | {fmt(row['gbps'], '.0f')} | "
                         f"{fmt(row['tflops'], '.1f')} | {fmt(row['roofline_fraction'] and 100 * row['roofline_fraction'], '.0f')} % |")
    if not benches:  # ncu only
        for key, n in ncu.items():
            lines.append(f"| {key} | | | | {n['ncu_ms']:.4f} | | | | |")
    verdict = []
    if benches:
        verdict.append(f"repeatability: worst {100 * worst_repeat:.1f}% ({'PASS' if worst_repeat <= 0.03 else 'FAIL'} at 3%)")
    if benches and ncu:
        verdict.append(f"bench vs ncu: worst {100 * worst_ncu:.1f}% ({'PASS' if worst_ncu <= 0.10 else 'FAIL'} at 10%)")
    lines.append("; ".join(verdict))
    (out / "foundation.md").write_text("\n".join(lines) + "\n")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--part", choices=["all", "bench", "ncu"], default="all")
    parser.add_argument("--drive")
    parser.add_argument("--case", type=int, default=0)
    parser.add_argument("--calls", type=int, default=TIMED)
    args = parser.parse_args()
    if args.drive:
        drive(args.drive, args.case, args.calls)
        return
    out = Path(os.environ.get("OUT", "out"))
    out.mkdir(parents=True, exist_ok=True)
    os.environ["KOPT_HOME"] = str(out / "kopt_home")
    start = time.time()
    previous = json.loads((out / "foundation.json").read_text()) if (out / "foundation.json").is_file() else {}
    benches = run_bench_twice(out) if args.part in ("all", "bench") else previous.get("bench", {})
    if args.part in ("all", "ncu") and shutil.which("ncu") is None:
        raise SystemExit("ncu is not on PATH")
    ncu = run_ncu(out) if args.part in ("all", "ncu") else previous.get("ncu", {})
    (out / "foundation.json").write_text(json.dumps({"bench": benches, "ncu": ncu}, indent=2, default=str))
    lines = summarize(out, benches, ncu)
    print(f"\n== foundation summary ({time.time() - start:.0f} s) ==")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
