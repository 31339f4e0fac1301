"""`kopt runs report` on a real rounds store built with the store API: speedups drawn on a log scale, a planted
regression flagged (vs the initial kernel and vs the best round before), each candidate's diff and the legend
present, through the real CLI; and a headless Chromium screenshot of the HTML page that is not blank."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from statistics import geometric_mean

import pytest

from kopt.rounds.report import REGRESSED, REGRESSION_MARK, build, html_page, markdown
from kopt.rounds.store import Round, RoundsStore

INITIAL = """import triton

BLOCK = 1024


def launch(x):
    return kernel[(x.numel() // BLOCK,)](x, BLOCK=BLOCK)
"""
BASELINE = [1.0, 2.0, 3.0, 4.0, 5.0]  # initial kernel ms per case
CASES = [{"n": 2 ** k} for k in range(10, 15)]
# (outcome, candidate's BLOCK, case times): round 2 is the best by geomean (x1.82) yet 1.8x slower on the last two
# cases; round 4 is within 2 % of round 2 on case 0 but 5 % slower on case 1.
ROUNDS = [
    ("improved", 2048, [0.5, 1.6, 2.4, 3.2, 4.0]),  # x1.37
    ("improved", 4096, [0.25, 0.5, 0.75, 7.2, 9.0]),
    ("incorrect", 8192, []),
    ("slower", 512, [0.25 * 1.01, 0.5 * 1.05, 0.75, 7.2, 9.0]),
]


@pytest.fixture
def workspace(tmp_path):
    store = RoundsStore(tmp_path / ".kopt")
    run = store.create_run(tmp_path / "scale.py", INITIAL, {"rounds": 4, "proposer": "recipes"}, BASELINE,
                           {"available": True, "reason": "test clock", "roofline": []}, {"cases": CASES})
    for n, (outcome, block, times) in enumerate(ROUNDS, 1):
        speedup = geometric_mean([b / t for b, t in zip(BASELINE, times)]) if times else None
        store.add_round(Round(
            run_id=run.run_id, n=n, level_reached="L3", hypothesis=f"untuned_config: try BLOCK={block}",
            hypothesis_key=f"untuned_config/autotune{n}", finding_ids=["untuned_config", f"finding-{n}"],
            pattern_id="autotune", proposer="recipe:autotune", candidate=store.put(INITIAL.replace("1024", str(block))),
            outcome=outcome, message="case n=1024 differs by 3.1 (atol 1e-05)" if outcome == "incorrect" else None,
            case_times=times, speedup_initial=speedup,
            levels=[{"level": "L1", "status": "used", "reason": "pattern matched"},
                    {"level": "L2", "status": "unavailable", "reason": "no ncu"}]))
    store.set_status(run.run_id, "done", "round budget spent")
    yield tmp_path, store, store.run(run.run_id)
    store.close()


def _sections(md: str) -> dict[int, str]:
    parts = re.split(r"^## Round (\d+):", md, flags=re.M)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts), 2)}


def test_speedups_sit_on_a_log_scale_around_the_1x_line(workspace):
    _, store, run = workspace
    page = html_page(build(store, run))
    one = {float(x) for x in re.findall(r'<line class="one" x1="([\d.]+)"', page)}
    assert len(one) == 1, one  # every chart shares one axis
    one = one.pop()
    dots = [(float(s), float(cx)) for cx, s in re.findall(r'cx="([\d.]+)"[^>]*data-speedup="([\d.e-]+)"', page)]
    assert len(dots) == 3 + 5 + 5 + 5  # the overview's timed rounds, then the cases of rounds 1, 2 and 4
    per_doubling = {round((cx - one) / math.log2(s), 1) for s, cx in dots if abs(s - 1) > 1e-6}
    assert len(per_doubling) == 1 and per_doubling.pop() > 0  # x0.5 is as far left of 1x as x2 is right
    x2 = next(cx for s, cx in dots if s == 2)
    x4 = next(cx for s, cx in dots if s == 4)
    slow = next(cx for s, cx in dots if abs(s - 1 / 1.8) < 1e-6)
    assert x4 - one == pytest.approx(2 * (x2 - one)) and slow < one


def test_a_planted_regression_is_flagged_in_words_and_red(workspace):
    _, store, run = workspace
    report = build(store, run)
    assert [[c.label for c in v.regressions] for v in report.views] == [
        [], ["n=8192", "n=16384"], [], ["n=2048", "n=8192", "n=16384"]]
    md = markdown(report)
    assert "- best: round 2, x1.82 geomean vs the initial kernel, but ▼ regression on 2 of 5 cases" in md
    rounds = _sections(md)
    assert f"| n=8192 | 4 | 7.2 | x0.56 | `      ████|          ` | {REGRESSION_MARK}: slower than initial; " \
           "x0.44 vs round 1 (best before) |" in rounds[2]
    assert "| n=1024 | 1 | 0.25 | x4.00 | `          |██████████` |  |" in rounds[2]
    assert REGRESSION_MARK not in rounds[1]
    # round 4 against round 2, the best before it: 1 % slower passes, 5 % slower is flagged
    assert "| n=1024 | 1 | 0.2525 | x3.96 |" in rounds[4] and "x3.96 | `          |██████████` |  |" in rounds[4]
    assert f"{REGRESSION_MARK}: x0.95 vs round 2 (best before) |" in rounds[4]
    page = html_page(report)
    flagged = re.findall(rf'<circle class="value" [^>]*fill="{REGRESSED}"[^>]*><title>([^<]*)</title>', page)
    assert flagged == ["n=8192: x0.56", "n=16384: x0.56", "n=2048: x3.81", "n=8192: x0.56", "n=16384: x0.56"]
    red_note = f'x0.56 <tspan fill="{REGRESSED}" font-weight="600">{REGRESSION_MARK}: slower than initial'
    assert page.count(red_note) == 4


def test_each_round_shows_its_evidence_and_diff_and_the_report_its_legend(workspace):
    _, store, run = workspace
    report = build(store, run)
    md, page = markdown(report), html_page(report)
    rounds = _sections(md)
    assert "-BLOCK = 1024\n+BLOCK = 2048" in rounds[1] and "```diff" in rounds[1]
    assert "- outcome: incorrect: case n=1024 differs by 3.1 (atol 1e-05)" in rounds[3]
    assert "- findings: untuned_config, finding-3" in rounds[3] and "- level reached: L3" in rounds[3]
    assert "- diagnosis levels: L1 used (pattern matched); L2 unavailable (no ncu)" in rounds[3]
    assert "## How to read this report" in md and "log scale" in md
    assert page.count("<details><summary>candidate diff vs the initial kernel (+1 -1 lines)</summary>") == 4
    assert '<span class="del">-BLOCK = 1024</span>\n<span class="add">+BLOCK = 8192</span>' in page
    assert "<th>hypothesis</th><td>untuned_config: try BLOCK=8192</td>" in page
    assert "Per case: not timed" in page  # the incorrect round has no times
    assert "How to read this report" in page and "Log scale" in page and "x1 line" in page
    assert "<script" not in page and "<link" not in page and "src=" not in page  # self-contained, no JS


def test_cli_writes_markdown_and_html_files(workspace):
    root, _, run = workspace
    cmd = [sys.executable, "-m", "kopt.cli", "runs", "report", run.run_id[:10], "--md", "r.md", "--html", "r.html"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Markdown report: r.md\nHTML report: r.html\n"
    assert (root / "r.md").read_text().startswith(f"# kopt run {run.run_id}")
    assert "<svg" in (root / "r.html").read_text()
    as_json = subprocess.run(cmd + ["--json"], capture_output=True, text=True, cwd=root, timeout=120)
    assert json.loads(as_json.stdout)["regressions"] == {"2": ["n=8192", "n=16384"],
                                                         "4": ["n=2048", "n=8192", "n=16384"]}
    bad = subprocess.run(cmd[:-2] + ["--html", str(root / "missing" / "r.html")], capture_output=True, text=True,
                         cwd=root, timeout=120)
    assert bad.returncode == 1 and "cannot write the report" in bad.stderr and "Traceback" not in bad.stderr


def _chromium() -> str | None:
    """A chromium that runs (Ubuntu's apt package is a stub that asks for the snap)."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        return path if path and subprocess.run([path, "--version"], capture_output=True, timeout=60).returncode == 0 \
            else None
    except (OSError, subprocess.TimeoutExpired):
        return None


CHROMIUM = _chromium()


@pytest.mark.skipif(not CHROMIUM, reason="no working chromium on PATH (Debian: apt-get install chromium; "
                                         "`make setup` installs it when root with apt)")
def test_headless_chromium_renders_the_page(workspace, tmp_path):
    image = pytest.importorskip("PIL.Image", reason="Pillow (a llama-index-core dependency) reads the screenshot")
    root, store, run = workspace
    page = root / "report.html"
    page.write_text(html_page(build(store, run)))
    shot = tmp_path / "report.png"
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--screenshot={shot}", "--window-size=1200,2000", page.as_uri()],
                          capture_output=True, text=True, timeout=300)
    assert shot.is_file(), done.stderr[-2000:]
    with image.open(shot) as img:
        assert img.format == "PNG" and img.size == (1200, 2000)
        rgb = img.convert("RGB").tobytes()
    pixels = list(zip(rgb[0::3], rgb[1::3], rgb[2::3]))
    ink = sum(1 for p in pixels if sum(p) < 600)
    red = sum(1 for r, g, b in pixels if r > 180 and g < 90 and b < 90)
    assert ink > 0.01 * len(pixels), f"only {ink} dark pixels: a blank page"
    assert red > 50, "the regression marks are not drawn in red"
