"""Run reports: Markdown for reading in a terminal or a PR, and one self-contained HTML page (inline
SVG, no scripts, no external files) with three plots: speedup per round, the diagnosis level each
round reached, and time per case (initial vs best)."""

from __future__ import annotations

import html
from pathlib import Path

from kopt.rounds.store import Round, Run, best_round

LEVEL_Y = {None: 0, "L1": 1, "L2": 2, "L3": 3, "L4": 4}
OUTCOME_COLOR = {"improved": "#2a9d4b", "slower": "#e9a23b", "untimed": "#7a8ca6", "incorrect": "#d64545",
                 "compile_error": "#a33", "timeout": "#8a2be2", "crash": "#555", "rejected": "#c06", "proposer_error": "#999"}


def _x(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"x{value:.{digits}f}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def case_label(case: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in case.items())


def markdown(run: Run, rounds: list[Round], cases: list[dict]) -> str:
    best = best_round(rounds)
    lines = [f"# kopt run {run.run_id}", "",
             f"- task: `{run.task_path}`", f"- status: {run.status}" + (f" ({run.stop_reason})" if run.stop_reason else ""),
             f"- proposer: {run.options.get('proposer')}, budget: {run.options.get('rounds')} rounds"
             + (f", {run.options['minutes']:g} min" if run.options.get("minutes") else ""),
             f"- timing: {run.timing.get('reason')}",
             f"- best: " + (f"round {best.n}, {_x(best.speedup_initial)} vs the initial kernel" if best else
                             "no timed improvement"), "",
             "## Rounds", "",
             "| # | level | hypothesis | proposer | outcome | vs initial | vs best | s |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rounds:
        hyp = r.hypothesis.replace("|", "\\|")[:160]
        lines.append(f"| {r.n} | {r.level_reached or '-'} | {hyp} | {r.proposer} | {r.outcome} | "
                     f"{_x(r.speedup_initial)} | {_x(r.speedup_best)} | {r.seconds:.0f} |")
    failures = [r for r in rounds if r.message and r.outcome not in ("improved",)]
    if failures:
        lines += ["", "## Why rounds did not win", ""]
        lines += [f"- round {r.n} ({r.outcome}): {r.message}" for r in failures]
    if any(r.skipped for r in rounds):
        lines += ["", "## Hypotheses passed over (recipe preconditions)", ""]
        lines += [f"- round {r.n}: {s}" for r in rounds for s in r.skipped]
    if any(t is not None for t in run.baseline):
        lines += ["", "## Time per case (kernel ms, median)", "", "| case | initial | best | speedup |", "|---|---|---|---|"]
        best_times = best.case_times if best else run.baseline
        for case, a, b in zip(cases, run.baseline, best_times):
            lines.append(f"| {case_label(case)} | {_ms(a)} | {_ms(b)} | {_x(a / b if a and b else None)} |")
    return "\n".join(lines) + "\n"


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (f'<figure><figcaption>{html.escape(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" '
            f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{html.escape(title)}">' + "".join(body) + "</svg></figure>")


def speedup_plot(rounds: list[Round]) -> str:
    w, h, pad = 560, 220, 40
    values = [r.speedup_initial for r in rounds]
    top = max([v for v in values if v] + [1.0]) * 1.15
    step = (w - 2 * pad) / max(1, len(rounds))
    body = [f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#333"/>']
    one = h - pad - (h - 2 * pad) / top
    body.append(f'<line x1="{pad}" y1="{one:.1f}" x2="{w - pad}" y2="{one:.1f}" stroke="#999" stroke-dasharray="4"/>'
                f'<text x="4" y="{one + 4:.1f}" font-size="11">x1.0</text>')
    for i, r in enumerate(rounds):
        x = pad + i * step + step * 0.15
        v = r.speedup_initial
        bar = (h - 2 * pad) * (v / top) if v else 4
        color = OUTCOME_COLOR.get(r.outcome, "#555")
        body.append(f'<rect x="{x:.1f}" y="{h - pad - bar:.1f}" width="{step * 0.7:.1f}" height="{bar:.1f}" fill="{color}">'
                    f'<title>round {r.n}: {html.escape(r.outcome)} {_x(v)}</title></rect>')
        body.append(f'<text x="{x + step * 0.35:.1f}" y="{h - pad + 14}" font-size="11" text-anchor="middle">{r.n}</text>')
        body.append(f'<text x="{x + step * 0.35:.1f}" y="{h - pad - bar - 4:.1f}" font-size="10" text-anchor="middle">'
                    f'{_x(v) if v else html.escape(r.outcome)}</text>')
    return _svg(w, h, body, "Speedup vs the initial kernel per round (colour = outcome; untimed rounds have no bar)")


def level_plot(rounds: list[Round]) -> str:
    w, h, pad = 560, 180, 40
    step = (w - 2 * pad) / max(1, len(rounds))
    body = [f'<text x="4" y="{h - pad - (h - 2 * pad) * y / 4 + 4:.1f}" font-size="11">{lvl}</text>'
            for lvl, y in LEVEL_Y.items() if lvl]
    points = []
    for i, r in enumerate(rounds):
        x = pad + i * step + step / 2
        y = h - pad - (h - 2 * pad) * LEVEL_Y.get(r.level_reached, 0) / 4
        points.append(f"{x:.1f},{y:.1f}")
        body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{OUTCOME_COLOR.get(r.outcome, "#555")}">'
                    f'<title>round {r.n}: {r.level_reached}</title></circle>')
        body.append(f'<text x="{x:.1f}" y="{h - pad + 16}" font-size="11" text-anchor="middle">{r.n}</text>')
    if points:
        body.insert(0, f'<polyline points="{" ".join(points)}" fill="none" stroke="#bbb"/>')
    return _svg(w, h, body, "Diagnosis level each round reached")


def case_plot(run: Run, best: Round | None, cases: list[dict]) -> str:
    if not any(t is not None for t in run.baseline):
        return "<p>Time per case: not measured (no GPU in this run).</p>"
    w, pad, row = 560, 200, 22
    best_times = best.case_times if best else run.baseline
    top = max(t for t in run.baseline + best_times if t) * 1.1
    body = []
    for i, (case, a, b) in enumerate(zip(cases, run.baseline, best_times)):
        y = 10 + i * row * 2
        body.append(f'<text x="4" y="{y + 14}" font-size="11">{html.escape(case_label(case))[:30]}</text>')
        for j, (t, color, label) in enumerate(((a, "#bbb", "initial"), (b, "#2a9d4b", "best"))):
            bar = (w - pad - 60) * (t or 0) / top
            body.append(f'<rect x="{pad}" y="{y + j * row * 0.9:.1f}" width="{bar:.1f}" height="{row * 0.8:.1f}" '
                        f'fill="{color}"><title>{label}: {_ms(t)} ms</title></rect>'
                        f'<text x="{pad + bar + 4:.1f}" y="{y + j * row * 0.9 + 13:.1f}" font-size="10">{_ms(t)} ms</text>')
    return _svg(w, 20 + len(cases) * row * 2, body, "Kernel time per case, ms (grey: initial, green: best)")


def html_page(run: Run, rounds: list[Round], cases: list[dict]) -> str:
    best = best_round(rounds)
    rows = "".join(
        f"<tr><td>{r.n}</td><td>{r.level_reached or '-'}</td><td>{html.escape(r.hypothesis)}</td>"
        f"<td>{html.escape(r.proposer)}</td><td style='color:{OUTCOME_COLOR.get(r.outcome, '#000')}'>{r.outcome}</td>"
        f"<td>{_x(r.speedup_initial)}</td><td>{_x(r.speedup_best)}</td><td>{html.escape(r.message or '')}</td></tr>"
        for r in rounds)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kopt run {html.escape(run.run_id)}</title>
<style>body{{font:14px system-ui,sans-serif;margin:2em;max-width:70em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ddd;padding:4px 6px;vertical-align:top;font-size:13px}}figure{{margin:1em 0}}
figcaption{{font-weight:600;margin-bottom:4px}}</style></head><body>
<h1>kopt run {html.escape(run.run_id)}</h1>
<p>Task <code>{html.escape(run.task_path)}</code> &middot; {html.escape(run.status)}
{('(' + html.escape(run.stop_reason) + ')') if run.stop_reason else ''} &middot; timing: {html.escape(str(run.timing.get('reason')))}<br>
Best: {f'round {best.n}, {_x(best.speedup_initial)} vs the initial kernel' if best else 'no timed improvement'}</p>
{speedup_plot(rounds)}
{level_plot(rounds)}
{case_plot(run, best, cases)}
<h2>Rounds</h2>
<table><tr><th>#</th><th>level</th><th>hypothesis</th><th>proposer</th><th>outcome</th><th>vs initial</th><th>vs best</th><th>why</th></tr>
{rows}</table>
</body></html>
"""


def write_html(path: Path, run: Run, rounds: list[Round], cases: list[dict]) -> Path:
    path.write_text(html_page(run, rounds, cases))
    return path
