"""`kopt diagnose TASK`: why is this kernel slow, escalating L1 -> L4 only as deep as needed."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("diagnose")
@click.argument("task", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--level", type=click.Choice(["auto", "L1", "L2", "L3", "L4"]), default="auto", show_default=True,
              help="auto: stop at the first grounded, actionable hypothesis; Ln: run every level up to Ln.")
@click.option("--no-gpu", is_flag=True, help="Skip L2 (profiling) even when a GPU is visible.")
@click.option("--case", "case", type=int, help="Index into CASES to compile/profile (default: the first).")
@click.option("--failed", multiple=True, help="A finding or pattern id already tried without a win (repeatable).")
@click.option("--target", help="sm_NN (NVIDIA; default: settings.target, else the local GPU or sm_90) or ascend[:ARCH].")
@click.option("--json", "as_json", is_flag=True, help="Print the diagnosis as JSON.")
def diagnose_cmd(task: Path, level: str, no_gpu: bool, case: int | None, failed: tuple[str, ...], target: str | None,
                 as_json: bool) -> None:
    """Diagnose TASK: findings with their level, evidence, conditions and suggested patterns."""
    from kopt.config import load_settings
    from kopt.diagnose.escalate import diagnose

    settings = load_settings(target=target)
    diag = diagnose(task, level=level, gpu=not no_gpu, case=case, failed=failed, settings=settings)
    if as_json:
        from kopt.cli import emit_json

        emit_json(diag.to_dict())
        return
    from kopt.diagnose.report import render_diagnosis

    render_diagnosis(diag)
