"""`kopt eval`: the measurement suites (retrieval, diagnosis, optimization).

Each subcommand lives in its own module and loads only when called, like the top-level
commands: add a line to EVAL_COMMANDS ("name": "module:attribute" under kopt.commands).
"""

from __future__ import annotations

from pathlib import Path

import click

from kopt.commands.groups import LazyGroup
from kopt.errors import KoptError
from kopt.index.llm_rerank import LLM_MODE as RERANKED
from kopt.output import emit_json, json_option

EVAL_COMMANDS: dict[str, str] = {
    "retrieval": "evals:retrieval_cmd",
    "diagnosis": "eval_diagnosis:diagnosis_cmd",
    "suite": "eval_suite:suite_cmd",
    "report": "eval_report:report_cmd",
}


class _LazyEvalGroup(LazyGroup):
    lazy = EVAL_COMMANDS


@click.group("eval", cls=_LazyEvalGroup)
def eval_cmd() -> None:
    """Measure kopt: retrieval quality, diagnosis accuracy, optimization results."""


@click.command("retrieval")
@click.option("--gold", "gold_path", type=click.Path(dir_okay=False, path_type=Path), default=Path("evals/retrieval/gold.yaml"),
              show_default=True, help="Gold set: questions with their gold path, symbol and lines.")
@click.option("--modes", default="dense,sparse,hybrid,hybrid+ltr", show_default=True,
              help="Comma-separated retrieval modes to compare: dense, sparse, hybrid, hybrid+ltr (the learned "
                   "ranker's order, kopt's default), hybrid+graph (hybrid lifted along the symbol graph) and "
                   "hybrid+llm (hybrid reranked by the configured LLM).")
@click.option("--k", type=click.IntRange(1, 100), default=10, show_default=True, help="Hits per question.")
@click.option("--corpora", default="triton,passes,patterns", show_default=True,
              help="Corpora searched for every question.")
@click.option("--split", type=click.Choice(["dev", "test", "all"]), default="all", show_default=True,
              help="Half of the gold set to run: dev (tune on it), test (held out: aggregate only), or all.")
@click.option("--misses", "show_misses", type=int, default=15, show_default=True,
              help="How many missed questions to list per mode (0: none).")
@json_option
def retrieval_cmd(gold_path: Path, modes: str, k: int, corpora: str, split: str, show_misses: int,
                  as_json: bool) -> None:
    """Score retrieval on a gold set: recall@1/5/10, MRR, nDCG at file and symbol level, per mode."""
    from kopt.config import load_settings
    from kopt.retrieval_eval import evaluate, in_split, load_gold

    pins, questions = load_gold(gold_path)
    mode_list = [m.strip() for m in modes.split(",") if m.strip()]
    corpus_list = [c.strip() for c in corpora.split(",") if c.strip()]
    if not mode_list:
        raise KoptError("--modes is empty; give e.g. dense,sparse,hybrid")
    questions = in_split(questions, split)
    asked = len(questions)
    questions = [q for q in questions if any(g.corpus in corpus_list for g in q.gold)]
    if not questions:
        raise KoptError(f"{gold_path}: no question has a gold in the corpora searched ({','.join(corpus_list)})")

    from rich.progress import Progress

    from kopt.index import open_index
    from kopt.index.llm_rerank import configured_llm, search_reranked

    settings = load_settings()
    llm = configured_llm(settings) if RERANKED in mode_list else None
    fell_back: dict[str, str] = {}  # question -> why its latest rerank kept the hybrid order (a success clears it)
    index = open_index(settings)
    try:
        served = [c for c in index.corpora() if c["name"] in corpus_list]
        _warn_if_off_pin(served, pins)

        def search(question: str, mode: str):
            if mode != RERANKED:
                return index.search(question, corpus=corpus_list, k=k, mode=mode)
            hits, reason = search_reranked(index, llm, question, k, corpus=corpus_list)
            if reason:
                fell_back[question] = reason
            else:
                fell_back.pop(question, None)  # so a failed warm-up query (the first question, again) is not counted
            return hits

        with Progress(transient=True, disable=as_json) as progress:
            task = progress.add_task("retrieval eval", total=len(questions) * len(mode_list))
            report = evaluate(questions, search, mode_list, k=k, on_progress=lambda: progress.advance(task))
    finally:
        index.close()
    if llm is not None:
        failed = [why for why in fell_back.values() if "waiting for the LLM reply" not in why]
        repliers = getattr(llm, "repliers", None)  # the prompt exchange: the models its replies name
        name = f"{llm.model}: {', '.join(repliers)}" if repliers else getattr(llm, "model", type(llm).__name__)
        report["modes"][RERANKED].update(llm=name, rerank_fallbacks=len(failed),
                                         rerank_fallback_reasons=sorted(set(failed)),
                                         rerank_waiting=len(fell_back) - len(failed))
    report.update(gold=str(gold_path), split=split, corpora=corpus_list, pins=pins, skipped=asked - len(questions), index=served)
    if as_json:
        emit_json(report)
    else:
        _print_report(report, show_misses)


def _warn_if_off_pin(served: list[dict], pins: dict) -> None:
    """Gold lines are valid at the pinned commit only; say so when the index holds another version."""
    for corpus in served:
        pinned = str((pins.get(corpus["name"]) or {}).get("commit", ""))
        version = str(corpus.get("version") or "")
        if pinned and version and not pinned.startswith(version):
            click.echo(f"kopt: warning: index has {corpus['name']}@{version}, gold set is pinned at {pinned[:8]}; "
                       "symbol-level scores may be off", err=True)


def _print_report(report: dict, show_misses: int) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    k = report["k"]
    metrics = [f"recall@{n}" for n in (1, 5, 10) if n <= k] + ["mrr", f"ndcg@{k}"]
    headers = {"mrr": "MRR", f"ndcg@{k}": f"nDCG@{k}", **{f"recall@{n}": f"R@{n}" for n in (1, 5, 10)}}
    skipped = f" ({report['skipped']} skipped: gold outside these corpora)" if report["skipped"] else ""
    table = Table(title=f"retrieval eval: {report['questions']} questions ({report['split']}){skipped}, k={k}, "
                        f"corpora={','.join(report['corpora'])}")
    table.add_column("mode")
    table.add_column("level")
    for name in metrics:
        table.add_column(headers[name], justify="right")
    table.add_column("MRR 95% CI", justify="right")
    table.add_column("ms/q", justify="right")
    for mode, result in report["modes"].items():
        for level in ("file", "symbol"):
            table.add_row(mode, level, *(f"{result[level][m]:.3f}" for m in metrics), _interval(result[level]),
                          f"{result['mean_query_ms']:.1f}" if level == "file" else "")
    table.caption = _fallback_note(report)
    console.print(table)
    if report["split"] == "all":
        _print_splits(console, report)
    if report["split"] == "test":
        console.print("test half: aggregate scores only (misses are listed for dev and all)")
        return
    if show_misses <= 0:
        return
    for mode, result in report["modes"].items():
        missed = [r for r in result["per_question"] if r["file_rank"] is None]
        if not missed:
            continue
        console.print(f"[bold]{mode}[/]: {len(missed)} missed at file level (top {k}):")
        for row in missed[:show_misses]:
            top = row["top"][0] if row["top"] else "no hits"
            console.print(f"  {row['id']}: {row['question'][:90]}  [dim]-> {top}[/]", highlight=False)


def _fallback_note(report: dict) -> str | None:
    """How many questions a reranked mode measured in hybrid order because its LLM failed, with the first reason."""
    from rich.markup import escape

    notes = []
    for mode, result in report["modes"].items():
        if "rerank_fallbacks" not in result:
            continue
        if result["rerank_waiting"]:  # the prompt exchange wrote requests: their questions are scored as hybrid's
            notes.append(f"{mode}: {result['rerank_waiting']} of {report['questions']} questions wait for a reply in "
                         "the prompt exchange, scored in hybrid order: write the replies, then run the same command again")
        notes.append(f"{mode}: the LLM ({result['llm']}) failed on {result['rerank_fallbacks']} of {report['questions']} "
                     "questions, scored in hybrid order" + (f"; first reason: {result['rerank_fallback_reasons'][0]}"
                                                            if result["rerank_fallbacks"] else ""))
    return escape("\n".join(notes)) or None


def _print_splits(console, report: dict) -> None:
    """File and symbol R@10 / MRR of each half, so one run over all questions shows dev and test side by side."""
    from rich.table import Table

    n = max(n for n in (1, 5, 10) if n <= report["k"])
    table = Table(title="by split")
    for name in ("mode", "split", f"file R@{n}", "file MRR", "file MRR 95% CI", f"symbol R@{n}", "symbol MRR"):
        table.add_column(name, justify="left" if name in ("mode", "split") else "right")
    recall = f"recall@{n}"
    for mode, result in report["modes"].items():
        for split, scores in result["by_split"].items():
            table.add_row(mode, split, f"{scores['file'][recall]:.3f}", f"{scores['file']['mrr']:.3f}",
                          _interval(scores["file"]), f"{scores['symbol'][recall]:.3f}", f"{scores['symbol']['mrr']:.3f}")
    console.print(table)


def _interval(scores: dict) -> str:
    low_high = scores.get("mrr_ci95")
    return f"{low_high[0]:.2f}-{low_high[1]:.2f}" if low_high else ""
