"""`kopt synthesize`: turn validated rounds into new or re-weighted patterns (kopt/synthesize.py)."""

from __future__ import annotations

from pathlib import Path

import click

from kopt.errors import KoptError
from kopt.output import emit_json, json_option


@click.command("synthesize")
@click.option("--runs", "runs", default=None, help="Comma-separated run ids (or unique prefixes); default: every run.")
@click.option("--store", "store_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The rounds store to read (a .kopt/ folder); default: this workspace's.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where patterns go; default KOPT_HOME/patterns (--out corpora/patterns to contribute them).")
@click.option("--dry-run", is_flag=True, help="Print what would change; write nothing.")
@click.option("--no-index", is_flag=True, help="Write the pattern files but do not upsert them into the index.")
@click.option("--diagnose-parents", is_flag=True,
              help="Run kopt's diagnosis (L1-L3, no GPU) on the kernel each LLM round changed, for the symptoms of "
                   "patterns made from LLM wins (seconds per kernel); default: L1 and the rounds' recorded diagnoses.")
@json_option
def synthesize_cmd(runs: str | None, store_dir: Path | None, out_dir: Path | None, dry_run: bool, no_index: bool,
                   diagnose_parents: bool, as_json: bool) -> None:
    """Group validated wins (a recipe round by finding and recipe, an LLM round by the kind of change its diff
    makes); update covered patterns' stats, create patterns from >= 2 uncovered wins and L1 shortcuts from >= 2
    wins only profiling or IR had found, and upsert them into the `patterns` collection."""
    from kopt.config import kopt_home, load_settings
    from kopt.rounds.store import RoundsStore
    from kopt.synthesize import synthesize, upsert_index

    settings = load_settings()
    root = store_dir or settings.state_dir
    if not (Path(root) / "rounds.sqlite").is_file():
        raise KoptError(f"{root}: no rounds store here (run kopt optimize or kopt eval suite first, or pass --store)")
    out = out_dir or kopt_home() / "patterns"
    store = RoundsStore(root)
    try:
        run_ids = [r.strip() for r in runs.split(",") if r.strip()] if runs else None
        actions = synthesize(store, out, run_ids=run_ids, dry_run=dry_run, diagnose_parents=diagnose_parents)
    finally:
        store.close()
    written = [Path(a.path) for a in actions if a.path and a.kind != "skip"]
    fresh = [p for p in written if "kind: synthesized" in p.read_text()] if not dry_run else []
    note = "dry run: nothing written" if dry_run else ("index: skipped (--no-index)" if no_index
                                                       else upsert_index(settings, fresh))
    if as_json:
        emit_json({"out": str(out), "dry_run": dry_run, "index": note, "actions": [a.to_dict() for a in actions]})
        return
    _print(actions, out, note, dry_run)


def _print(actions, out: Path, note: str, dry_run: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not actions:
        console.print("no new validated rounds or failures to synthesize")
    else:
        table = Table(title=f"synthesis {'(dry run) ' if dry_run else ''}-> {out}")
        for col in ("action", "pattern", "wins", "tries", "families", "why"):
            table.add_column(col)
        for a in actions:
            table.add_row(("would " if dry_run and a.kind != "skip" else "") + a.kind, a.pattern_id, str(a.wins),
                          str(a.tries), ",".join(a.families), a.reason)
        console.print(table)
    console.print(note, highlight=False)
