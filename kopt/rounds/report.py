"""Run reports that do not hide a regression: Markdown (terminal, PR) and one self-contained HTML page
(inline SVG, no scripts, no external files).

Speedups are drawn on a log scale, so x0.5 sits as far left of the 1x line as x2 sits right of it (a linear
scale squeezes every slowdown into the space between 0 and 1). A case more than 2 % slower than the initial
kernel, or than the best round before it, is flagged in red and in words. Each round shows the evidence that
led to it and its candidate's diff against the initial kernel."""

from __future__ import annotations

import difflib
import html
import math
from dataclasses import dataclass, field
from pathlib import Path

from kopt.errors import KoptError
from kopt.rounds.store import Round, RoundsStore, Run, best_round
from kopt.vocabulary import Outcome

TOLERANCE = 1.02  # a case this much slower (time ratio) than the initial or the best before it is a regression
MAX_SCALE = 6  # the log axis spans at most x1/64 .. x64; beyond that a value is drawn at the edge
REGRESSION_MARK = "▼ regression"
LEVEL_Y = {None: 0, "L1": 1, "L2": 2, "L3": 3, "L4": 4}
OUTCOME_COLOR = {Outcome.IMPROVED: "#2a9d4b", Outcome.SLOWER: "#e9a23b", Outcome.UNTIMED: "#7a8ca6",
                 Outcome.INCORRECT: "#d64545", Outcome.COMPILE_ERROR: "#a33", Outcome.TIMEOUT: "#8a2be2",
                 Outcome.CRASH: "#555", Outcome.REJECTED: "#c06", Outcome.PROPOSER_ERROR: "#999",
                 Outcome.UNPARSABLE: "#999"}  # every round outcome, in the legend's order (tests/test_outcomes.py)
FASTER, SAME, REGRESSED = "#2a9d4b", "#888", "#d62828"


@dataclass
class CaseResult:
    label: str
    initial_ms: float | None
    ms: float | None
    speedup: float | None  # initial ms / this round's ms
    flags: list[str] = field(default_factory=list)  # why this case is a regression, in words


@dataclass
class RoundView:
    round: Round
    cases: list[CaseResult]  # flagged against the initial kernel and the best improved round before this one
    diff: str | None  # unified diff of the candidate against the initial kernel; None without a candidate

    @property
    def regressions(self) -> list[CaseResult]:
        return [c for c in self.cases if c.flags]


@dataclass
class Report:
    run: Run
    views: list[RoundView]
    best: Round | None
    scale: int  # the log2 half-range shared by every chart, so charts compare at a glance


def case_label(case) -> str:
    """k=v,... for a size dict; any other case (a tuple of sizes, a name) as it reads."""
    return ",".join(f"{k}={v}" for k, v in case.items()) if isinstance(case, dict) else str(case)


def _x(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"x{value:.{digits}f}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _tick(k: int) -> str:
    return f"x{2.0 ** k:g}"


def case_results(run: Run, rnd: Round, before: Round | None, labels: list[str]) -> list[CaseResult]:
    """Per-case speedups of one round, with a flag for every case slower than the initial kernel or than the
    best round before it beyond the tolerance."""
    out = []
    for i, label in enumerate(labels):
        base = run.baseline[i] if i < len(run.baseline) else None
        ms = rnd.case_times[i] if i < len(rnd.case_times) else None
        res = CaseResult(label, base, ms, base / ms if base and ms else None)
        if base and ms and ms > base * TOLERANCE:
            res.flags.append("slower than initial")
        prev = before.case_times[i] if before and i < len(before.case_times) else None
        if prev and ms and ms > prev * TOLERANCE:
            res.flags.append(f"{_x(prev / ms)} vs round {before.n} (best before)")
        out.append(res)
    return out


def _candidate_diff(store: RoundsStore, initial: str, rnd: Round) -> str | None:
    if rnd.candidate is None:
        return None
    try:
        source = store.get(rnd.candidate)
    except KoptError as exc:
        return f"(no diff: {exc})"
    return "".join(difflib.unified_diff(initial.splitlines(True), source.splitlines(True), "initial",
                                        f"round {rnd.n}")) or "(the candidate is identical to the initial kernel)"


def build(store: RoundsStore, run: Run) -> Report:
    """Everything the report shows, read from the store once."""
    rounds = store.rounds(run.run_id)
    cases = run.initial.get("cases") or [{"case": i} for i in range(len(run.baseline))]
    labels = [case_label(c) for c in cases]
    try:
        initial = store.get(run.task_hash)
    except KoptError:
        initial = ""
    views = []
    for rnd in rounds:
        before = best_round([r for r in rounds if r.n < rnd.n])
        views.append(RoundView(rnd, case_results(run, rnd, before, labels), _candidate_diff(store, initial, rnd)))
    logs = [abs(math.log2(s)) for v in views for s in [v.round.speedup_initial] + [c.speedup for c in v.cases] if s]
    scale = min(MAX_SCALE, max([1] + [math.ceil(v - 1e-9) for v in logs]))
    return Report(run, views, best_round(rounds), scale)


# --- Markdown -----------------------------------------------------------------------------------------

def text_bar(speedup: float | None, scale: int, half: int = 10) -> str:
    """The speedup as a log-scale bar around a `|` at 1x: `████|` is slower, `|████` faster."""
    if not speedup:
        return " " * half + "?" + " " * half
    log = math.log2(speedup)
    k = max(-half, min(half, round(log / scale * half)))
    if k == 0 and abs(log) > math.log2(TOLERANCE):  # a change beyond the tolerance always shows
        k = 1 if log > 0 else -1
    left = "█" * -k if k < 0 else ""
    right = "█" * k if k > 0 else ""
    return left.rjust(half) + "|" + right.ljust(half)


def _speedup_words(r: Round) -> str:
    return f"{_x(r.speedup_initial)} vs initial" if r.speedup_initial else "not timed"


def _best_line(report: Report) -> str:
    best = report.best
    if not best:
        return "no timed improvement"
    view = next(v for v in report.views if v.round.n == best.n)
    line = f"round {best.n}, {_x(best.speedup_initial)} geomean vs the initial kernel"
    if view.regressions:
        line += f", but {REGRESSION_MARK} on {len(view.regressions)} of {len(view.cases)} cases"
    return line


def md_legend(scale: int) -> str:
    return f"""## How to read this report

- Speedup = initial kernel ms / candidate ms, per case (median kernel time); a round's speedup is the geomean.
- The bars are on a log scale around `|` = x1 (the initial kernel): `|███` is faster, `███|` slower, from
  {_tick(-scale)} to {_tick(scale)}; x0.5 is as far from `|` as x2.
- {REGRESSION_MARK}: the case is more than {(TOLERANCE - 1) * 100:.0f} % slower than the initial kernel or than
  the best round before it (the flag says which and by how much).
- untimed: validated on every case but not timed (no GPU); it is never a speedup.
- The diff is the round's candidate against the initial kernel (`-` initial, `+` candidate).
"""


def markdown(report: Report) -> str:
    run = report.run
    lines = [f"# kopt run {run.run_id}", "",
             f"- task: `{run.task_path}`", f"- status: {run.status}" + (f" ({run.stop_reason})" if run.stop_reason else ""),
             f"- proposer: {run.options.get('proposer')}, budget: {run.options.get('rounds')} rounds"
             + (f", {run.options['minutes']:g} min" if run.options.get("minutes") else ""),
             f"- timing: {run.timing.get('reason')}",
             f"- best: {_best_line(report)}", "",
             "## Rounds", "",
             "| # | level | hypothesis | proposer | outcome | vs initial | vs best | s |",
             "|---|---|---|---|---|---|---|---|"]
    for v in report.views:
        r = v.round
        hyp = r.hypothesis.replace("|", "\\|")[:160]
        lines.append(f"| {r.n} | {r.level_reached or '-'} | {hyp} | {r.proposer} | {r.outcome} | "
                     f"{_x(r.speedup_initial)} | {_x(r.speedup_best)} | {r.seconds:.0f} |")
    for v in report.views:
        lines += ["", *round_markdown(v, report.scale)]
    lines += ["", md_legend(report.scale)]
    return "\n".join(lines)


def round_markdown(view: RoundView, scale: int) -> list[str]:
    r = view.round
    head = f"## Round {r.n}: {r.outcome}, {_speedup_words(r)}"
    if view.regressions:
        head += f", {REGRESSION_MARK} on {len(view.regressions)} of {len(view.cases)} cases"
    lines = [head, "", *(f"- {k}: {v}" for k, v in evidence(r))]
    if any(c.ms for c in view.cases):
        lines += ["", f"| case | initial ms | ms | vs initial | log scale {_tick(-scale)} .. {_tick(scale)} | flag |",
                  "|---|---|---|---|---|---|"]
        for c in view.cases:
            flag = f"{REGRESSION_MARK}: {'; '.join(c.flags)}" if c.flags else ""
            lines.append(f"| {c.label} | {_ms(c.initial_ms)} | {_ms(c.ms)} | {_x(c.speedup)} | "
                         f"`{text_bar(c.speedup, scale)}` | {flag} |")
    if view.diff:
        lines += ["", "<details><summary>candidate diff vs the initial kernel</summary>", "", "```diff",
                  view.diff.rstrip("\n"), "```", "</details>"]
    return lines


def evidence(r: Round) -> list[tuple[str, str]]:
    """The evidence behind a round, as (label, text) pairs: what was believed, on what, and what came of it."""
    levels = "; ".join(f"{lv.get('level')} {lv.get('status')}" + (f" ({lv['reason']})" if lv.get("reason") else "")
                       for lv in r.levels)
    rows = [("hypothesis", r.hypothesis), ("findings", ", ".join(r.finding_ids) or "-"),
            ("pattern", r.pattern_id or "-"), ("level reached", r.level_reached or "-"),
            ("diagnosis levels", levels or "-"), ("proposer", r.proposer),
            ("outcome", r.outcome + (f": {r.message}" if r.message else ""))]
    rows += [("passed over", s) for s in r.skipped]
    if r.evidence:
        rows.append(("artifacts", ", ".join(f"{k} {v[:12]}" for k, v in sorted(r.evidence.items()))))
    return rows


# --- HTML ---------------------------------------------------------------------------------------------

def log_chart(rows: list[tuple[str, float | None, str, str]], scale: int, caption: str, label_chars: int) -> str:
    """A horizontal log-scale dot chart around the 1x line: one row per (label, speedup, colour, note). Charts
    with the same scale and label_chars put their 1x lines one above the other."""
    half, row, top = 160, 22, 26
    label_w = 12 + 7 * min(48, label_chars)  # 7 px a character of 11 px text
    one = label_w + half
    note_w = 16 + 7 * max([len(note) + 6 for _, _, _, note in rows] + [10])
    width, height = label_w + 2 * half + note_w, top + row * len(rows) + 6
    body = []
    for k in range(-scale, scale + 1):
        x = one + k / scale * half
        body.append(f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{height - 4}" stroke="#e3e3e3"/>'
                    f'<text x="{x:.1f}" y="{top - 10}" font-size="10" text-anchor="middle" fill="#555">{_tick(k)}</text>')
    body.append(f'<line class="one" x1="{one}" y1="{top - 6}" x2="{one}" y2="{height - 4}" stroke="#222" '
                f'stroke-width="1.5" stroke-dasharray="4 3"/>')
    for i, (label, speedup, color, note) in enumerate(rows):
        y = top + i * row + row / 2
        body.append(f'<text x="4" y="{y + 4:.1f}" font-size="11">{html.escape(label[:48])}'
                    f'<title>{html.escape(label)}</title></text>')
        if not speedup:
            body.append(f'<text x="{one + 6}" y="{y + 4:.1f}" font-size="11" fill="#777">{html.escape(note)}</text>')
            continue
        log = max(-scale, min(scale, math.log2(speedup)))
        x = one + log / scale * half
        body.append(f'<line x1="{one}" y1="{y:.1f}" x2="{x:.1f}" y2="{y:.1f}" stroke="{color}" stroke-width="6" '
                    f'stroke-opacity="0.35"/><circle class="value" cx="{x:.2f}" cy="{y:.1f}" r="5" fill="{color}" '
                    f'data-speedup="{speedup:.6g}"><title>{html.escape(label)}: {_x(speedup)}</title></circle>'
                    f'<text x="{label_w + 2 * half + 14}" y="{y + 4:.1f}" font-size="11" fill="{color}">'
                    f'{_x(speedup)} {_red_flag(note)}</text>')
    return (f'<figure><figcaption>{html.escape(caption)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" '
            f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{html.escape(caption)}">' + "".join(body) + "</svg></figure>")


def _red_flag(note: str) -> str:
    """The note with its regression flag, and what follows it, in red whatever the row's colour."""
    head, mark, tail = html.escape(note).partition(REGRESSION_MARK)
    return head + (f'<tspan fill="{REGRESSED}" font-weight="600">{mark}{tail}</tspan>' if mark else "")


def level_plot(views: list[RoundView]) -> str:
    w, h, pad = 560, 160, 36
    step = (w - 2 * pad) / max(1, len(views))
    body = [f'<text x="4" y="{h - pad - (h - 2 * pad) * y / 4 + 4:.1f}" font-size="11">{lvl or "none"}</text>'
            for lvl, y in LEVEL_Y.items()]
    points = []
    for i, v in enumerate(views):
        r = v.round
        x = pad + i * step + step / 2
        y = h - pad - (h - 2 * pad) * LEVEL_Y.get(r.level_reached, 0) / 4
        points.append(f"{x:.1f},{y:.1f}")
        body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{OUTCOME_COLOR.get(r.outcome, "#555")}">'
                    f'<title>round {r.n}: {r.level_reached}</title></circle>'
                    f'<text x="{x:.1f}" y="{h - pad + 16}" font-size="11" text-anchor="middle">{r.n}</text>')
    if points:
        body.insert(0, f'<polyline points="{" ".join(points)}" fill="none" stroke="#bbb"/>')
    return (f'<figure><figcaption>Diagnosis level each round reached (x axis: round)</figcaption><svg '
            f'xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
            f'aria-label="diagnosis level per round">' + "".join(body) + "</svg></figure>")


def _case_color(c: CaseResult) -> str:
    if c.flags:
        return REGRESSED
    return FASTER if c.speedup and c.speedup > TOLERANCE else SAME


def _case_note(c: CaseResult) -> str:
    if c.flags:
        return f"{REGRESSION_MARK}: {'; '.join(c.flags)}"
    if c.speedup is None:
        return f"{_ms(c.ms)} ms, the initial kernel not timed" if c.ms else "not timed"
    return ""


def _diff_html(diff: str) -> str:
    spans = []
    for line in diff.splitlines():
        cls = "add" if line.startswith("+") and not line.startswith("+++") else \
              "del" if line.startswith("-") and not line.startswith("---") else ""
        spans.append(f'<span class="{cls}">{html.escape(line)}</span>' if cls else html.escape(line))
    added = sum(1 for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in diff.splitlines() if line.startswith("-") and not line.startswith("---"))
    return (f"<details><summary>candidate diff vs the initial kernel (+{added} -{removed} lines)</summary>"
            f'<pre class="diff">' + "\n".join(spans) + "</pre></details>")


def round_html(view: RoundView, scale: int, label_chars: int) -> str:
    r = view.round
    head = f"Round {r.n}: {html.escape(r.outcome)}, {_speedup_words(r)}"
    if view.regressions:
        head += f' <span class="bad">{REGRESSION_MARK} on {len(view.regressions)} of {len(view.cases)} cases</span>'
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in evidence(r))
    parts = [f'<section id="round-{r.n}"><h2>{head}</h2><table class="evidence">{rows}</table>']
    if any(c.ms for c in view.cases):
        chart_rows = [(c.label, c.speedup, _case_color(c), _case_note(c)) for c in view.cases]
        parts.append(log_chart(chart_rows, scale, f"Round {r.n}: speedup per case vs the initial kernel (log scale)",
                               label_chars))
    else:
        parts.append("<p>Per case: not timed (no GPU for this round, or no candidate reached timing).</p>")
    if view.diff:
        parts.append(_diff_html(view.diff))
    return "".join(parts) + "</section>"


HTML_LEGEND = f"""<section id="legend"><h2>How to read this report</h2><ul>
<li><b>Speedup</b> = initial kernel ms / candidate ms for one case (median kernel time); a round's speedup is
the geomean over its cases. Above x1 is faster, below x1 slower.</li>
<li><b>Log scale</b>: every chart shares one axis where each grid line doubles (x0.5, x1, x2, ...), so x0.5 is as
far left of the dashed <b>x1 line</b> (the initial kernel) as x2 is right of it. Values beyond the axis sit at its edge.</li>
<li><span class="dot" style="background:{FASTER}"></span> faster than the initial kernel by more than
{(TOLERANCE - 1) * 100:.0f} %; <span class="dot" style="background:{SAME}"></span> within
{(TOLERANCE - 1) * 100:.0f} %; <span class="dot" style="background:{REGRESSED}"></span> <span class="bad">{REGRESSION_MARK}</span>:
more than {(TOLERANCE - 1) * 100:.0f} % slower than the initial kernel or than the best round before it (the text
says which, and by how much).</li>
<li>In the overview, a round's colour is its outcome: {", ".join(f'<span style="color:{c}">{o}</span>' for o, c in OUTCOME_COLOR.items())}.
<i>untimed</i> means validated but not timed (no GPU): never a speedup.</li>
<li>Each round lists the evidence it acted on (hypothesis, findings, level reached, outcome) and, folded, its
candidate's unified diff against the initial kernel (<span class="del">- initial</span>, <span class="add">+ candidate</span>).</li>
</ul></section>"""


def html_page(report: Report) -> str:
    run = report.run
    overview = [(f"round {v.round.n}", v.round.speedup_initial, OUTCOME_COLOR.get(v.round.outcome, "#555"),
                 v.round.outcome + (f" {REGRESSION_MARK} on {len(v.regressions)} of {len(v.cases)} cases"
                                    if v.regressions else "")) for v in report.views]
    label_chars = max([len(c.label) for v in report.views for c in v.cases] + [8])
    best = html.escape(_best_line(report)).replace(REGRESSION_MARK, f'<span class="bad">{REGRESSION_MARK}</span>')
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kopt run {html.escape(run.run_id)}</title>
<style>body{{font:14px system-ui,sans-serif;margin:2em;max-width:72em;color:#222}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ddd;padding:3px 6px;vertical-align:top;font-size:13px;text-align:left}}
th{{background:#f6f6f6;white-space:nowrap}}figure{{margin:.8em 0}}figcaption{{font-weight:600;margin-bottom:4px}}
section{{border-top:1px solid #ddd;margin-top:1.5em}}.bad{{color:{REGRESSED};font-weight:600}}
.diff{{background:#f8f8f8;padding:6px;overflow-x:auto;font-size:12px}}.add{{color:#1a7f37}}.del{{color:#b42318}}
.dot{{display:inline-block;width:10px;height:10px;border-radius:5px}}summary{{cursor:pointer;margin:.5em 0}}</style></head><body>
<h1>kopt run {html.escape(run.run_id)}</h1>
<p>Task <code>{html.escape(run.task_path)}</code> &middot; {html.escape(run.status)}
{('(' + html.escape(run.stop_reason) + ')') if run.stop_reason else ''} &middot; proposer
{html.escape(str(run.options.get('proposer')))} &middot; timing: {html.escape(str(run.timing.get('reason')))}<br>
Best: {best} &middot; <a href="#legend">how to read this report</a></p>
{log_chart(overview, report.scale, "Geomean speedup vs the initial kernel per round (log scale)", label_chars)
   if report.views else "<p>No rounds yet.</p>"}
{level_plot(report.views)}
{"".join(round_html(v, report.scale, label_chars) for v in report.views)}
{HTML_LEGEND}
</body></html>
"""


def write(path: Path, text: str) -> Path:
    try:
        path.write_text(text)
    except OSError as exc:
        raise KoptError(f"{path}: cannot write the report: {exc.strerror}") from exc
    return path
