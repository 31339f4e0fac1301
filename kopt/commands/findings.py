"""`kopt findings [ID ...]`: the root-cause ids kopt names, what each means, and which id it uses where two
could fit (vocabulary.BOUNDARIES), so a user reading a diagnosis, or someone labelling a case, reads them alike."""

from __future__ import annotations

import click

from kopt.errors import KoptError
from kopt.output import console, emit_json, json_option
from kopt.vocabulary import BOUNDARIES, FINDING_IDS


@click.command("findings")
@click.argument("ids", nargs=-1, metavar="[ID]...")
@click.option("--markdown", is_flag=True, help="Print a Markdown table (for a brief or a document).")
@json_option
def findings_cmd(ids: tuple[str, ...], markdown: bool, as_json: bool) -> None:
    """The finding ids: meaning, and the rule where another id could fit."""
    unknown = [i for i in ids if i not in FINDING_IDS]
    if unknown:
        raise KoptError(f"unknown finding id {unknown[0]!r}", hint=f"known: {', '.join(sorted(FINDING_IDS))}")
    rows = [{"id": i, "meaning": FINDING_IDS[i], "boundary": BOUNDARIES.get(i, "")} for i in (ids or FINDING_IDS)]
    if as_json:
        emit_json({"findings": rows})
    elif markdown:
        click.echo("| id | meaning | where another id could fit |\n|---|---|---|")
        for r in rows:
            click.echo(f"| {r['id']} | {r['meaning']} | {r['boundary']} |")
    else:
        from rich.table import Table

        table = Table(title="kopt's finding ids", show_lines=True)
        for col in ("id", "meaning", "where another id could fit"):
            table.add_column(col, overflow="fold")
        for r in rows:
            table.add_row(r["id"], r["meaning"], r["boundary"])
        console().print(table)
