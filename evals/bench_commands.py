"""Benchmark: cold `kopt search` and `kopt ask` as a user runs them, a fresh process each time (kopt issue 20).

`ask --kernel` asks about a kernel never asked before each run (a copy of examples/strided_scale.py whose kernel
differs by a comment, so no compile cache helps): with the compile worker warm (its folder was asked about by the
untimed first run), as the first call ever (a new folder: the call starts the worker and waits for it; the worker
is stopped after the run), and with workers off (a cold sandboxed compile).

Times each command N times (default 7) against the index in KOPT_HOME (or --home), the commands taking turns so
that a change in the machine's load hits them alike, and prints the median, min and max wall time with the load
average (1 min) seen around the runs. With --before REV the same commands also run from that git revision's
sources, turn about with the current ones, for a before/after under the same load. Not a test: numbers vary with
the machine's load.

    .venv/bin/python evals/bench_commands.py [--runs 7] [--home DIR] [--before REV] [--only NAME]... [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ["why is my load not vectorized", "how does the pipeliner choose num_stages",
             "when are layout conversions removed", "shared memory bank conflicts in a transpose",
             "what does coalescing change in the layout", "why does my matmul not use wgmma",
             "how are masks lowered to predicates", "what limits occupancy with many registers"]
WARM_UP = "software pipelining of loads on hopper"  # a question no timed run asks (the worker caches embeddings)
NO_WORKER = {"KOPT_SEARCH_WORKER": "0"}
KERNEL = ROOT / "examples" / "strided_scale.py"
KERNEL_LINE = 15  # its strided load
COMMANDS = {  # name: (arguments before the question, arguments after it, environment added)
    "help": ([], None, {}),  # the floor: the interpreter, click and kopt's CLI module
    "search": (["search"], [], {}),  # the index's search worker answers (the untimed first run started it)
    "search, no worker": (["search"], [], NO_WORKER),  # what the first search of an index costs
    "search sparse, no worker": (["search"], ["--mode", "sparse"], NO_WORKER),
    "ask": (["ask"], ["--offline"], {}),
    "ask --kernel, worker warm": (["ask"], ["--offline", "--kernel", "warm"], {}),
    "ask --kernel, first call": (["ask"], ["--offline", "--kernel", "first"], {}),
    "ask --kernel, no worker": (["ask"], ["--offline", "--kernel", "off"], {"KOPT_COMPILE_WORKER": "0"}),
}
_variants = iter(range(1 << 30))


def command(name: str, question: str, cwd: Path) -> tuple[list[str], dict]:
    before, after, extra = COMMANDS[name]
    if after is None:
        return ["--help"], extra
    if "--kernel" in after:
        after = [*after[:-1], f"{new_kernel(cwd, after[-1])}:{KERNEL_LINE}"]
    return [*before, question, *after], extra


def new_kernel(cwd: Path, kind: str) -> Path:
    """A task file no run has compiled: the example with a comment at the end of its kernel's body; in a folder of
    its own for a first call, else in the folder of its kind."""
    n = next(_variants)
    folder = cwd / "kernels" / kind / (str(n) if kind == "first" else "")
    folder.mkdir(parents=True, exist_ok=True)
    source = KERNEL.read_text()
    store = "    tl.store(out_ptr + row * stride_out + cols, x * s, mask=mask)\n"
    assert store in source, "the example changed: update new_kernel"
    path = folder / f"variant_{n}.py"
    path.write_text(source.replace(store, store + f"    # variant {n}\n"))
    return path


def stop_compile_workers(under: Path) -> None:
    """End the compile workers this benchmark started for folders in `under` (their supervisors name them)."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "kopt.harness.compile_worker" in argv and "supervise" in argv and any(a.startswith(f"{under}/") for a in argv):
            try:
                os.kill(int(cmdline.parent.name), signal.SIGTERM)
            except ProcessLookupError:
                pass


def sources_of(rev: str, into: Path) -> Path:
    """An importable `kopt` package as it was at `rev` (the installed layout: kopt/, with index/, ingest/, corpora/
    inside it), for PYTHONPATH."""
    src, pkg = into / "src", into / "pkg"
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "kopt", "index", "ingest", "corpora"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    shutil.copytree(src / "kopt", pkg / "kopt")
    for sub in ("index", "ingest", "corpora"):
        (pkg / "kopt" / sub).symlink_to(src / sub)
    return pkg


def time_once(args: list[str], env: dict, cwd: Path) -> float:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kopt.cli", *args], capture_output=True, text=True, env=env, cwd=cwd)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        sys.exit(f"kopt {' '.join(args)} failed: {done.stderr.strip()[-1000:]}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--home", type=Path, help="KOPT_HOME with an index (default: $KOPT_HOME, else ~/.kopt)")
    ap.add_argument("--before", metavar="REV", help="also time the sources of this git revision, turn about")
    ap.add_argument("--only", metavar="NAME", action="append", help="time only this command (its name as printed; repeat)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    names = args.only or list(COMMANDS)
    unknown = set(names) - set(COMMANDS)
    if unknown:
        sys.exit(f"unknown command(s) {', '.join(sorted(unknown))}; known: {', '.join(COMMANDS)}")
    # bytecode is written as an installed kopt has it (with PYTHONDONTWRITEBYTECODE set, every module a run
    # imports from a fresh or edited source is compiled again in each run: ~0.1 s, more for the --before sources)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["HF_HUB_OFFLINE"] = "1"
    if args.home:
        env["KOPT_HOME"] = str(args.home.resolve())
    with tempfile.TemporaryDirectory(prefix="kopt-bench-cmd-") as tmp:
        cwd = Path(tmp)  # no kopt.toml, and no checkout on sys.path[0]
        variants = {"now": env}
        if args.before:
            variants = {"before": {**env, "PYTHONPATH": str(sources_of(args.before, cwd / "before"))}, **variants}
        times: dict[str, dict[str, list[float]]] = {v: {c: [] for c in names} for v in variants}
        loads: list[float] = []
        for variant, venv in variants.items():  # a first, untimed run each: the disk cache holds what they read
            for name in names:
                cmd, extra = command(name, WARM_UP, cwd)
                time_once(cmd, {**venv, **extra}, cwd)
                if name.endswith("first call"):
                    stop_compile_workers(cwd / "kernels" / "first")
        for i in range(args.runs):  # every run asks another question: the worker embeds each one afresh
            for name in names:
                for variant, venv in variants.items():
                    cmd, extra = command(name, QUESTIONS[i % len(QUESTIONS)], cwd)
                    loads.append(os.getloadavg()[0])
                    times[variant][name].append(time_once(cmd, {**venv, **extra}, cwd))
                    if name.endswith("first call"):
                        stop_compile_workers(cwd / "kernels" / "first")
        stop_compile_workers(cwd)
    report = {"machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "runs": args.runs, "before": args.before,
              "load_1min": {"min": min(loads), "median": statistics.median(loads), "max": max(loads)},
              "seconds": {v: {c: {"median": round(statistics.median(t), 3), "min": round(min(t), 3),
                                  "max": round(max(t), 3)} for c, t in by_cmd.items()} for v, by_cmd in times.items()}}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    load = report["load_1min"]
    print(f"{report['machine']}, {report['date']}, {args.runs} runs each, "
          f"load {load['min']:.1f}-{load['max']:.1f} (median {load['median']:.1f})")
    for name in names:
        row = "  ".join(f"{v} {s[name]['median']:.2f} s ({s[name]['min']:.2f}-{s[name]['max']:.2f})"
                        for v, s in report["seconds"].items())
        print(f"{name:<25} {row}")


if __name__ == "__main__":
    main()
