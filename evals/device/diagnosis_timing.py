"""On the H200: time each diagnosis case slow vs fixed, keep cases whose fix is >= 1.3x faster, then score
the diagnosis with and without GPU evidence (L2: ncu) on the kept cases.

Run from the repo root:  OUT=/some/dir python evals/device/diagnosis_timing.py [--cases a,b] [--manifest M]
Writes $OUT/diagnosis_timing.json; prints a short table last. To time a blind set before its first look (no
diagnosis, no per-case ranks), use blind_timing.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
try:  # an installed kopt (kopt.index needs the install's package mapping); else the checkout
    import kopt.index  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT))
KEEP = 1.3


def main() -> None:
    from kopt.commands.eval_diagnosis import load_manifest, rank_of
    from kopt.diagnose.escalate import diagnose
    from kopt.harness.bench import bench

    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="")
    parser.add_argument("--manifest", default=str(ROOT / "evals/diagnosis/manifest.yaml"))
    args = parser.parse_args()
    out = Path(os.environ.get("OUT", "."))
    manifest = Path(args.manifest)
    wanted = {c for c in args.cases.split(",") if c}
    rows = []
    for case in load_manifest(manifest):
        if wanted and case["name"] not in wanted:
            continue
        task = manifest.parent / f"{case['name']}.py"
        fixed = manifest.parent / f"{case['name']}_fixed.py"
        row = {"case": case["name"], "truth": case["finding"], "truth_level": case["level"]}
        try:
            slow, fast = bench(task), bench(task, fixed)
            if not (slow.ok and fast.ok):
                raise RuntimeError(slow.message or fast.message)
            ratios = [s.kernel_ms / f.kernel_ms for s, f in zip(slow.cases, fast.cases) if f.kernel_ms > 0]
            row.update(slow_ms=[c.kernel_ms for c in slow.cases], fixed_ms=[c.kernel_ms for c in fast.cases],
                       speedup=round(statistics.median(ratios), 3), device=slow.device)
        except Exception as exc:  # one bad case must not end the sweep
            row.update(error=f"{type(exc).__name__}: {exc}"[:300], speedup=None)
        row["kept"] = bool(row.get("speedup") and row["speedup"] >= KEEP)
        if row["kept"]:
            for gpu in (False, True):
                t = time.perf_counter()
                try:
                    diag = diagnose(task, gpu=gpu)
                    row[f"rank_{'gpu' if gpu else 'nogpu'}"] = rank_of(case["finding"], diag.findings)
                    row[f"top3_{'gpu' if gpu else 'nogpu'}"] = [f"{f.id}@{f.level}" for f in diag.findings[:3]]
                    row[f"levels_{'gpu' if gpu else 'nogpu'}"] = [vars(r) for r in diag.levels]
                except Exception as exc:
                    row[f"rank_{'gpu' if gpu else 'nogpu'}"] = None
                    row[f"error_{'gpu' if gpu else 'nogpu'}"] = f"{type(exc).__name__}: {exc}"[:300]
                row[f"seconds_{'gpu' if gpu else 'nogpu'}"] = round(time.perf_counter() - t, 1)
        rows.append(row)
        print(f"{case['name']}: speedup {row.get('speedup')} kept={row['kept']}", flush=True)
        write(out, rows)  # after every case: a run cut short by its time limit still leaves its numbers
    summary = write(out, rows)
    print(f"\n{'case':28} {'speedup':>8} kept rank(no gpu) rank(gpu)")
    for r in rows:
        print(f"{r['case']:28} {str(r.get('speedup')):>8} {'yes' if r['kept'] else 'no ':4} "
              f"{str(r.get('rank_nogpu', '-')):>12} {str(r.get('rank_gpu', '-')):>9}")
    print(json.dumps(summary))


def write(out: Path, rows: list[dict]) -> dict:
    kept = [r for r in rows if r["kept"]]

    def acc(key: str, k: int) -> float | None:
        return round(sum(1 for r in kept if r.get(key) and r[key] <= k) / len(kept), 3) if kept else None

    summary = {"cases": len(rows), "kept": len(kept), "top1_nogpu": acc("rank_nogpu", 1), "top3_nogpu": acc("rank_nogpu", 3),
               "top1_gpu": acc("rank_gpu", 1), "top3_gpu": acc("rank_gpu", 3)}
    out.mkdir(parents=True, exist_ok=True)
    (out / "diagnosis_timing.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=2, default=str))
    return summary


if __name__ == "__main__":
    main()
