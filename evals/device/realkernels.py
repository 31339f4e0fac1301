"""The real-kernel dev set (evals/realkernels) on the H200: for each task of the manifest, validate, diagnose
(timed; with the GPU unless --no-gpu) and bench its CASES and HELD_OUT shapes, each a `kopt ... --json` child
so one crash cannot end the sweep. Without a GPU it validates (interpreter) and diagnoses statically.

Build the tasks here first (the device reaches no package registry): `python -m evals.realkernels.fetch`, then
carry evals/realkernels/.cache. Run from the repo root:
    OUT=/some/dir python evals/device/realkernels.py [--kernels a,b] [--no-gpu] [--no-bench] [--no-validate]
Results merge into $OUT/realkernels.json by kernel name, so a sweep can be split over several calls;
a short table is printed last.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from kopt.vocabulary import Finding

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "evals" / "realkernels" / ".cache" / "tasks"
MANIFEST = ROOT / "evals" / "realkernels" / "manifest.toml"
KOPT = shutil.which("kopt") or str(Path(sys.executable).parent / "kopt")  # install.sh puts it in $KOPT_SITE/bin


def run_json(args: list[str], timeout_s: float) -> tuple[dict, float]:
    """(the command's JSON or {"error"}, wall seconds)."""
    start = time.perf_counter()
    try:
        done = subprocess.run([KOPT, *args, "--json"], capture_output=True, text=True, timeout=timeout_s, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout_s:g} s"}, round(time.perf_counter() - start, 2)
    seconds = round(time.perf_counter() - start, 2)
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"error": f"exit {done.returncode}: {tail[0][:300]}"}, seconds
    if done.returncode != 0 and "error" not in data:
        data["error"] = f"exit {done.returncode}"
    return data, seconds


def top_finding(diag: dict) -> dict | None:
    """The first finding, with what a reader checks: a cited source line, and the evidence behind it (observed: a
    launch, compiled-code or profiler fact among it)."""
    findings = diag.get("findings") or []
    if not findings:
        return None
    f = findings[0]
    return {"id": f["id"], "level": f["level"], "confidence": f["confidence"], "lines": f["kernel_lines"][:5],
            "cites_line": bool(f["kernel_lines"]), "evidence": sorted({e["source"] for e in f["evidence"]}),
            "observed": Finding.from_dict(f).observed,
            "message": f["message"][:200]}


def sweep(kernel: dict, gpu: bool, bench: bool, validate: bool) -> dict:
    task = str(TASKS / f"{kernel['name']}.py")
    row: dict = {"name": kernel["name"], "family": kernel["family"], "package": kernel["package"]}
    if validate:
        v, row["validate_s"] = run_json(["validate", task], 900)
        row["validate"] = {k: v.get(k) for k in ("ok", "reason", "message", "device", "warnings", "error")}
    diag, row["diagnose_s"] = run_json(["diagnose", task, *([] if gpu else ["--no-gpu"])], 900)
    row["diagnose_error"] = diag.get("error")
    row["levels"] = [(lv.get("level"), lv.get("status"), lv.get("seconds")) for lv in diag.get("levels", [])]  # where diagnose time goes
    row["top"] = top_finding(diag)
    row["findings"] = [f["id"] for f in diag.get("findings") or []][:8]
    if bench and gpu:
        for label, extra in (("bench", []), ("bench_held_out", ["--held-out"])):
            b, row[f"{label}_s"] = run_json(["bench", task, *extra], 900)
            row[label] = ({"cases": [c["case"] for c in b["cases"]], "ms": [c["kernel_ms"] for c in b["cases"]],
                           "roofline": [c["roofline_fraction"] for c in b["cases"]]} if b.get("ok")
                          else {"error": b.get("error") or b.get("message")})
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", default="", help="comma-separated names (default: every kernel)")
    parser.add_argument("--no-gpu", action="store_true", help="static diagnosis only, no bench")
    parser.add_argument("--no-bench", action="store_true")
    parser.add_argument("--no-validate", action="store_true")
    args = parser.parse_args()
    kernels = tomllib.loads(MANIFEST.read_text())["kernel"]
    wanted = {k for k in args.kernels.split(",") if k}
    missing = [k["name"] for k in kernels if not (TASKS / f"{k['name']}.py").is_file()]
    if missing:
        sys.exit(f"not built: {', '.join(missing)}; run `python -m evals.realkernels.fetch` first")
    gpu = not args.no_gpu and _has_gpu()
    out = Path(os.environ.get("OUT", ".")) / "realkernels.json"
    results = json.loads(out.read_text()) if out.is_file() else {"rows": {}}
    for kernel in kernels:
        if wanted and kernel["name"] not in wanted:
            continue
        row = sweep(kernel, gpu, not args.no_bench, not args.no_validate)
        results["rows"][kernel["name"]] = row
        results["gpu"] = gpu
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=1))
        top = row["top"] or {}
        print(f"{row['name']:26s} diagnose {row['diagnose_s']:6.1f}s {row['diagnose_error'] or ''}"
              f" top={top.get('id')}@{top.get('level')} lines={top.get('lines')} observed={top.get('observed')}"
              f" valid={(row.get('validate') or {}).get('ok')}", flush=True)
    tops = [r.get("top") or {} for r in results["rows"].values()]
    print(f"{sum(bool(t.get('cites_line') and t.get('observed')) for t in tops)} of {len(tops)} top findings cite a "
          "line and an observed (launch, compiled-code or profiler) fact")


def _has_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


if __name__ == "__main__":
    main()
