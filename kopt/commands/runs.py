"""`kopt runs list|show|pending|diff|report`: read the rounds store of this workspace."""

from __future__ import annotations

import datetime
import difflib
from pathlib import Path

import click
from rich.table import Table

from kopt.errors import KoptError
from kopt.output import console as rich_console
from kopt.output import emit_json


def _store(required: bool = True):
    """The workspace's rounds store; None when it has none and `required` is False (an empty list is no error)."""
    from kopt.config import load_settings
    from kopt.rounds.store import RoundsStore

    state = load_settings().state_dir
    if not (state / "rounds.sqlite").is_file():
        if not required:
            return None
        raise KoptError(f"no rounds store in {state} (run `kopt optimize TASK` in this workspace first)")
    return RoundsStore(state)


@click.group("runs")
def runs_cmd() -> None:
    """Runs and rounds recorded by `kopt optimize` in this workspace."""


@runs_cmd.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_cmd(as_json: bool) -> None:
    """Every run: task, status, rounds, best speedup."""
    from kopt.rounds.store import best_round

    store = _store(required=False)
    rows = []
    for run in store.runs() if store else []:
        rounds = store.rounds(run.run_id)
        best = best_round(rounds)
        rows.append({"run_id": run.run_id, "task": run.task_path, "status": run.status, "stop_reason": run.stop_reason,
                     "created": run.created, "rounds": len(rounds), "best_round": best.n if best else None,
                     "speedup": best.speedup_initial if best else None})
    if as_json:
        return emit_json(rows)
    if not rows:
        from kopt.config import load_settings

        return click.echo(f"no runs in {load_settings().state_dir} yet (start one with `kopt optimize TASK`)")
    table = Table(title=f"runs in {store.root}")
    for col in ("run", "task", "started", "status", "rounds", "best"):
        table.add_column(col, overflow="fold")
    for r in rows:
        started = datetime.datetime.fromtimestamp(r["created"]).strftime("%Y-%m-%d %H:%M")
        best = f"round {r['best_round']} x{r['speedup']:.2f}" if r["best_round"] else "-"
        table.add_row(r["run_id"], Path(r["task"]).name, started, r["status"], str(r["rounds"]), best)
    rich_console().print(table)


@runs_cmd.command("show")
@click.argument("run_id", metavar="RUN")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def show_cmd(run_id: str, as_json: bool) -> None:
    """One run's rounds: level, hypothesis, proposer, outcome, speedups, and why rounds failed."""
    from kopt.commands.optimize import rounds_table

    store = _store()
    run = store.run(run_id)
    rounds = [r.to_dict() for r in store.rounds(run.run_id)]
    if as_json:
        return emit_json({"run": run.to_dict(), "rounds": rounds})
    console = rich_console()
    console.print(f"run {run.run_id}: {run.task_path} - {run.status}" + (f" ({run.stop_reason})" if run.stop_reason else ""))
    console.print(f"timing: {run.timing.get('reason')}")
    opts = run.options
    console.print(f"proposer: {opts.get('proposer')}  grounding: {opts.get('grounding', 'full')}  "
                  f"policy: {opts.get('policy', 'progressive')}  model: {opts.get('model') or '-'}  "
                  f"llm exchange: {opts.get('llm_exchange') or '-'}", highlight=False)
    console.print(rounds_table(rounds, f"rounds of {run.run_id}"))
    for r in rounds:
        if r["message"]:
            console.print(f"  round {r['n']} {r['outcome']}: {r['message']}")
        for s in r["skipped"]:
            console.print(f"  round {r['n']} passed over {s}", style="dim")


@runs_cmd.command("pending")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def pending_cmd(as_json: bool) -> None:
    """LLM requests that wait for a reply (the prompt exchange), across runs: where each request is and where
    its reply goes."""
    store = _store(required=False)
    rows = []
    for p in store.pending() if store else []:
        reply = Path(p["reply_path"])
        run = store.run(p["run_id"])
        rows.append({"run_id": p["run_id"], "task": run.task_path, "status": run.status, "round": p["n"],
                     "request_id": p["request_id"], "request": str(reply.with_name(f"{p['request_id']}.request.json")),
                     "request_md": str(reply.with_name(f"{p['request_id']}.request.md")), "reply": str(reply),
                     "replied": reply.is_file(), "grounding": run.options.get("grounding", "full"),
                     "campaign": run.options.get("campaign"), "op": run.options.get("op")})
    if as_json:
        return emit_json(rows)
    if not rows:
        return click.echo("no LLM request waits for a reply")
    table = Table(title=f"{len(rows)} LLM request(s) waiting")
    for col in ("run", "round", "grounding", "request", "reply expected", "replied"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["run_id"], str(r["round"]), r["grounding"], r["request_md"], r["reply"],
                      "yes" if r["replied"] else "no")
    rich_console().print(table)


@runs_cmd.command("diff")
@click.argument("run_id", metavar="RUN")
@click.argument("a")
@click.argument("b")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def diff_cmd(run_id: str, a: str, b: str, as_json: bool) -> None:
    """Unified diff between two rounds' candidates (0 = the initial kernel)."""
    store = _store()
    run = store.run(run_id)

    def source(n: str) -> tuple[str, str]:
        if not n.isdigit():
            raise KoptError(f"round {n!r} is not a number (0 is the initial kernel)")
        if int(n) == 0:
            return "initial", store.get(run.task_hash)
        rnd = store.round(run.run_id, int(n))
        if rnd.candidate is None:
            raise KoptError(f"round {n} of {run.run_id} has no candidate ({rnd.outcome}: {rnd.message})")
        return f"round {n}", store.get(rnd.candidate)

    (la, sa), (lb, sb) = source(a), source(b)
    diff = "".join(difflib.unified_diff(sa.splitlines(True), sb.splitlines(True), la, lb))
    if as_json:
        return emit_json({"run_id": run.run_id, "a": a, "b": b, "diff": diff})
    click.echo(diff or f"{la} and {lb} are identical")


@runs_cmd.command("report")
@click.argument("run_id", metavar="RUN")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write a self-contained HTML page (log-scale speedup charts, diffs; no scripts).")
@click.option("--md", "md_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the Markdown to this file instead of printing it.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def report_cmd(run_id: str, html_path: Path | None, md_path: Path | None, as_json: bool) -> None:
    """The run as Markdown (and, with --html, a page): per-case speedups on a log scale, regressions
    flagged, each round's evidence and its candidate's diff against the initial kernel."""
    from kopt.rounds.report import build, html_page, markdown, write

    store = _store()
    report = build(store, store.run(run_id))
    text = markdown(report)
    if md_path:
        write(md_path, text)
    if html_path:
        write(html_path, html_page(report))
    if as_json:
        regressions = {v.round.n: [c.label for c in v.regressions] for v in report.views if v.regressions}
        return emit_json({"run_id": report.run.run_id, "markdown": text, "md": str(md_path) if md_path else None,
                          "html": str(html_path) if html_path else None, "regressions": regressions})
    if md_path:
        click.echo(f"Markdown report: {md_path}")
    else:
        click.echo(text)
    if html_path:
        click.echo(f"HTML report: {html_path}")
