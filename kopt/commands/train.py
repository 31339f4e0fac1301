"""`kopt index train`: kopt's retrieval models trained on the mined pairs, in one command (kopt.index.train)."""

from __future__ import annotations

from pathlib import Path

import click

from kopt.index.train import ANCHOR_MINERS
from kopt.output import emit_json, json_option


@click.command("train")
@click.option("--pairs", "pairs_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("evals/retrieval/pairs"),
              show_default=True, help="Folder of mined pairs (python -m kopt.ingest.pairs).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Where the models go (default: <KOPT_HOME>/models, where kopt finds them by name).")
@click.option("--minutes", type=click.FloatRange(0.1), default=25.0, show_default=True,
              help="Training time budget, shared by the models (hard negative mining comes on top).")
@click.option("--limit", type=click.IntRange(1), default=1500, show_default=True,
              help="Pairs drawn (seeded) from the folder; fewer train faster on a CPU.")
@click.option("--only", type=click.Choice(["embedder", "reranker", "questions"]),
              help="Train one model only; `questions`: the question embedder (needs no index).")
@click.option("--teacher", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="An LLM's graded judgments of the hybrid top 20 (evals/retrieval/teacher/labels.jsonl): the "
                   "reranker learns from them instead of the mined pairs.")
@click.option("--epochs", type=click.IntRange(1), default=1, show_default=True,
              help="Passes over the reranker's rows, or the question embedder's anchors.")
@click.option("--anchors", default=",".join(ANCHOR_MINERS), show_default=True,
              help="The question embedder's anchor pair files, comma-separated (e.g. engineer).")
@click.option("--seed", type=int, default=0, show_default=True)
@json_option
def train_cmd(pairs_dir: Path, out: Path | None, minutes: float, limit: int, only: str | None, teacher: Path | None,
              epochs: int, anchors: str, seed: int, as_json: bool) -> None:
    """Train the code-aware embedder and the cross-encoder reranker on the mined pairs, with hard negatives from
    the hybrid retriever over the index in KOPT_HOME (ingest the pairs' corpora first); or, with `--only questions`,
    the question embedder, from the doc2query pairs alone. Runs at nice 10; uses the GPU when there is one."""
    from kopt.commands.knowledge import steps, yield_cpu_to_readers
    from kopt.config import kopt_home, load_settings
    from kopt.index import open_index
    from kopt.index.train import QUESTION_EMBEDDER, train, train_question_embedder

    yield_cpu_to_readers()
    out = out or kopt_home() / "models"
    if only == "questions":
        anchor_miners = tuple(a.strip() for a in anchors.split(",") if a.strip())
        if not anchor_miners:
            raise click.BadParameter("name at least one pair file, e.g. engineer", param_hint="--anchors")
        with steps(not as_json) as step:
            report = train_question_embedder(pairs_dir, out, seconds=minutes * 60, seed=seed, epochs=epochs,
                                             anchor_miners=anchor_miners, progress=step)
        if as_json:
            emit_json({**report, "out": str(out)})
            return
        click.echo(f"question embedder: {report['steps']}/{report['planned_steps']} steps in {report['seconds']} s, loss "
                   f"{report['first_loss']} -> {report['last_loss']}, {report['weights_bytes'] / 1e6:.1f} MB; "
                   f"{out / QUESTION_EMBEDDER} (use it: kopt ingest CORPUS --embed-model {QUESTION_EMBEDDER})")
        return
    index = open_index(load_settings())
    try:
        with steps(not as_json) as step:
            report = train(index, pairs_dir, out, seconds=minutes * 60, limit=limit, seed=seed,
                           which=(only,) if only else ("embedder", "reranker"), teacher=teacher,
                           epochs=epochs, progress=step)
    finally:
        index.close()
    report["out"] = str(out)
    if as_json:
        emit_json(report)
        return
    for name in ("embedder", "reranker"):
        if name in report:
            r = report[name]
            click.echo(f"{name}: {r['steps']}/{r['planned_steps']} steps in {r['seconds']} s, loss {r['first_loss']} -> "
                       f"{r['last_loss']}, {r['weights_bytes'] / 1e6:.1f} MB")
    click.echo(f"{report['examples']} examples ({report['device']}); models in {out}")
