"""`kopt compile`, `kopt validate`, `kopt bench`: the harness on the command line."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from rich.table import Table

from kopt.errors import KoptError
from kopt.output import console as rich_console
from kopt.output import emit_json, json_option

STAGE_CHOICES = ("ttir", "ttgir", "llir", "ptx", "sass", "ttadapter", "all")


def _quiet_broken_pipe() -> None:
    """`kopt compile ... | head` closes the pipe early; that is not an error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _fmt(value: float | None, spec: str = ".3g") -> str:
    return "-" if value is None else format(value, spec)


@click.command("compile")
@click.argument("task", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--stage", type=click.Choice(STAGE_CHOICES), help="Print this IR stage (all: every stage).")
@click.option("--target", default=None,
              help="sm_NN (NVIDIA; default: the local GPU, else sm_90) or ascend[:ARCH] (triton-ascend toolchain).")
@click.option("--case", "case_index", type=int, default=0, show_default=True, help="Index into the task's CASES for the launch.")
@click.option("--trajectory", is_flag=True, help="Also record the pass-by-pass IR (MLIR dump).")
@json_option
def compile_cmd(task: Path, stage: str | None, target: str | None, case_index: int, trajectory: bool, as_json: bool) -> None:
    """AOT-compile a task's kernels (no GPU needed) and show IR stages and resource usage."""
    from kopt.config import load_settings
    from kopt.diagnose.targets import target_for

    target = target or load_settings().target
    backend = target_for(target)
    backend.check_stage(stage)
    all_stages = backend.ir_stages()
    stages = list(all_stages) if stage in ("all", None) else [stage]
    kernels = backend.compile(task, target, case_index, trajectory, stages)
    described = [backend.kernel_cells(k) for k in kernels]
    try:
        if as_json:
            emit_json([{**k.to_dict(with_asm=stage is not None or trajectory), **extra}
                       for k, (_, extra) in zip(kernels, described)])
            return
        console = rich_console()
        table = Table(title=f"{task} (case {case_index}) compiled")
        for col in ("kernel", "line", "target", "grid", *backend.kernel_columns):
            table.add_column(col)
        for k, (cells, _) in zip(kernels, described):
            table.add_row(k.name, f"{Path(k.source_file).name}:{k.first_line}", k.target, str(tuple(k.grid)), *cells)
        console.print(table)
        _print_stages(kernels, stages if stage else [], trajectory, all_stages, backend.passes_label)
    except BrokenPipeError:
        _quiet_broken_pipe()


def _print_stages(kernels: list, shown: list[str], trajectory: bool, all_stages, passes: str) -> None:
    """The IR text of the stages asked for, then the pass trajectory; without --stage, which stages exist."""
    for k in kernels:
        for name in shown:
            click.echo(f"\n// ===== {k.name} {name} ({k.target}) =====")
            click.echo(k.asm.get(name, "(not produced)"))
        if trajectory:
            click.echo(f"\n// ===== {k.name}: {len(k.trajectory)} {passes}, in order =====")
            for i, (pass_name, _) in enumerate(k.trajectory):
                click.echo(f"{i:3d}  {pass_name}")
    if not shown:
        click.echo(f"stages: {', '.join(all_stages)} (show one with --stage)")


@click.command("validate")
@click.argument("task", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--candidate", type=click.Path(dir_okay=False, path_type=Path), help="A task file with an optimized entry.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=600.0, show_default=True, help="Seconds before the child is killed.")
@click.option("--seed", type=int, default=None, help="Reproduce a run (default: fresh random inputs).")
@click.option("--device", type=click.Choice(["cuda", "cpu"]), default=None, help="Default: CUDA if visible, else the interpreter.")
@click.option("--target", default=None, help="ascend[:ARCH] runs on an Ascend NPU (needs one); default: NVIDIA/interpreter.")
@json_option
def validate_cmd(task: Path, candidate: Path | None, timeout_s: float, seed: int | None, device: str | None,
                 target: str | None, as_json: bool) -> None:
    """Check a task's kernels (or a candidate's) against the reference, in a sandboxed child process."""
    from kopt.harness.validate import validate

    _must_exist(task, candidate)
    _no_npu_run("validate", target)
    result = validate(task, candidate, timeout_s=timeout_s, seed=seed, device=device)
    failure = None if result.ok else f"{candidate or task}: {result.reason}: {result.message}"
    if as_json:
        from kopt.harness.containment import describe

        emit_json({**result.to_dict(), "sandbox": describe(),
                   **({"error": failure, "kind": result.reason} if failure else {})})
    elif result.cases:
        table = Table(title=f"validate {candidate or task} on {result.device}")
        for col in ("case", "held-out", "seed", "max abs err", "max rel err", "atol/rtol", "result", "s"):
            table.add_column(col)
        for c in result.cases:
            table.add_row(str(c.case), "yes" if c.held_out else "", str(c.seed), _fmt(c.max_abs), _fmt(c.max_rel),
                          f"{c.atol:g}/{c.rtol:g}", "[green]ok[/]" if c.ok else "[red]FAIL[/]", f"{c.seconds:.2f}")
        console = rich_console()
        console.print(table)
        if result.held_out_note:
            console.print(f"note: {result.held_out_note}")
        for warning in result.warnings:
            console.print(f"[yellow]warning[/]: {warning}", highlight=False)
        if result.ok:
            console.print(f"[green]ok[/]: {len(result.cases)} cases in {result.elapsed_s:.1f} s")
    if failure:  # under --json the result above carries it; the line goes to stderr
        raise KoptError(failure)


@click.command("bench")
@click.argument("task", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--candidate", type=click.Path(dir_okay=False, path_type=Path), help="A task file with an optimized entry.")
@click.option("--cases", "case_list", default=None, help="Comma-separated CASES indices (default: all).")
@click.option("--held-out", "held_out", is_flag=True, help="Time the HELD_OUT shapes (--cases then indexes them).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=900.0, show_default=True, help="Seconds before the child is killed.")
@click.option("--target", default=None, help="ascend[:ARCH] times on an Ascend NPU (needs one); default: the CUDA GPU.")
@json_option
def bench_cmd(task: Path, candidate: Path | None, case_list: str | None, held_out: bool, timeout_s: float,
              target: str | None, as_json: bool) -> None:
    """Kernel-only GPU timing with L2 flush and fresh inputs, placed on the device roofline."""
    from kopt.harness.bench import bench

    _must_exist(task, candidate)
    _no_npu_run("bench", target)
    try:
        cases = [int(i) for i in case_list.split(",")] if case_list else None
    except ValueError as exc:
        raise KoptError(f"--cases takes comma-separated integers, got {case_list!r}") from exc
    result = bench(task, candidate, timeout_s=timeout_s, cases=cases, held_out=held_out)
    failure = None if result.ok else f"{candidate or task}: {result.reason}: {result.message}"
    if as_json:
        emit_json({**result.to_dict(), **({"error": failure, "kind": result.reason} if failure else {})})
    elif result.ok:
        ceil = result.ceilings
        table = Table(title=f"bench {candidate or task} on {result.device}")
        for col in ("case", "kernel ms", "min", "p90", "event ms", "runs", "GB/s", "TFLOP/s", "roofline", "bound"):
            table.add_column(col)
        for c in result.cases:
            frac = None if c.roofline_fraction is None else 100 * c.roofline_fraction
            table.add_row(str(c.case), f"{c.kernel_ms:.4f}", f"{c.kernel_ms_min:.4f}", f"{c.kernel_ms_p90:.4f}",
                          f"{c.event_ms:.4f}", str(c.runs), _fmt(c.gbps, ".0f"), _fmt(c.tflops, ".1f"),
                          "-" if frac is None else f"{frac:.0f}%", c.bound or "-")
        console = rich_console()
        console.print(table)
        rates = ", ".join(f"{k} {v:.0f}" for k, v in ceil.get("matmul_tflops", {}).items())
        console.print(f"ceilings: copy {ceil.get('copy_gbps', 0):.0f} GB/s; matmul TFLOP/s: {rates}")
    if failure:  # under --json the result above carries it; the line goes to stderr
        raise KoptError(failure)


def _no_npu_run(what: str, target: str | None) -> None:
    """Say in one line when this target's kernels cannot be run here (a mistyped target is an error too)."""
    from kopt.config import load_settings
    from kopt.diagnose.targets import target_for

    target = target or load_settings().target
    target_for(target).check_runnable(what, target)


def _must_exist(*paths: Path | None) -> None:
    for path in paths:
        if path is not None and not path.is_file():
            raise KoptError(f"{path}: no such file")
