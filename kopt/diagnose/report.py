"""Rendering diagnoses and answers for people; `--json` callers use the objects' to_dict.

A diagnosis reads like pytest's failure sections: the escalation in a few lines, then one block per finding
with its cause, what it explains, the task's own source lines, every piece of evidence, what a fix must
satisfy and the command to run next. Everything wraps to the console's width; an excerpt that is shortened
says so and `--verbose` shows it whole.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any, Callable

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from kopt.diagnose.escalate import symptom
from kopt.output import console as rich_console
from kopt.vocabulary import FINDING_IDS, Evidence, Finding

SHOWN_FINDINGS = 8  # findings shown in full; the rest are named in one line (--verbose shows them all)
EXCERPT_LINES = 8  # lines of an IR/SASS/compiler excerpt before it is shortened
TEXT_CHARS = 600  # characters of a prose detail (a pass note's mechanism) before it is shortened
STATUS = {"used": "used", "skipped": "skipped", "unavailable": "unavailable", "not_needed": "not needed"}
STATUS_STYLE = {"used": "green", "skipped": "yellow", "unavailable": "yellow", "not_needed": "dim"}


def shown_path(path: str) -> str:
    """A path relative to the working directory when it lies below it (what a user would type)."""
    try:
        return os.path.relpath(path) if Path(path).resolve().is_relative_to(Path.cwd()) else path
    except ValueError:
        return path


def shown_location(location: str | None) -> str:
    """`file:line` with the file as shown_path; compiler citations (path:lines@version) stay as they are."""
    if not location or "@" in location:
        return location or ""
    file, sep, line = location.rpartition(":")
    return f"{shown_path(file)}:{line}" if sep and line.isdigit() else shown_path(location)


def indent(renderable: RenderableType, left: int) -> Padding:
    return Padding(renderable, (0, 0, 0, left), expand=False)


def hanging(rows: list[tuple[Text | str, Text | str]]) -> Table:
    """Rows of (label, body) where the body wraps under itself, not under the label (strings are plain text,
    never rich markup: evidence is full of brackets)."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for label, body in rows:
        grid.add_row(*(Text(cell) if isinstance(cell, str) else cell for cell in (label, body)))
    return grid


def text(value: str, style: str = "") -> Text:
    return Text(value, style=style, overflow="fold")


def shortened(lines: list[str], verbose: bool, limit: int = EXCERPT_LINES) -> list[str]:
    """The lines, or the first `limit` and a line that says how many more there are and how to see them."""
    if verbose or len(lines) <= limit:
        return lines
    return [*lines[:limit], f"… {len(lines) - limit} more lines (--verbose shows them)"]


def shortened_text(value: str, verbose: bool) -> str:
    if verbose or len(value) <= TEXT_CHARS:
        return value
    return f"{value[:TEXT_CHARS].rstrip()}… ({len(value) - TEXT_CHARS} more characters; --verbose shows them)"


def evidence_details(e: Evidence, verbose: bool) -> list[Text]:
    """What an evidence item carries beyond its summary: IR/SASS/compiler excerpts, a pass note's mechanism,
    the pass-by-pass history; with verbose, every other field too."""
    data, out = e.data or {}, []
    excerpt = data.get("excerpt") or data.get("op")
    if excerpt:
        lines = excerpt if isinstance(excerpt, list) else str(excerpt).splitlines()
        out += [text(f"│ {line}", "cyan") for line in shortened([str(x) for x in lines], verbose)]
    if data.get("mechanism"):
        out.append(text(shortened_text(str(data["mechanism"]), verbose), "italic"))
    for step in data.get("history") or []:
        if isinstance(step, dict):
            out.append(text(f"│ {step.get('pass')}: {step.get('metric')} {step.get('before')} -> {step.get('after')}",
                            "cyan"))
    if verbose:
        rest = {k: v for k, v in data.items() if k not in ("excerpt", "op", "mechanism", "history")}
        if rest:
            out.append(text(", ".join(f"{k}={v}" for k, v in rest.items()), "dim"))
    return out


def source_lines(finding: Finding, task: str) -> list[RenderableType]:
    """The task file's lines the finding points at, numbered like a traceback."""
    wanted = set(finding.kernel_lines)
    for e in finding.evidence:
        file, _, line = (e.location or "").rpartition(":")
        if line.isdigit() and file and Path(file).resolve() == Path(task).resolve():
            wanted.add(int(line))
    try:
        lines = Path(task).read_text().splitlines()
    except OSError:
        return []
    wanted = sorted(n for n in wanted if 1 <= n <= len(lines))
    if not wanted:
        return []
    width = len(str(wanted[-1]))
    rows, previous = [], None
    for n in wanted:
        if previous is not None and n > previous + 1:
            rows.append((Text(f"  {'⋮':>{width}}", style="dim"), ""))
        rows.append((Text(f"> {n:>{width}} │", style="bold"), Text(lines[n - 1].rstrip(), style="bold")))
        previous = n
    return [text(shown_path(task), "dim"), hanging(rows)]


def explains(finding: Finding) -> str:
    """The observation the finding explains: its message without the compiler paragraph an L4 explanation
    appends (that paragraph is the pass-note evidence, shown in full below)."""
    return finding.message.split("; compiler: ")[0]


def next_commands(finding: Finding, task: str, compiles: bool = True) -> list[str]:
    quoted = shlex.quote(shown_path(task))
    line = finding.kernel_lines[0] if finding.kernel_lines else None
    if finding.id == "compile_failure":
        return [f"fix {shown_path(task)}{f':{line}' if line else ''}, then: kopt diagnose {quoted}"]
    if symptom(finding):
        return [f"kopt diagnose {quoted} --level L3  (the lowered code says why)"]
    commands = [f"kopt optimize {quoted}"] if finding.patterns and compiles else []
    if line:
        question = shlex.quote(f"why {finding.id.replace('_', ' ')} here")
        commands.append(f"kopt ask {question} --kernel {quoted}:{line}")
    return commands


def evidence_block(f: Finding, shown_in: dict[tuple, int], number: int, verbose: bool) -> list[RenderableType]:
    """Each evidence item, shallow levels first; an item a finding above already showed is named, not repeated
    (with verbose it is repeated)."""
    order = {lvl: n for n, lvl in enumerate(("L1", "L2", "L3", "L4"))}
    out: list[RenderableType] = []
    for e in sorted(f.evidence, key=lambda e: order.get(e.level, 9)):
        key = (e.level, e.source, e.summary, e.location)
        where = shown_location(e.location)
        head = Text.assemble((f"{e.level} {e.source}", "magenta"), (f" · {where}" if where else "", "dim"))
        if key in shown_in and not verbose:
            head.append(f" (shown under finding {shown_in[key]})", style="dim")
            out.append(indent(head, 2))
            continue
        shown_in.setdefault(key, number)
        out.append(indent(Group(head, indent(Group(text(e.summary), *evidence_details(e, verbose)), 2)), 2))
    return out


def finding_block(i: int, total: int, f: Finding, task: str, console: Console, verbose: bool,
                  shown_in: dict[tuple, int], compiles: bool) -> None:
    console.print()
    console.rule(Text(f" {i} of {total} · {f.id} · {f.level} · confidence {f.confidence:.2f} ", style="bold"),
                 align="left", style="blue")
    console.print(hanging([(Text("Cause", style="bold"), FINDING_IDS[f.id]), (Text("Explains", style="bold"), explains(f))]))
    src = source_lines(f, task)
    if src:
        console.print(indent(Group(*src), 2))
    if f.evidence:
        console.print(Text("Evidence", style="bold"))
        console.print(Group(*evidence_block(f, shown_in, i, verbose)))
    if f.conditions:
        console.print(Text("A fix must", style="bold"))
        console.print(indent(hanging([("-", c) for c in f.conditions]), 1))
    if f.patterns:
        console.print(hanging([(Text("Patterns", style="bold"), ", ".join(f.patterns))]))
    commands = next_commands(f, task, compiles)
    if commands:
        console.print(Text("Next", style="bold"))
        for c in commands:
            console.print(indent(text(c, "green"), 2))


def escalation_summary(diag: Any, console: Console) -> None:
    """Which levels ran, why each stopped, in how many seconds: one row each, the reason wrapping under itself."""
    console.print(Text.assemble(("kopt diagnose ", "bold"), shown_path(diag.task), f" · target {diag.target}"),
                  overflow="fold")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True, justify="right")
    grid.add_column(overflow="fold")
    runs = list(diag.levels)
    while runs:  # levels skipped for one reason share a row: "L2-L4 not needed"
        r, same = runs[0], 1
        while same < len(runs) and r.status != "used" and (runs[same].status, runs[same].reason) == (r.status, r.reason):
            same += 1
        label = r.level if same == 1 else f"{r.level}-{runs[same - 1].level}"
        runs = runs[same:]
        used = r.status == "used"
        count = f"{r.findings} finding{'s' if r.findings != 1 else ''}: " if used else ""
        grid.add_row(Text(f" {label}", style="bold"), Text(STATUS.get(r.status, r.status), STATUS_STYLE.get(r.status, "")),
                     f"{r.seconds:.1f} s" if used else "", Text(f"{count}{r.reason}"))
    console.print(grid)


def emit(console: Console, render: Callable[[Console], None]) -> None:
    """Print what `render` prints; piped output loses the padding rich leaves at the end of lines."""
    if console.is_terminal:
        return render(console)
    with console.capture() as captured:
        render(console)
    console.file.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))


def render_diagnosis(diag: Any, console: Console | None = None, verbose: bool = False) -> None:
    emit(console or rich_console(), lambda c: _render(diag, c, verbose))


def _render(diag: Any, console: Console, verbose: bool) -> None:
    escalation_summary(diag, console)
    if not diag.findings:
        console.print("\nno findings: nothing in the source, the profile or the lowered code points at a slowdown")
        return
    shown = diag.findings if verbose else diag.findings[:SHOWN_FINDINGS]
    shown_in: dict[tuple, int] = {}
    compiles = not any(f.id == "compile_failure" for f in diag.findings)
    for i, f in enumerate(shown, 1):
        finding_block(i, len(diag.findings), f, diag.task, console, verbose, shown_in, compiles)
    rest = diag.findings[len(shown):]
    if rest:
        console.print()
        console.print(text(f"{len(rest)} more (--verbose shows them): "
                           + ", ".join(f"{f.id} ({f.level}, {f.confidence:.2f})" for f in rest)))


def render_answer(answer: Any, console: Console | None = None) -> None:
    emit(console or rich_console(), lambda c: _render_answer(answer, c))


def _render_answer(answer: Any, console: Console) -> None:
    console.print(Text.assemble(("Q: ", "bold"), answer.question))
    if answer.prose:
        console.print(Text(f"\n{answer.prose}\n"))
    for title, items in (("Facts at the line", answer.facts), ("Findings", answer.findings_text),
                         ("Compiler symbols (pass-note anchors)", answer.symbols),
                         ("Mechanism (pass notes)", answer.mechanism), ("Fix", answer.fix)):
        if items:
            console.print(Text(title, style="bold"))
            console.print(indent(hanging([("-", item) for item in items]), 1))
    if answer.citations:
        console.print(Text("Sources", style="bold"))
        console.print(indent(hanging([(f"[{i}]", f"{c['cite']}  {c.get('symbol') or ''}")
                                      for i, c in enumerate(answer.citations, 1)]), 1))
    for note in answer.notes:
        console.print(hanging([(Text("note:", style="yellow"), note)]))
