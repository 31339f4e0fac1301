"""`kopt eval report`: the campaign's Markdown tables and SVG plots, from one or more rounds stores; or the
figures of an experiment's arms (one campaign each) and the paired comparison of two of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kopt.errors import KoptError
from kopt.output import emit_json
from kopt.vocabulary import KEPT


def _why(store: Any, run: Any) -> str:
    """Why a run stopped where it did, from its rounds: the stop reason and what failed."""
    failed = [f"{r.hypothesis_key} ({r.outcome})" for r in store.rounds(run.run_id)
              if r.outcome not in KEPT]
    parts = [run.stop_reason or run.status]
    if failed:
        parts.append("failed: " + ", ".join(failed[:4]) + (" ..." if len(failed) > 4 else ""))
    return "; ".join(parts)[:300].replace("|", "/")


def accounting(store_dirs: list[Path], campaign: str, grounding: str | None = None) -> dict[str, Any]:
    """Per-operator results, per-policy summaries, the environment and shortfall reasons of a campaign (of one
    grounding arm of it, when given)."""
    from kopt.campaign import campaign_runs, environment, known_references
    from kopt.rounds.store import RoundsStore
    from kopt.suite_report import POLICIES, operator_result, summarize

    stores = []
    for d in store_dirs:
        if not (Path(d) / "rounds.sqlite").is_file():
            raise KoptError(f"{d}: no rounds store here (a workspace's .kopt/ folder)")
        stores.append(RoundsStore(Path(d)))
    try:
        runs = campaign_runs(stores, campaign, grounding) if grounding else campaign_runs(stores, campaign)
        groundings = sorted({(r.options or {}).get("grounding", "full") for s in stores for r in s.runs()
                             if (r.options or {}).get("campaign") == campaign})
        results, reasons, env = [], {}, {}
        for (_op, policy), (store, run) in sorted(runs.items()):
            # torch's references depend only on the task source: a run without its own uses another run's (the
            # ablation's other arm, another policy), as the campaign itself does
            refs = run.options.get("references") or (known_references(store, run) if run.timing.get("available") else None)
            results.append(operator_result(run, store.rounds(run.run_id), run.options.get("family", ""), policy, refs))
            reasons[run.run_id] = _why(store, run)
            env = env or (run.options.get("env") if run.timing.get("available") else {}) or {}
    finally:
        for s in stores:
            s.close()
    policies = [p for p in POLICIES if any(r.policy == p for r in results)]
    return {"results": results, "reasons": reasons, "env": env or environment(), "groundings": groundings,
            "summaries": {p: summarize([r for r in results if r.policy == p]) for p in policies}}


def arm_results(store_dirs: list[Path], arms: list[str]) -> dict[str, Any]:
    """Per arm its operator results, one per operator; and the environment. An arm is a campaign name, or
    CAMPAIGN/GROUNDING for one grounding arm of a campaign (kopt eval suite --grounding)."""
    out: dict[str, Any] = {"arms": {}, "env": {}}
    for arm in arms:
        campaign, _, grounding = arm.partition("/")
        report = accounting(store_dirs, campaign, grounding or None)
        results = report["results"]
        if not results:
            what = f"campaign {campaign!r}" + (f" with grounding {grounding!r}" if grounding else "")
            raise KoptError(f"no runs of {what} in {', '.join(map(str, store_dirs))} (an arm is CAMPAIGN or "
                            "CAMPAIGN/GROUNDING, as run by kopt eval suite --campaign NAME --grounding G)")
        ops = [r.op for r in results]
        if len(set(ops)) != len(ops):
            raise KoptError(f"campaign {arm!r} ran several policies per operator; an arm is one run per operator "
                            "(compare policies with kopt eval report --campaign NAME)")
        out["arms"][arm] = results
        out["env"] = out["env"] or report["env"]
    return out


@click.command("report")
@click.option("--campaign", default="suite", show_default=True)
@click.option("--arm", "arms", multiple=True,
              help="Report an experiment's arm: CAMPAIGN, or CAMPAIGN/GROUNDING (e.g. llm/none); repeat for several.")
@click.option("--compare", nargs=2, default=None, metavar="ARM_A ARM_B",
              help="Both arms' figures and their paired per-operator comparison (ratio ARM_A / ARM_B).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap interval (--compare).")
@click.option("--resamples", type=click.IntRange(100, 1_000_000), default=10000, show_default=True,
              help="Bootstrap resamples over operators (--compare).")
@click.option("--store", "stores", multiple=True, type=click.Path(path_type=Path),
              help="Rounds stores to merge (repeat); default: this workspace's .kopt/.")
@click.option("--plots", "plot_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the SVG plots here (default evals/plots/<campaign>).")
@click.option("--append", "append_to", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Append the Markdown section to this file (e.g. evals/RESULTS.md) in one write.")
@click.option("--leave-out", "left_out", multiple=True, metavar="OP",
              help="With --arm/--compare: leave this operator out of every figure (repeat for several).")
@click.option("--title", default=None, help="Section title (default: 'Suite campaign: <campaign>').")
@click.option("--json", "as_json", is_flag=True, help="Print the accounting as JSON instead.")
def report_cmd(campaign: str, arms: tuple[str, ...], compare: tuple[str, str] | None, seed: int, resamples: int,
               stores: tuple[Path, ...], plot_dir: Path | None, append_to: Path | None, left_out: tuple[str, ...],
               title: str | None, as_json: bool) -> None:
    """Markdown tables (policy comparison, per operator, shortfalls) and SVG plots of a suite campaign; with --arm
    or --compare, an experiment's arms (campaigns) side by side."""
    from kopt.config import load_settings
    from kopt.suite_report import plots, report_markdown

    store_dirs = list(stores) or [load_settings().state_dir]
    if arms or compare:
        _report_arms(store_dirs, list(dict.fromkeys([*(compare or ()), *arms])), compare, seed, resamples,
                     append_to, title, as_json, set(left_out))
        return
    if left_out:
        raise KoptError("--leave-out applies to an experiment's arms: use it with --arm or --compare")
    report = accounting(store_dirs, campaign)
    if len(report["groundings"]) > 1:  # one row per operator would hide one arm's run behind the other's
        arms = " ".join(f"{campaign}/{g}" for g in report["groundings"])
        raise KoptError(f"campaign {campaign!r} holds the grounding arms {', '.join(report['groundings'])}: report "
                        f"them with --compare {arms} (or --arm {campaign}/GROUNDING)")
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


def _report_arms(store_dirs: list[Path], arms: list[str], compare: tuple[str, str] | None, seed: int,
                 resamples: int, append_to: Path | None, title: str | None, as_json: bool,
                 left_out: set[str]) -> None:
    from kopt.suite_report import arm_summary, arms_markdown, compare_arms

    if compare and compare[0] == compare[1]:
        raise KoptError(f"--compare {compare[0]} {compare[1]}: give two different arms")
    data = arm_results(store_dirs, arms)
    unknown = left_out - {r.op for results in data["arms"].values() for r in results}
    if unknown:
        raise KoptError(f"--leave-out {', '.join(sorted(unknown))}: no such operator in {', '.join(arms)}")
    data["arms"] = {name: [r for r in results if r.op not in left_out] for name, results in data["arms"].items()}
    title = title or f"Experiment: {' vs '.join(arms)}" + (f" (left out: {', '.join(sorted(left_out))})" if left_out else "")
    paired = compare_arms(*(data["arms"][a] for a in compare), seed=seed, resamples=resamples) if compare else None
    if as_json:
        emit_json({"env": data["env"], "compare": paired, "arms": {
            name: {"summary": arm_summary(results), "results": [r.to_dict() for r in results]}
            for name, results in data["arms"].items()}})
        return
    text = arms_markdown(data["arms"], data["env"], title, paired)
    if append_to:
        with open(append_to, "a") as fh:
            fh.write("\n" + text)
        click.echo(f"appended to {append_to}", err=True)
    else:
        click.echo(text)


def _relative(path: Path, start: Path) -> str:
    import os

    return os.path.relpath(path.resolve(), start.resolve())
