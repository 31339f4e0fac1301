"""`kopt eval suite`: optimize every suite operator under one or more policies (kopt/campaign.py)."""

from __future__ import annotations

from pathlib import Path

import click

from kopt.errors import KoptError
from kopt.output import emit_json


def _gpus(value: str) -> int | None:
    if value == "all":
        return None
    if not value.isdigit():
        raise KoptError(f"--gpus {value!r}: give a number or 'all'")
    return int(value)


@click.command("suite")
@click.option("--ops", default=None, help="Comma-separated operators (file stems in the suite); default: all.")
@click.option("--suite", "suite_dir", type=click.Path(path_type=Path), default=Path("evals/suite"), show_default=True)
@click.option("--rounds", type=click.IntRange(1, 200), default=10, show_default=True, help="Round budget per operator.")
@click.option("--minutes", type=click.FloatRange(min=0, min_open=True), default=None, help="Time budget per operator.")
@click.option("--proposer", type=click.Choice(["recipes", "llm", "auto"]), default="recipes", show_default=True)
@click.option("--policy", "policies", default="progressive", show_default=True,
              help="Comma-separated: progressive (escalate as designed), profile-only (L2 evidence only), "
                   "always-deep (every level every round).")
@click.option("--gpus", default="all", show_default=True, help="Worker processes, one per GPU: a number or 'all'.")
@click.option("--workers-per-gpu", "per_gpu", type=click.IntRange(1, 16), default=1, show_default=True,
              help="Workers sharing each GPU: their CPU work (compiles, ncu set-up) overlaps, timing takes turns.")
@click.option("--campaign", default="suite", show_default=True,
              help="Campaign name in the rounds store: the same name resumes and merges.")
@click.option("--ray", "ray_address", default=None, help="Send jobs to a Ray cluster (ADDRESS, or 'local').")
@click.option("--job-timeout", type=click.FloatRange(min=0, min_open=True), default=None, help="Seconds before a job is abandoned (it stays resumable).")
@click.option("--grounding", type=click.Choice(["full", "none"]), default="full", show_default=True,
              help="The LLM prompt's arm: with kopt's diagnosis (full) or without it (none: no diagnosis is run). "
                   "Each arm is its own set of runs in the campaign.")
@click.option("--llm-exchange", "llm_exchange", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="DIR", help="The LLM is a folder of request and reply files; runs without their replies stop "
                                  "`waiting`, and the same command again advances them.")
@click.option("--json", "as_json", is_flag=True, help="Print job results and the accounting as JSON.")
def suite_cmd(ops: str | None, suite_dir: Path, rounds: int, minutes: float | None, proposer: str, policies: str,
              gpus: str, per_gpu: int, campaign: str, ray_address: str | None, job_timeout: float | None,
              grounding: str, llm_exchange: Path | None, as_json: bool) -> None:
    """Optimize the suite's operators and report the campaign accounting; a second call resumes."""
    from kopt.campaign import plan_jobs, run_campaign, suite_ops, visible_gpus
    from kopt.config import load_settings
    from kopt.optimize import POLICIES
    from kopt.rounds.store import RoundsStore

    chosen = [p.strip() for p in policies.split(",") if p.strip()]
    bad = [p for p in chosen if p not in POLICIES]
    if bad or not chosen:
        raise KoptError(f"--policy {bad[0] if bad else policies!r}: use {', '.join(POLICIES)}")
    exchange = str(llm_exchange.resolve()) if llm_exchange else None
    if proposer == "llm" and not (exchange or load_settings().llm_provider):
        raise KoptError("--proposer llm needs an LLM: set llm_provider (and llm_model) in your config or KOPT_LLM_*, "
                        "or answer its requests as files with --llm-exchange DIR")
    if grounding == "none" and proposer != "llm":
        raise KoptError("--grounding none leaves the diagnosis out of the LLM's prompt: use it with --proposer llm")
    names = [n.strip() for n in ops.split(",") if n.strip()] if ops else None
    operators = suite_ops(suite_dir, names)
    wanted, have = _gpus(gpus), visible_gpus()
    if wanted is not None and wanted > have and not ray_address:
        raise KoptError(f"--gpus {wanted}: only {have} GPU(s) visible")
    workers = have if wanted is None else wanted
    settings = load_settings()
    store = RoundsStore(settings.state_dir)
    try:
        jobs, finished = plan_jobs(store, operators, chosen, campaign, rounds, proposer, minutes, grounding, exchange)
    finally:
        store.close()

    from rich.console import Console

    console = Console(stderr=True, quiet=as_json)
    console.print(f"campaign {campaign!r} (grounding {grounding}): {len(jobs)} job(s) to run, {len(finished)} already done; "
                  f"{workers or 'no'} GPU(s){f' x {per_gpu} workers' if workers and per_gpu > 1 else ''}"
                  f"{' on Ray ' + ray_address if ray_address else ''}")

    def show(result: dict) -> None:
        status = (f"x{result['speedup']:.2f}" if result.get("speedup") else "no timed win") if result["ok"] \
            else f"[red]failed[/]: {result['error']}"
        if result.get("status") == "waiting":
            status = f"waiting for {len(result['waiting'])} LLM reply after {result['rounds']} round(s)"
        console.print(f"  {result['op']} \\[{result['policy']}] gpu={result.get('gpu')} "
                      f"{result.get('seconds', 0):.0f}s: {status}", highlight=False)

    results = run_campaign(jobs, settings.workspace, workers, ray_address=ray_address, on_result=show,
                           timeout_s=job_timeout, per_gpu=per_gpu)
    from kopt.commands.eval_report import accounting

    report = accounting([settings.state_dir], campaign)
    if as_json:
        emit_json({"campaign": campaign, "jobs": results, "skipped": finished, **report,
                   "results": [r.to_dict() for r in report["results"]]})
        return
    from kopt.suite_report import summary_markdown

    click.echo(summary_markdown(report["summaries"]))
    failed = [r for r in results if not r["ok"]]
    if failed:
        click.echo(f"{len(failed)} job(s) failed; run the same command again to resume them", err=True)
    waiting = sum(len(r.get("waiting") or []) for r in results)
    if waiting:
        import shlex
        import sys

        click.echo(f"{waiting} LLM request(s) wait for replies (kopt runs pending); once written, resume with: "
                   f"kopt {shlex.join(sys.argv[1:])}", err=True)
