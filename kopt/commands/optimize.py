"""`kopt optimize`: the loop on the command line, with a live view of the rounds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from kopt.vocabulary import Outcome

OUTCOME_STYLE = {Outcome.IMPROVED: "bold green", Outcome.SLOWER: "yellow", Outcome.UNTIMED: "cyan",
                 Outcome.INCORRECT: "red", Outcome.COMPILE_ERROR: "red", Outcome.TIMEOUT: "magenta", Outcome.CRASH: "red",
                 Outcome.REJECTED: "red", Outcome.PROPOSER_ERROR: "dim", Outcome.UNPARSABLE: "dim",
                 Outcome.NOT_VALIDATED: "dim"}  # every Outcome (tests/test_outcomes.py)


def fmt_x(value: float | None) -> str:
    return "-" if value is None else f"x{value:.2f}"


def rounds_table(rounds: list[dict[str, Any]], title: str) -> Table:
    table = Table(title=title, expand=False)
    for col in ("#", "level", "hypothesis", "proposer", "outcome", "vs initial", "vs best", "s"):
        table.add_column(col, overflow="fold")
    for r in rounds:
        table.add_row(str(r["n"]), r["level_reached"] or "-", r["hypothesis"][:110], r["proposer"],
                      Text(r["outcome"], style=OUTCOME_STYLE.get(r["outcome"], "")), fmt_x(r["speedup_initial"]),
                      fmt_x(r["speedup_best"]), f"{r['seconds']:.0f}")
    return table


class LiveView:
    """Receives the loop's events and redraws the rounds table plus the current phase (draw=False, under --json:
    only remembers the run, for the resume line after Ctrl-C)."""

    def __init__(self, console: Console, draw: bool = True):
        self.console, self.rounds, self.phase, self.title = console, [], "starting", "kopt optimize"
        self.draw, self.run_id = draw, None
        self.live = Live(self.render(), console=console, refresh_per_second=4, transient=False)

    def render(self) -> Group:
        return Group(rounds_table(self.rounds, self.title), Text(self.phase, style="dim"))

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        if self.draw and not self.live.is_started:  # at the first event: a bad task is one error line, no table
            self.live.start()
        if kind == "run":
            run = data["run"]
            self.run_id = run["run_id"]
            self.title = f"kopt optimize {Path(run['task_path']).name}  run {run['run_id']}"
            self.rounds = []
        elif kind == "phase":
            self.phase = f"round {data['n']}: {data['phase']}..." if data["n"] else f"{data['phase']}..."
        elif kind == "round":
            self.rounds.append(data["round"])
            r = data["round"]
            self.phase = f"round {r['n']}: {r['outcome']}" + (f" - {r['message']}" if r.get("message") else "")
        elif kind == "stop":
            self.phase = f"stopped: {data['stop_reason']}"
        self.live.update(self.render())


@click.command("optimize")
@click.argument("task", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--rounds", type=click.IntRange(1, 1000), default=None, help="Round budget (default 5).")
@click.option("--minutes", type=click.FloatRange(0.1), default=None, help="Time budget in minutes.")
@click.option("--proposer", type=click.Choice(["recipes", "llm", "auto"]), default=None,
              help="Deterministic recipes, the LLM, or recipes first then the LLM when one is configured (default).")
@click.option("--model", default=None, help="LLM model (overrides llm_model from settings).")
@click.option("--resume", "resume", default=None, metavar="RUN", help="Continue a run from its last committed round.")
@click.option("--more", type=click.IntRange(1, 1000), default=None, metavar="N",
              help="With --resume: N rounds beyond those the run has (--rounds there is the run's total).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to write the best kernel (default: TASK_kopt.py next to the task).")
@click.option("--grounding", type=click.Choice(["full", "none"]), default=None,
              help="What the LLM's prompt holds besides the kernel, its timings and the rounds: kopt's diagnosis "
                   "(full, the default) or nothing (none: no diagnosis is run; needs --proposer llm).")
@click.option("--llm-exchange", "llm_exchange", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="DIR", help="The LLM is a folder: requests are written to DIR, replies read from it "
                                  "(DIR/<id>.reply.md); a run without its replies stops `waiting`.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary (no live view).")
def optimize_cmd(task: Path | None, rounds: int | None, minutes: float | None, proposer: str | None,
                 model: str | None, resume: str | None, more: int | None, out: Path | None, grounding: str | None,
                 llm_exchange: Path | None, as_json: bool) -> None:
    """Optimize TASK in auditable, resumable rounds: diagnose, propose one candidate, validate, time, record."""
    from kopt.optimize import optimize

    if more is not None and not resume:
        raise click.UsageError("--more needs --resume RUN")
    if more is not None and rounds is not None:
        raise click.UsageError("give either --rounds (the run's total) or --more (rounds beyond those it has)")
    kwargs = dict(rounds=rounds, minutes=minutes, proposer=proposer, model=model, resume=resume, out=out,
                  grounding=grounding, llm_exchange=llm_exchange, more=more)
    from kopt.output import console as rich_console
    from kopt.output import emit_json

    console = rich_console()
    view = LiveView(console, draw=not as_json)
    try:
        summary = optimize(task, on_event=view, **kwargs)
    except KeyboardInterrupt:
        view.live.stop()
        if view.run_id:
            click.echo(f"run {view.run_id} interrupted; its committed rounds are kept. Resume: "
                       f"kopt optimize --resume {view.run_id} (--more N for N more rounds)", err=True)
        raise
    finally:
        view.live.stop()
    if as_json:
        emit_json(summary)
        return
    console.line()
    here = "" if Path(summary["workspace"]) == Path.cwd().resolve() else f"cd {summary['workspace']} && "  # its .kopt/
    if summary["status"] == "waiting":
        console.print(f"[bold]waiting[/]: {len(summary['waiting'])} LLM request(s) wait for a reply:")
        for w in summary["waiting"]:
            console.print(f"  {w['request']}\n    -> write {w['reply']}", highlight=False)
        console.print(f"then resume: {here}{summary['resume']}", highlight=False)
        return
    best = summary["best_round"]
    if best:
        console.print(f"best: round {best}, [bold green]{fmt_x(summary['speedup'])}[/] vs the initial kernel; "
                      f"written to {summary['out']}")
    elif not summary["timing"]["available"]:
        console.print(f"no timed improvement: {summary['timing']['reason']}; nothing written")
    else:
        console.print("no candidate beat the initial kernel; nothing written")
    console.print(f"report: {here}kopt runs report {summary['run_id']}   resume: {here}kopt optimize --resume "
                  f"{summary['run_id']}", highlight=False)
