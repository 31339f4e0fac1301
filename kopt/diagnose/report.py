"""Rendering diagnoses and answers for people (rich tables); `--json` callers use the objects' to_dict."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from kopt.cli import console as rich_console
from kopt.diagnose.findings import Finding


def evidence_cell(f: Finding, limit: int = 3) -> str:
    """The strongest evidence lines: source, where it points, what it says (deepest level first)."""
    ranked = sorted(f.evidence, key=lambda e: e.level, reverse=True)[:limit]
    return "\n".join(f"[{e.level} {e.source}] {e.location or ''} {e.summary[:140]}".replace("  ", " ") for e in ranked)


def render_diagnosis(diag: Any, console: Console | None = None, top: int = 8) -> None:
    console = console or rich_console()
    levels = Table(title=f"kopt diagnose {diag.task} ({diag.target})", show_lines=False)
    for col in ("level", "status", "why", "findings", "s"):
        levels.add_column(col)
    for r in diag.levels:
        levels.add_row(r.level, r.status, r.reason, str(r.findings), f"{r.seconds:.1f}")
    console.print(levels)
    if not diag.findings:
        console.print("no findings: nothing in the source, the profile or the lowered code points at a slowdown")
        return
    table = Table(show_lines=True)
    for col in ("#", "level", "finding", "conf", "message", "evidence (source, location)", "conditions", "patterns"):
        table.add_column(col, overflow="fold")
    for i, f in enumerate(diag.findings[:top], 1):
        table.add_row(str(i), f.level, f.id, f"{f.confidence:.2f}", f.message[:400], evidence_cell(f),
                      "\n".join(f"- {c[:200]}" for c in f.conditions[:3]), "\n".join(f.patterns[:3]))
    console.print(table)


def render_answer(answer: Any, console: Console | None = None) -> None:
    console = console or rich_console()
    console.print(f"[bold]Q:[/] {answer.question}")
    if answer.prose:
        console.print(f"\n{answer.prose}\n", highlight=False)
    for title, items in (("Facts at the line", answer.facts), ("Findings", answer.findings_text),
                         ("Compiler symbols (pass-note anchors)", answer.symbols),
                         ("Mechanism (pass notes)", answer.mechanism), ("Fix", answer.fix)):
        if items:
            console.print(f"[bold]{title}[/]")
            for item in items:
                console.print(f"  - {item}", highlight=False)
    if answer.citations:
        console.print("[bold]Sources[/]")
        for i, c in enumerate(answer.citations, 1):
            console.print(f"  [{i}] {c['cite']}  {c.get('symbol') or ''}", highlight=False)
    for note in answer.notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False)
