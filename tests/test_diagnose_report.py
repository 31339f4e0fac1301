"""The diagnosis report people read: real `kopt diagnose` runs (real compiles) through a pipe at 80 and 120
columns, and the renderer on a diagnosis with long compiler excerpts."""

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from kopt.diagnose.escalate import Diagnosis, LevelRun
from kopt.diagnose.report import EXCERPT_LINES, SHOWN_FINDINGS, render_diagnosis, shown_path
from kopt.vocabulary import Evidence, Finding

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "strided_scale.py"


def kopt(args, cwd, columns):
    env = {**os.environ, "COLUMNS": str(columns), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "kopt.cli", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def assert_readable(out: str, width: int) -> None:
    """Fits the width, no colour codes in a pipe, no padding, and every shortening says how to see the rest."""
    lines = out.splitlines()
    assert lines and max(len(line) for line in lines) <= width, max(lines, key=len)
    assert "\x1b[" not in out
    assert all(line == line.rstrip() for line in lines)
    for line in lines:
        if "…" in line:
            assert "--verbose" in line, line


def words(out: str) -> str:
    """The report with wrapping undone: one space between words."""
    return " ".join(out.split())


@pytest.mark.parametrize("columns", [80, 120])
def test_report_of_the_example_reads_at_the_terminal_width(tmp_path, columns):
    work = tmp_path / "work"
    work.mkdir()
    task = work / "strided_scale.py"
    task.write_text(EXAMPLE.read_text())
    done = kopt(["diagnose", "strided_scale.py", "--no-gpu"], work, columns)
    assert done.returncode == 0, done.stderr[-2000:]
    assert_readable(done.stdout, columns)
    text = words(done.stdout)
    assert text.startswith("kopt diagnose strided_scale.py · target sm_90")
    assert re.search(r"L2 skipped --no-gpu", text) and re.search(r"L3 used \d+\.\d s 4 findings", text)  # 3 from the compiled case, 1 confirming the launch facts
    assert "1 of 4 · misaligned_access · L3" in text
    source_line = task.read_text().splitlines()[14].strip()  # line 15, the strided load
    assert f"> 15 │ {source_line}" in text
    # the evidence the old table cut at 140 characters ("...{'x_ptr': 1}; stri") is there whole
    assert "pointer args {'x_ptr': 1}; stride args {'stride_x': 1}; mask bounds {'n_cols': 16}" in text
    assert "│ @%p1 ld.global.b32 { %r1 }, [ %rd1 + 0 ];" in text  # the PTX excerpt
    assert "A fix must - `x_ptr` must be known 16-byte aligned" in text
    assert "Next kopt optimize strided_scale.py kopt ask 'why misaligned access here' --kernel strided_scale.py:15" in text
    assert "(shown under finding 1)" in text  # evidence a finding above showed is named, not repeated


def test_task_with_a_syntax_error_exits_1_with_its_finding(tmp_path):
    task = tmp_path / "broken.py"
    lines = EXAMPLE.read_text().splitlines()
    lines[19] = lines[19].rstrip(":")  # def entry(x, s)
    task.write_text("\n".join(lines) + "\n")
    done = kopt(["diagnose", str(task), "--no-gpu"], tmp_path, 80)
    assert done.returncode == 1, done.stdout
    assert_readable(done.stdout, 80)
    text = words(done.stdout)
    assert "compile_failure" in text and "> 20 │ def entry(x, s)" in text and "L2-L4 not needed" in text
    assert "fix broken.py:20, then: kopt diagnose broken.py" in text  # paths as the user would type them
    err = done.stderr.strip()
    assert "\n" not in err and err.startswith("kopt: error: ") and "does not compile" in err


def _long_diagnosis(task: Path) -> Diagnosis:
    excerpt = "\n".join(f"  if (vec == {i}) return emitVectorizedLoad(op, adaptor, rewriter); // line {i}"
                        for i in range(20))
    cited = Evidence("L4", "compiler_source", "LoadOpConversion: picks the vector width from AxisInfo",
                     {"symbol": "LoadOpConversion", "excerpt": excerpt},
                     "lib/Conversion/TritonGPUToLLVM/LoadStoreOpToLLVM.cpp:120-180@triton@7c56a5e4")
    note = Evidence("L4", "pass_note", "axis-info", {"mechanism": "divisibility " * 200}, "corpora/passes/axis-info.md:1-9")
    main = Finding("non_vectorized_load", "L4", "line 2: [bold]tl.load[/] is 32-bit wide; compiler: axis-info: cut here", 0.9,
                   [cited, note], [2], ["the pointer must be 16-byte aligned"], ["alignment_hints"])
    others = [Finding("untuned_config", "L1", f"other {i}", 0.3, [], [1]) for i in range(SHOWN_FINDINGS + 2)]
    return Diagnosis(str(task), "sm_90", [main, *others],
                     [LevelRun("L1", "used", "catalog", 1, 0.1), LevelRun("L2", "skipped", "--no-gpu"),
                      LevelRun("L3", "used", "lowered code", 1, 2.0), LevelRun("L4", "used", "pass notes", 1, 0.5)])


def _render(diag: Diagnosis, verbose: bool) -> str:
    out = io.StringIO()
    render_diagnosis(diag, Console(file=out, width=80, highlight=False), verbose=verbose)
    return out.getvalue()


def test_long_excerpts_are_shortened_visibly_and_verbose_shows_them_whole(tmp_path):
    task = tmp_path / "k.py"
    task.write_text("def k(x_ptr):\n    x = tl.load(x_ptr)\n")
    diag = _long_diagnosis(task)
    short = _render(diag, verbose=False)
    assert_readable(short, 80)
    assert f"… {20 - EXCERPT_LINES} more lines (--verbose shows them)" in short
    assert "// line 7" in words(short) and "// line 8" not in words(short)
    assert "more characters; --verbose shows them" in short
    assert "lib/Conversion/TritonGPUToLLVM/LoadStoreOpToLLVM.cpp:120-180@triton@7c56a5e4" in short
    assert "line 2: [bold]tl.load[/] is 32-bit wide" in short  # evidence text is never read as rich markup
    assert "cut here" not in short  # the compiler paragraph of the message is the pass note, shown as evidence
    assert f"{len(diag.findings) - SHOWN_FINDINGS} more (--verbose shows them): untuned_config (L1, 0.30)" in words(short)
    full = _render(diag, verbose=True)
    assert_readable(full, 80)
    assert "…" not in full and "// line 19" in words(full) and f"{len(diag.findings)} of {len(diag.findings)}" in full
    assert words(full).count("divisibility") == 200


def test_profiler_evidence_from_an_h200_capture_reads_whole(tmp_path):
    """L2 findings from a real ncu capture (tests/fixtures/ncu): ncu's rule text whole, wrapped at 80 columns,
    and a symptom's next step is the level that says why."""
    from kopt.diagnose import l2, ncu
    from kopt.diagnose.escalate import merge

    fixtures = ROOT / "tests" / "fixtures" / "ncu"
    result = ncu.parse_pages((fixtures / "strided_scale_raw.csv").read_text(),
                             (fixtures / "strided_scale_details.csv").read_text())
    kernel = result.kernels[0]
    findings = merge(l2.profile_findings(kernel.metrics, kernel.rules, kernel=kernel.name), set())
    diag = Diagnosis(str(EXAMPLE), "sm_90", findings, [LevelRun("L1", "used", "catalog", 0, 0.1),
                                                       LevelRun("L2", "used", "Nsight Compute symptoms", 2, 12.0)])
    out = _render(diag, verbose=False)
    assert_readable(out, 80)
    text = words(out)
    assert "has additional information on reducing uncoalesced device memory accesses. (est. global speedup" in text
    assert "memory_bound · L2" in text and "dominant warp stall: long_scoreboard" in text
    assert f"kopt diagnose {shown_path(str(EXAMPLE))} --level L3 (the lowered code says why)" in text
