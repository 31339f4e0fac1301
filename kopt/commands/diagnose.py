"""`kopt diagnose TASK`: why is this kernel slow, escalating L1 -> L4 only as deep as needed."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kopt.output import emit_json, json_option


@click.command("diagnose")
@click.argument("task", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--level", type=click.Choice(["auto", "L1", "L2", "L3", "L4"]), default="auto", show_default=True,
              help="auto: stop at the first grounded, actionable hypothesis; Ln: run every level up to Ln.")
@click.option("--no-gpu", is_flag=True, help="Skip L2 (profiling) even when a GPU is visible.")
@click.option("--case", "case", type=int, help="Index into the task's CASES to compile/profile (default: 0, the first).")
@click.option("--failed", multiple=True, help="A finding or pattern id already tried without a win (repeatable).")
@click.option("--target", help="sm_NN (NVIDIA; default: settings.target, else the local GPU or sm_90) or ascend[:ARCH].")
@click.option("--verbose", "-v", is_flag=True, help="Show every finding and every excerpt whole.")
@json_option
def diagnose_cmd(task: Path, level: str, no_gpu: bool, case: int | None, failed: tuple[str, ...], target: str | None,
                 verbose: bool, as_json: bool) -> None:
    """Diagnose TASK: findings with their level, evidence, conditions and suggested patterns.

    Exit status: 0 diagnosed; 1 the task could not be compiled (the findings that could still be made are
    printed) or could not be loaded."""
    from kopt.commands.knowledge import steps
    from kopt.config import load_settings
    from kopt.diagnose.escalate import diagnose

    settings = load_settings(target=target)
    with steps(not as_json) as step:  # the report comes at the end: until then a spinner says kopt is at work
        step(f"diagnosing {task.name}: L1 -> L4, as deep as the evidence needs")
        diag = diagnose(task, level=level, gpu=not no_gpu, case=case, failed=failed, settings=settings)
    broken = next((f for f in diag.findings if f.id == "compile_failure"), None)
    error = f"{task} does not compile: {broken.message}" if broken else None
    if as_json:
        emit_json({**diag.to_dict(), **({"error": error, "kind": "compile"} if error else {})})
    else:
        from kopt.diagnose.report import render_diagnosis

        render_diagnosis(diag, verbose=verbose)
    if error:
        if not as_json:
            click.echo(f"kopt: error: {error}", err=True)
        sys.exit(1)
