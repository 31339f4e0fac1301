"""Nsight Compute: run it on a task's kernels and parse what it says.

One profiling run writes a report (`-o`); its raw page (every metric, by its ncu name) and
its details page (section display names plus the rule messages, OPT/WRN with "Est. Speedup")
are then exported as CSV. The task runs in a child process that warms up outside and calls
`entry` once inside an NVTX range "kopt", so only that call's kernels are profiled.

Without ncu, or when it fails or times out, the result says `available=False` and why;
it never raises for those, so the rest of the diagnosis still runs.
"""

from __future__ import annotations

import csv
import glob
import io
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kopt.harness.sandbox import run_in_group

SECTIONS = ("SpeedOfLight", "MemoryWorkloadAnalysis", "Occupancy", "LaunchStats", "WarpStateStats",
            "SchedulerStats", "SourceCounters")
NVTX_RANGE = "kopt"
_KERNEL_COLUMNS = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context", "Stream",
                   "Block Size", "Grid Size", "Device", "CC"}


@dataclass
class Rule:
    """One of ncu's own rule messages (the advice its sections print)."""

    section: str
    name: str
    type: str  # OPT | WRN | INF | ERR
    description: str
    speedup_type: str = ""  # local | global
    speedup: float | None = None  # estimated speedup, percent


@dataclass
class NcuKernel:
    """The metrics and rules of one profiled launch."""

    id: str
    name: str
    block: str = ""
    grid: str = ""
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {"value": float|str, "unit": str}
    rules: list[Rule] = field(default_factory=list)

    def value(self, *names: str) -> float | None:
        """The first of `names` that has a numeric value (raw metric names or details display names)."""
        for name in names:
            v = self.metrics.get(name, {}).get("value")
            if isinstance(v, (int, float)):
                return float(v)
        return None

    def unit(self, name: str) -> str:
        return self.metrics.get(name, {}).get("unit", "")


@dataclass
class NcuResult:
    available: bool
    reason: str = ""  # why not available, or what went wrong in part
    version: str = ""
    command: list[str] = field(default_factory=list)
    kernels: list[NcuKernel] = field(default_factory=list)
    raw_csv: str = ""
    details_csv: str = ""

    def to_dict(self, with_csv: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not with_csv:
            d.pop("raw_csv")
            d.pop("details_csv")
        return d


def find_ncu() -> str | None:
    """ncu on PATH, else the usual CUDA and Nsight Compute install places."""
    found = shutil.which("ncu")
    if found:
        return found
    candidates = ["/usr/local/cuda/bin/ncu", *sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), reverse=True),
                  *sorted(glob.glob("/usr/local/cuda-*/bin/ncu"), reverse=True)]
    return next((c for c in candidates if os.access(c, os.X_OK)), None)


def ncu_version(ncu: str) -> str:
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    return (out.stdout.strip().splitlines() or [""])[-1]


def profile_command(ncu: str, report: Path, program: list[str], sections=SECTIONS) -> list[str]:
    cmd = [ncu, "--clock-control", "none", "--nvtx", "--nvtx-include", f"{NVTX_RANGE}/", "--target-processes", "all",
           "-f", "-o", str(report)]
    for s in sections:
        cmd += ["--section", s]
    return cmd + program


def run_ncu(program: list[str], *, timeout: float = 300, ncu: str | None = None, cwd: str | Path | None = None,
            env: dict[str, str] | None = None, cancel: threading.Event | None = None) -> NcuResult:
    """Profile `program` (argv) under ncu and parse both pages; never raises for ncu's own failures. Setting
    `cancel` kills ncu and the program (a diagnosis that no longer needs the profile)."""
    ncu = ncu or find_ncu()
    if ncu is None:
        return NcuResult(False, "ncu not found (looked on PATH, /usr/local/cuda/bin, /opt/nvidia/nsight-compute/*)")
    version = ncu_version(ncu)
    with tempfile.TemporaryDirectory(prefix="kopt-ncu-") as tmp:
        report = Path(tmp) / "profile"
        cmd = profile_command(ncu, report, program)
        try:
            proc = run_in_group(cmd, timeout, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env,
                                cancel=cancel)
        except subprocess.TimeoutExpired:
            why = "cancelled" if cancel is not None and cancel.is_set() else f"ncu timed out after {timeout:g} s"
            return NcuResult(False, why, version, cmd)
        except OSError as exc:
            return NcuResult(False, f"ncu could not start: {exc}", version, cmd)
        rep = report.with_suffix(".ncu-rep")
        log = (proc.stdout + proc.stderr).strip()
        if not rep.exists():
            return NcuResult(False, f"ncu wrote no report (exit {proc.returncode}): {_last_error(log)}", version, cmd)
        exports = {page: subprocess.Popen([ncu, "--import", str(rep), "--csv", "--page", page], text=True,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                   for page in ("raw", "details")}  # both pages at once: each export reads the whole report
        pages = {page: export.communicate(timeout=timeout)[0] for page, export in exports.items()}
    result = parse_pages(pages["raw"], pages["details"])
    result.version, result.command = version, cmd
    if not result.kernels:
        result.available = False
        result.reason = f"ncu profiled no kernel inside the NVTX range '{NVTX_RANGE}' (exit {proc.returncode}): {_last_error(log)}"
    elif proc.returncode != 0:
        result.reason = f"ncu exited {proc.returncode} after profiling: {_last_error(log)}"
    return result


_CHILD = """
import sys, torch
sys.path.insert(0, {root!r})
from kopt.harness.gpulock import measuring
from kopt.task import load_task
task = load_task({task!r})
case = task.cases[{case}] if isinstance({case}, int) else {case}
inputs = task.make_inputs(case, "cuda", {seed})
task.entry(*inputs)  # compile and autotune outside the profiled range
torch.cuda.synchronize()
with measuring():  # ncu replays the kernels here: never beside another measurement on this GPU
    torch.cuda.nvtx.range_push({rng!r})
    task.entry(*inputs)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
"""


_PROFILES: dict[tuple, NcuResult] = {}  # (task source, case, seed) -> result, for this process


def profile_task(task_path: str | Path, case: int | dict = 0, *, seed: int = 0, timeout: float = 300,
                 ncu: str | None = None, cancel: threading.Event | None = None) -> NcuResult:
    """Profile one call of a task's `entry` on CUDA inputs (the child process imports the task).
    A source profiled before in this process is not profiled again: the optimizer re-diagnoses the same
    best kernel after every round that did not beat it, and ncu is the slowest step of a diagnosis."""
    path = Path(task_path).resolve()
    key = (path.read_text(), repr(case), seed)
    if key in _PROFILES:
        return _PROFILES[key]
    root = str(Path(__file__).resolve().parents[2])
    script = _CHILD.format(root=root, task=str(path), case=repr(case), seed=seed, rng=NVTX_RANGE)
    with tempfile.TemporaryDirectory(prefix="kopt-ncu-child-") as tmp:
        child = Path(tmp) / "profile_child.py"
        child.write_text(script)
        result = run_ncu([sys.executable, str(child)], timeout=timeout, ncu=ncu, cancel=cancel)
    if result.available:
        _PROFILES[key] = result
    return result


class Profiling:
    """profile_task in a background thread: the task's profiled child spends most of its time importing torch and the
    task's own packages, which L1 does too, so a diagnosis starts the profile first and runs L1 beside it. `cancel()`
    kills ncu and its child when L1's hypothesis makes the profile unnecessary."""

    def __init__(self, task_path: str | Path, case: int | dict = 0, *, ncu: str | None = None, timeout: float = 300):
        self.started = time.perf_counter()
        self._cancel = threading.Event()
        self._result: NcuResult | None = None
        self._thread = threading.Thread(target=self._profile, args=(task_path, case, ncu, timeout), daemon=True)
        self._thread.start()

    def _profile(self, task_path: str | Path, case: int | dict, ncu: str | None, timeout: float) -> None:
        try:
            self._result = profile_task(task_path, case, ncu=ncu, timeout=timeout, cancel=self._cancel)
        except Exception as exc:  # a task file that vanished or cannot be read: a reason, like ncu's own failures
            self._result = NcuResult(False, f"profiling failed: {type(exc).__name__}: {exc}")

    def result(self) -> NcuResult:
        self._thread.join()
        assert self._result is not None
        return self._result

    def cancel(self) -> None:
        """Stop the profile if it still runs (nothing of it outlives this call); a finished one is kept."""
        self._cancel.set()
        self._thread.join()


def _last_error(log: str) -> str:
    lines = [ln for ln in log.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "ERROR" in ln or "Error" in ln or "error" in ln]
    return (errors or lines or ["no output"])[-1].strip()[:300]


# --- parsing ---------------------------------------------------------------------------------------

def _csv_rows(text: str) -> list[list[str]]:
    """CSV rows from the header (`"ID",...`) on; ncu's `==PROF==` lines and program output are skipped."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID",')), None)
    if start is None:
        return []
    return [row for row in csv.reader(io.StringIO("\n".join(lines[start:]))) if row]


def to_number(text: str) -> float | str:
    """'1,215,000,000.00' -> 1215000000.0; 'n/a' and words stay text."""
    cleaned = text.strip().replace(",", "")
    try:
        return float(cleaned)
    except ValueError:
        return text.strip()


def parse_raw(text: str) -> list[NcuKernel]:
    """The raw page: a header of metric names, a row of units, then one row per launch."""
    rows = _csv_rows(text)
    if len(rows) < 2:
        return []
    header = rows[0]
    units = rows[1] if rows[1] and rows[1][0] == "" else [""] * len(header)
    kernels = []
    for row in rows[1 if units is not rows[1] else 2:]:
        cells = dict(zip(header, row))
        k = NcuKernel(cells.get("ID", ""), cells.get("Kernel Name", ""), cells.get("Block Size", ""),
                      cells.get("Grid Size", ""))
        for name, unit, value in zip(header, units, row):
            if name not in _KERNEL_COLUMNS and value != "":
                k.metrics[name] = {"value": to_number(value), "unit": unit}
        kernels.append(k)
    return kernels


def parse_details(text: str) -> list[NcuKernel]:
    """The details page: one row per (section, metric) or per rule message."""
    rows = _csv_rows(text)
    if not rows:
        return []
    header = rows[0]
    kernels: dict[str, NcuKernel] = {}
    for row in rows[1:]:
        c = dict(zip(header, row))
        k = kernels.setdefault(c.get("ID", ""), NcuKernel(c.get("ID", ""), c.get("Kernel Name", ""),
                                                         c.get("Block Size", ""), c.get("Grid Size", "")))
        if c.get("Rule Name"):
            speedup = to_number(c.get("Estimated Speedup", ""))
            k.rules.append(Rule(c.get("Section Name", ""), c["Rule Name"], c.get("Rule Type", ""),
                                c.get("Rule Description", "").strip(), c.get("Estimated Speedup Type", ""),
                                speedup if isinstance(speedup, float) else None))
        if c.get("Metric Name"):
            k.metrics.setdefault(c["Metric Name"], {"value": to_number(c.get("Metric Value", "")),
                                                    "unit": c.get("Metric Unit", ""),
                                                    "section": c.get("Section Name", "")})
    return list(kernels.values())


def parse_pages(raw: str, details: str) -> NcuResult:
    """Merge both pages per launch id: raw names and details display names side by side, plus rules."""
    by_id: dict[str, NcuKernel] = {}
    for k in parse_raw(raw):
        by_id[k.id] = k
    for d in parse_details(details):
        k = by_id.setdefault(d.id, d)
        if k is not d:
            for name, m in d.metrics.items():
                k.metrics.setdefault(name, m)
            k.rules.extend(d.rules)
    kernels = sorted(by_id.values(), key=lambda k: int(k.id) if k.id.isdigit() else 0)
    return NcuResult(bool(kernels), "" if kernels else "no kernels in the ncu output", kernels=kernels,
                     raw_csv=raw, details_csv=details)
