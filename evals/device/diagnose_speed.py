"""Where `kopt diagnose` spends its time on a GPU host (issue 22's 20 s target): for each task, `kopt diagnose --json`
twice (the first cold on a fresh machine, the second with Triton's cache and the OS page cache warm; kopt keeps no
diagnosis between processes), then the Nsight Compute step taken apart: the profiled child alone (no ncu), ncu with
kopt's sections, ncu without SourceCounters, and the two CSV exports. With --cprofile, a cProfile of `--level L1` of the
first task (the slowest level after ncu on a fresh machine), its top functions by cumulative time.

Run from the repo root after install.sh, tasks built (`python -m evals.realkernels.fetch`):
    OUT=/some/dir python evals/device/diagnose_speed.py TASK.py [TASK.py ...] [--cprofile] [--ncu-parts N]
Writes $OUT/diagnose_speed.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kopt.diagnose import ncu

KOPT = shutil.which("kopt") or str(Path(sys.executable).parent / "kopt")


def timed(cmd: list[str], timeout: float = 600, **kw) -> tuple[subprocess.CompletedProcess | None, float]:
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        done = None
    return done, round(time.perf_counter() - start, 2)


def diagnose(task: str) -> dict:
    done, seconds = timed([KOPT, "diagnose", task, "--json"])
    try:
        data = json.loads(done.stdout) if done else {}
    except json.JSONDecodeError:
        data = {"error": (done.stderr or "").strip().splitlines()[-1:]}
    return {"seconds": seconds, "levels": [(lv["level"], lv["status"], lv["seconds"]) for lv in data.get("levels", [])],
            "top": (data.get("findings") or [{}])[0].get("id"), "error": data.get("error")}


def ncu_parts(task: str) -> dict:
    """The profiled child alone, then under ncu with and without SourceCounters, and the two exports."""
    tool = ncu.find_ncu()
    root = str(Path(ncu.__file__).resolve().parents[2])
    script = ncu._CHILD.format(root=root, task=str(Path(task).resolve()), case="0", seed=0, rng=ncu.NVTX_RANGE)
    parts: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        child = Path(tmp) / "child.py"
        child.write_text(script)
        _, parts["child_alone_s"] = timed([sys.executable, str(child)])
        for label, sections in (("all", ncu.SECTIONS), ("no_source", tuple(s for s in ncu.SECTIONS if s != "SourceCounters"))):
            report = Path(tmp) / label
            _, parts[f"ncu_{label}_s"] = timed(ncu.profile_command(tool, report, [sys.executable, str(child)], sections))
            rep = report.with_suffix(".ncu-rep")
            for page in ("raw", "details"):
                out, parts[f"export_{label}_{page}_s"] = timed([tool, "--import", str(rep), "--csv", "--page", page])
                if page == "raw" and out is not None:
                    parts[f"kernels_{label}"] = len(ncu.parse_raw(out.stdout))
    return parts


def l1_profile(task: str) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        prof = Path(tmp) / "l1.prof"
        timed([sys.executable, "-m", "cProfile", "-o", str(prof), KOPT, "diagnose", task, "--level", "L1", "--json"])
        if not prof.is_file():
            return ["no profile written"]
        lines = []
        stats = pstats.Stats(str(prof))
        stats.sort_stats("cumulative")
        for (file, line, fn), (_cc, _nc, _tt, ct, _callers) in sorted(stats.stats.items(), key=lambda kv: -kv[1][3])[:45]:
            lines.append(f"{ct:7.2f} s  {fn}  {file.split('site-packages/')[-1]}:{line}")
        return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="+")
    parser.add_argument("--cprofile", action="store_true")
    parser.add_argument("--ncu-parts", type=int, default=3, help="take ncu apart on the first N tasks")
    args = parser.parse_args()
    out = Path(os.environ.get("OUT", ".")) / "diagnose_speed.json"
    result: dict = {"rows": {}}
    if args.cprofile:
        result["l1_cprofile_cold"] = l1_profile(args.tasks[0])
        print("\n".join(result["l1_cprofile_cold"][:30]), flush=True)
    for i, task in enumerate(args.tasks):
        name = Path(task).stem
        row = {"cold": diagnose(task), "warm": diagnose(task)}
        if i < args.ncu_parts:
            row["ncu"] = ncu_parts(task)
        result["rows"][name] = row
        out.write_text(json.dumps(result, indent=1))
        print(f"{name:24s} cold {row['cold']['seconds']:6.1f}s {row['cold']['levels']}\n{'':24s} warm "
              f"{row['warm']['seconds']:6.1f}s {row['warm']['levels']} top={row['warm']['top']}"
              + (f"\n{'':24s} ncu {row['ncu']}" if "ncu" in row else ""), flush=True)
    if args.cprofile:
        result["l1_cprofile_warm"] = l1_profile(args.tasks[0])
        out.write_text(json.dumps(result, indent=1))
        print("\n".join(result["l1_cprofile_warm"][:30]), flush=True)


if __name__ == "__main__":
    main()
