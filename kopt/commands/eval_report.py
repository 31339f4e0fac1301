"""`kopt eval report`: the campaign's Markdown tables and SVG plots, from one or more rounds stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kopt.cli import emit_json
from kopt.errors import KoptError


def _why(store: Any, run: Any) -> str:
    """Why a run stopped where it did, from its rounds: the stop reason and what failed."""
    failed = [f"{r.hypothesis_key} ({r.outcome})" for r in store.rounds(run.run_id)
              if r.outcome not in ("improved", "untimed")]
    parts = [run.stop_reason or run.status]
    if failed:
        parts.append("failed: " + ", ".join(failed[:4]) + (" ..." if len(failed) > 4 else ""))
    return "; ".join(parts)[:300].replace("|", "/")


def accounting(store_dirs: list[Path], campaign: str) -> dict[str, Any]:
    """Per-operator results, per-policy summaries, the environment and shortfall reasons of a campaign."""
    from kopt.campaign import campaign_runs, environment
    from kopt.rounds.store import RoundsStore
    from kopt.suite_report import POLICIES, operator_result, summarize

    stores = []
    for d in store_dirs:
        if not (Path(d) / "rounds.sqlite").is_file():
            raise KoptError(f"{d}: no rounds store here (a workspace's .kopt/ folder)")
        stores.append(RoundsStore(Path(d)))
    try:
        runs = campaign_runs(stores, campaign)
        results, reasons, env = [], {}, {}
        for (op, policy), (store, run) in sorted(runs.items()):
            results.append(operator_result(run, store.rounds(run.run_id), run.options.get("family", ""), policy))
            reasons[run.run_id] = _why(store, run)
            env = env or (run.options.get("env") if run.timing.get("available") else {}) or {}
    finally:
        for s in stores:
            s.close()
    policies = [p for p in POLICIES if any(r.policy == p for r in results)]
    return {"results": results, "reasons": reasons, "env": env or environment(),
            "summaries": {p: summarize([r for r in results if r.policy == p]) for p in policies}}


@click.command("report")
@click.option("--campaign", default="suite", show_default=True)
@click.option("--store", "stores", multiple=True, type=click.Path(path_type=Path),
              help="Rounds stores to merge (repeat); default: this workspace's .kopt/.")
@click.option("--plots", "plot_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the SVG plots here (default evals/plots/<campaign>).")
@click.option("--append", "append_to", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Append the Markdown section to this file (e.g. evals/RESULTS.md) in one write.")
@click.option("--title", default=None, help="Section title (default: 'Suite campaign: <campaign>').")
@click.option("--json", "as_json", is_flag=True, help="Print the accounting as JSON instead.")
def report_cmd(campaign: str, stores: tuple[Path, ...], plot_dir: Path | None, append_to: Path | None,
               title: str | None, as_json: bool) -> None:
    """Markdown tables (policy comparison, per operator, shortfalls) and SVG plots of a suite campaign."""
    from kopt.config import load_settings
    from kopt.suite_report import plots, report_markdown

    report = accounting(list(stores) or [load_settings().state_dir], campaign)
    if not report["results"]:
        raise KoptError(f"no runs of campaign {campaign!r} in {', '.join(map(str, stores)) or '.kopt'} "
                        "(kopt eval suite --campaign NAME)")
    if as_json:
        emit_json({**report, "results": [r.to_dict() for r in report["results"]]})
        return
    plot_dir = plot_dir or Path("evals/plots") / campaign
    plot_dir.mkdir(parents=True, exist_ok=True)
    for name, svg in plots(report["results"], report["summaries"]).items():
        (plot_dir / name).write_text(svg)
    rel = plot_dir if not append_to else Path(_relative(plot_dir, append_to.parent))
    text = report_markdown(report["results"], report["env"], title or f"Suite campaign: {campaign}", str(rel),
                           report["reasons"])
    if append_to:
        with open(append_to, "a") as fh:
            fh.write("\n" + text)
        click.echo(f"appended to {append_to}; plots in {plot_dir}", err=True)
    else:
        click.echo(text)


def _relative(path: Path, start: Path) -> str:
    import os

    return os.path.relpath(path.resolve(), start.resolve())
