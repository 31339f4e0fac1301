"""`kopt eval diagnosis`: top-1/top-3 accuracy of the root cause on kernels with one planted cause.

Each case in evals/diagnosis/manifest.yaml names its task file, the true finding id and the level whose
evidence can name it. Every case is diagnosed with L1 alone and with the full escalation policy (auto),
with and without GPU evidence (L2) when a GPU is present, and the true id's rank is scored. A case without
`h200_speedup` (its fix not yet timed, so it may still be excluded) is scored in `all` and marked as not yet
H200-verified; the `h200-verified` subset scores the others alone.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

import click
import yaml

from kopt.errors import KoptError
from kopt.output import emit_json, json_option

MODES = ("L1", "auto")
SEALED_SPLIT = "test"  # the blind sets' held-out half: its report carries totals only


def load_manifest(path: Path) -> list[dict[str, Any]]:
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise KoptError(f"{path}: cannot read the manifest: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise KoptError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from exc
    cases = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        raise KoptError(f"{path}: not a diagnosis manifest (a YAML mapping whose `cases:` is a list of mappings)")
    for i, case in enumerate(cases):
        missing = {"name", "op", "level"} - set(case) | ({"finding"} if not {"finding", "findings"} & set(case) else set())
        if missing:
            raise KoptError(f"{path}: cases[{i}] lacks {', '.join(sorted(missing))}")
        if not task_file(path, case).is_file():
            raise KoptError(f"{path}: cases[{i}]: no task file {task_file(path, case)}")
    return cases


def task_file(manifest: Path, case: dict[str, Any]) -> Path:
    """The case's task: `task` (relative to the manifest) when given, else NAME.py beside the manifest."""
    return manifest.parent / case.get("task", f"{case['name']}.py")


def truths(case: dict[str, Any]) -> list[str]:
    """The accepted finding ids: `findings` (a case whose fix removed several causes) or the one `finding`."""
    return list(case.get("findings") or [case["finding"]])


def selected_cases(manifest: Path, names, split: str | None = None) -> list[dict[str, Any]]:
    """The cases asked for, less those the manifest excludes (a fix not >= 1.3x faster on the H200)."""
    return [c for c in load_manifest(manifest)
            if (not names or c["name"] in names) and not c.get("excluded") and (split is None or c.get("split") == split)]


def rank_of(finding_id: str, findings: list) -> int | None:
    ids = list(dict.fromkeys(f.id for f in findings))
    return ids.index(finding_id) + 1 if finding_id in ids else None


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    top1 = sum(1 for r in rows if r["rank"] == 1)
    top3 = sum(1 for r in rows if r["rank"] is not None and r["rank"] <= 3)
    return {"cases": n, "top1": round(top1 / n, 3) if n else None, "top3": round(top3 / n, 3) if n else None}


def case_rows(manifest: Path, case: dict[str, Any], settings_modes: list[tuple[str, bool]]) -> list[dict[str, Any]]:
    """One case diagnosed in every mode, as rows (a worker process's unit of work)."""
    from kopt.config import load_settings
    from kopt.diagnose.escalate import diagnose

    settings, task, rows = load_settings(), task_file(manifest, case), []
    for mode, with_gpu in settings_modes:
        t = time.perf_counter()
        diag = diagnose(task, level=mode, gpu=with_gpu, settings=settings)
        top = diag.findings[:3]
        ranks = [r for r in (rank_of(t, diag.findings) for t in truths(case)) if r is not None]
        rows.append({"case": case["name"], "op": case["op"], "truth": "|".join(truths(case)), "truth_level": case["level"],
                     "h200_verified": "h200_speedup" in case, "mode": mode, "gpu": with_gpu,
                     "rank": min(ranks, default=None),
                     "top3": [f"{f.id}@{f.level}" for f in top], "seconds": round(time.perf_counter() - t, 2),
                     "stopped_at": next((r.level for r in reversed(diag.levels) if r.status == "used"), None)})
    return rows


def evaluate(manifest: Path, *, gpu: bool, names: list[str] | None = None, split: str | None = None,
             on_case=None, workers: int = 1) -> dict[str, Any]:
    """`workers` > 1 diagnoses that many cases at once in worker processes; with the GPU, their ncu runs take
    turns through KOPT_GPU_LOCK (kopt.harness.gpulock), so no profile overlaps another."""
    from kopt.diagnose.escalate import gpu_unavailable
    from kopt.harness.gpulock import ENV as GPU_LOCK_ENV

    cases = selected_cases(manifest, names, split)
    settings_modes = [(m, False) for m in MODES] + ([("auto", True)] if gpu and not gpu_unavailable() else [])
    rows: list[dict[str, Any]] = []
    if workers > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        os.environ.setdefault(GPU_LOCK_ENV, str(Path(tempfile.gettempdir()) / f"kopt-eval-gpu-{os.getpid()}.lock"))
        # spawn: CUDA (probed above) cannot be used in a forked child
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            for done in pool.map(case_rows, [manifest] * len(cases), cases, [settings_modes] * len(cases)):
                rows += done
                if on_case:
                    on_case()
    else:
        for case in cases:
            rows += case_rows(manifest, case, settings_modes)
            if on_case:
                on_case()
    summary: dict[str, Any] = {}
    for mode, with_gpu in settings_modes:
        key = f"{mode}{'+gpu' if with_gpu else ''}"
        mine = [r for r in rows if r["mode"] == mode and r["gpu"] == with_gpu]
        verified = [r for r in mine if r["h200_verified"]]
        summary[key] = {"all": score(mine),
                        **({"h200-verified": score(verified)} if len(verified) < len(mine) else {}),
                        **{f"truth {lvl}": score([r for r in mine if r["truth_level"] == lvl])
                           for lvl in sorted({r["truth_level"] for r in mine})}}
    report = {"manifest": str(manifest), "gpu_evidence": any(g for _, g in settings_modes), "summary": summary,
              "unverified": [c["name"] for c in cases if "h200_speedup" not in c], "rows": rows}
    if split == SEALED_SPLIT:  # a held-out half is looked at as totals only: no case names, no per-case ranks
        report.update(unverified=len(report["unverified"]), rows=[])
    return report


@click.command("diagnosis")
@click.option("--manifest", type=click.Path(dir_okay=False, path_type=Path), default=Path("evals/diagnosis/manifest.yaml"),
              show_default=True)
@click.option("--no-gpu", is_flag=True, help="Only the no-GPU runs even when a GPU is visible.")
@click.option("--only", "names", multiple=True, metavar="NAME",
              help="Only this manifest case (repeatable).")
@click.option("--split", default=None, metavar="NAME",
              help="Only the cases of this split (a blind set's `tune` or `test`); `test` reports totals only.")
@click.option("--workers", type=click.IntRange(1, 32), default=1, show_default=True,
              help="Cases diagnosed at once, each in its own process (ncu runs still take turns on the GPU).")
@json_option
def diagnosis_cmd(manifest: Path, no_gpu: bool, names: tuple[str, ...], split: str | None, workers: int,
                  as_json: bool) -> None:
    """Score root-cause diagnosis: top-1/top-3 per mode and per truth level."""
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    total = len(selected_cases(manifest, names, split))
    with Progress(transient=True, disable=as_json) as progress:
        bar = progress.add_task("diagnosis eval", total=total)
        report = evaluate(manifest, gpu=not no_gpu, names=list(names) or None, split=split,
                          on_case=lambda: progress.advance(bar), workers=workers)
    if as_json:
        emit_json(report)
        return
    console = Console()
    table = Table(title=f"diagnosis eval: {total} cases ({'with' if report['gpu_evidence'] else 'without'} GPU evidence)")
    for col in ("mode", "subset", "cases", "top-1", "top-3"):
        table.add_column(col)
    for mode, subsets in report["summary"].items():
        for subset, s in subsets.items():
            table.add_row(mode, subset, str(s["cases"]), *(f"{s[k]:.0%}" if s[k] is not None else "-"
                                                           for k in ("top1", "top3")))  # None: no case in the subset
    console.print(table)
    if isinstance(report["unverified"], int):
        console.print(f"split {split}: totals only; {report['unverified']} case(s) not yet H200-verified", highlight=False)
    elif report["unverified"]:
        console.print(f"not yet H200-verified (no h200_speedup in the manifest; scored in `all`, left out of "
                      f"`h200-verified`): {', '.join(report['unverified'])}", highlight=False)
    misses = [r for r in report["rows"] if r["mode"] == "auto" and r["rank"] != 1]
    for r in misses:
        unverified = "" if r["h200_verified"] else " (not yet H200-verified)"
        console.print(f"miss ({r['mode']}{'+gpu' if r['gpu'] else ''}): {r['case']}{unverified}: "
                      f"truth {r['truth']}@{r['truth_level']} rank {r['rank']}; top {', '.join(r['top3'])}",
                      highlight=False)
