"""The loop end to end on a real task: real diagnosis, recipes, sandboxed validation and the store.

CI has no GPU, so the timed path runs with a deterministic stand-in for the GPU bench (`fake_bench`,
times derived from the candidate's launch config); everything else is the real thing. The untimed
path (what CI really sees) is covered by the kill -9 test and the LLM tests."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kopt.optimize import Timing

ROOT = Path(__file__).resolve().parents[1]


BENCHED: list = []  # (reference, seed) of each timed candidate


def fake_bench(task_path, candidate, reference=None, seed=None):
    """Kernel ms per case from the launch: bigger blocks and 8 warps are faster; BLOCK_SIZE >= 2048 sits at
    92% of the roofline."""
    BENCHED.append((reference, seed))
    text = Path(candidate or task_path).read_text()
    block = int((re.search(r"BLOCK_SIZE=(\d+)", text) or re.search(r"'BLOCK_SIZE': (\d+)", text)).group(1))
    warps = 8 if "num_warps=8" in text else 4
    ms = 1024 / block + (0.1 if warps == 8 else 0.2)
    return Timing(True, [ms * k for k in (1, 2, 3, 4, 5)], [min(0.92, 0.45 * block / 1024)] * 5, bound=["memory"] * 5)


@pytest.fixture
def timed(monkeypatch):
    import kopt.optimize
    import kopt.rewrite.recipes.launch_space

    monkeypatch.setattr(kopt.optimize, "timing_available", lambda: (True, "fake GPU clock (test)"))
    monkeypatch.setattr(kopt.optimize, "bench_times", fake_bench)
    monkeypatch.setattr(kopt.optimize, "bench_reference_or_none", lambda task_path, seed: ("reference for", seed))
    BENCHED.clear()
    monkeypatch.setattr(kopt.rewrite.recipes.launch_space, "MAX_VARIANTS", 2)


def aligned_vector_add(task: Path) -> None:
    """examples/vector_add.py with every case a multiple of 16 and >= 132 programs: the launch facts then name no
    masked-access or tiny-grid cause, and the untuned config is the one hypothesis these loop tests act on."""
    shutil.copy(ROOT / "examples/vector_add.py", task)
    text = task.read_text()
    cases = next(line for line in text.splitlines() if line.startswith("CASES = "))
    task.write_text(text.replace(cases, 'CASES = [{"n": 1 << 24}, {"n": 1 << 20}, {"n": 1_000_000}, {"n": 1 << 26}, '
                                        '{"n": 33_554_432}]'))


def test_timed_loop_keeps_the_best_writes_it_and_reports(timed, tmp_path, monkeypatch):
    from kopt.cli import cli
    from kopt.config import load_settings
    from kopt.optimize import optimize
    from kopt.task import load_task

    task = tmp_path / "vector_add.py"
    aligned_vector_add(task)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import kopt.diagnose.escalate as escalate

    rooflines, real_diagnose = [], escalate.diagnose
    monkeypatch.setattr(escalate, "diagnose", lambda *a, **kw: rooflines.append(kw.get("roofline")) or real_diagnose(*a, **kw))
    events = []
    summary = optimize(task, rounds=3, proposer="recipes", settings=load_settings(tmp_path),
                       on_event=lambda kind, data: events.append(kind))
    first = summary["rounds"][0]
    assert rooflines[0] == [0.45] * 5  # each case's measured roofline fraction reaches the diagnosis
    assert first["proposer"] == "recipe:autotune" and first["outcome"] == "improved", first
    assert first["speedup_initial"] == pytest.approx((1 + 0.2) / (0.25 + 0.1))  # BLOCK_SIZE 4096, 8 warps won
    assert first["level_reached"] == "L3" and first["finding_ids"] == ["untuned_config"]
    assert first["hypothesis"].endswith("[BLOCK_SIZE=4096 num_warps=8]")  # the winning fixed config
    assert summary["stop_reason"].startswith("within 10% of the roofline")
    assert len(summary["rounds"]) == 1 and summary["best_round"] == 1
    assert events.index("run") < events.index("round") and events[-1] == "stop"

    out = Path(summary["out"])
    assert out == tmp_path / "vector_add_kopt.py"
    text = out.read_text()
    assert text.startswith(f"# Optimized by kopt (run {summary['run_id']}) from vector_add.py: x3.43 geomean speedup")
    assert "round 1 (recipe:autotune, diagnosis reached L3)" in text
    assert "BLOCK_SIZE=4096, num_warps=8)" in text
    load_task(out)  # the written kernel is still a task file

    runner = CliRunner()
    html = tmp_path / "report.html"
    res = runner.invoke(cli, ["runs", "report", summary["run_id"], "--html", str(html)])
    assert res.exit_code == 0, res.output
    assert "| 1 | L3 |" in res.output and "x3.43" in res.output and "| n=16777216 | 1.2 | 0.35 | x3.43 |" in res.output
    page = html.read_text()
    assert page.count("<svg") == 3 and "<script" not in page and "speedup per case vs the initial kernel (log scale)" in page
    res = runner.invoke(cli, ["runs", "diff", summary["run_id"], "0", "1"])
    assert "-    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)" in res.output
    assert "+    add_kernel[grid](x, y, out, n, BLOCK_SIZE=4096, num_warps=8)" in res.output
    listed = json.loads(runner.invoke(cli, ["runs", "list", "--json"]).output)["items"]
    assert listed[0]["best_round"] == 1 and listed[0]["status"] == "done"
    shown = json.loads(runner.invoke(cli, ["runs", "show", summary["run_id"], "--json"]).output)
    trials = json.loads((tmp_path / ".kopt/artifacts" / shown["rounds"][0]["evidence"]["trials"][:2] /
                         shown["rounds"][0]["evidence"]["trials"][2:]).read_text())
    # every variant was timed; validation went fastest first and stopped at the first that passed
    assert trials[0]["label"] == "autotune x3" and all("times" in t for t in trials)
    winner = next(t for t in trials if t["label"] == "BLOCK_SIZE=4096 num_warps=8")
    assert winner["validation"]["ok"] and winner["outcome"] == "improved"
    slower = [t for t in trials if t["speedup_best"] < winner["speedup_best"]]
    assert slower and all(t["outcome"] == "not_validated" and "validation" not in t for t in slower), trials


def test_best_kernel_goes_into_a_folder_that_does_not_exist_yet(timed, tmp_path, monkeypatch):
    """The campaign writes each operator's best kernel under .kopt/best/, which a restored store lacks."""
    from kopt.config import load_settings
    from kopt.optimize import optimize

    task = tmp_path / "vector_add.py"
    aligned_vector_add(task)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / ".kopt" / "best" / "vector_add-progressive.py"
    summary = optimize(task, rounds=1, proposer="recipes", out=out, settings=load_settings(tmp_path))
    assert summary["best_round"] == 1 and Path(summary["out"]) == out and out.read_text().startswith("# Optimized by kopt")


def test_fastest_variant_that_fails_validation_loses_to_the_next(timed, tmp_path, monkeypatch):
    """Variants are timed first, then validated fastest first: a wrong but fast one is recorded as incorrect and
    the next fastest that passes wins the round (real interpreter validation; only the clock is a stand-in)."""
    import kopt.rewrite.recipes as recipes
    from kopt.config import load_settings
    from kopt.optimize import optimize

    task = tmp_path / "vector_add.py"
    shutil.copy(ROOT / "examples/vector_add.py", task)
    original = task.read_text()
    wrong = original.replace("BLOCK_SIZE=1024)", "BLOCK_SIZE=4096)").replace("x + y, mask", "x * y, mask")
    right = original.replace("BLOCK_SIZE=1024)", "BLOCK_SIZE=2048)")
    proposal = recipes.Proposal("launch_config_search", "block size", [
        recipes.Variant("BLOCK_SIZE=4096", wrong), recipes.Variant("BLOCK_SIZE=2048", right)])
    monkeypatch.setattr(recipes, "propose", lambda name, source, ctx: proposal)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    summary = optimize(task, rounds=1, proposer="recipes", settings=load_settings(tmp_path))
    first = summary["rounds"][0]
    assert first["outcome"] == "improved" and first["hypothesis"].endswith("[BLOCK_SIZE=2048]"), first
    store = tmp_path / ".kopt/artifacts"
    digest = first["evidence"]["trials"]
    trials = {t["label"]: t for t in json.loads((store / digest[:2] / digest[2:]).read_text())}
    assert trials["BLOCK_SIZE=4096"]["outcome"] == "incorrect" and not trials["BLOCK_SIZE=4096"]["validation"]["ok"]
    assert trials["BLOCK_SIZE=4096"]["speedup_best"] > trials["BLOCK_SIZE=2048"]["speedup_best"]
    assert trials["BLOCK_SIZE=2048"]["validation"]["ok"]


def test_llm_prompt_holds_the_per_case_times_and_roofline_from_round_1(timed, tmp_path):
    """Both grounding arms see the initial bench per case (the time, the roofline fraction and its bound)."""
    from kopt.config import load_settings
    from kopt.optimize import optimize

    task = tmp_path / "vector_add.py"
    shutil.copy(ROOT / "examples/vector_add.py", task)
    summary = optimize(task, proposer="llm", grounding="none", llm_exchange=tmp_path / "ex",
                       settings=load_settings(tmp_path))
    assert summary["status"] == "waiting"
    assert summary["initial"][1] == {"case": {"n": 98_432}, "ms": 2.4, "roofline": 0.45, "bound": "memory"}
    (request,) = [json.loads(p.read_text()) for p in (tmp_path / "ex").glob("*.request.json")]
    prompt = request["messages"][1]["content"]
    assert 'case {"n": 16777216}: 1.2000 ms, 45% of the memory-bound roofline' in prompt
    assert 'case {"n": 33554431}: 6.0000 ms, 45% of the memory-bound roofline' in prompt
    # the reply's candidate is validated for real, then timed with the bench reference made beside that validation
    source = task.read_text().replace("BLOCK_SIZE=1024", "BLOCK_SIZE=2048")
    assert source != task.read_text()
    (reply,) = [p.with_name(p.name.replace(".request.json", ".reply.md")) for p in (tmp_path / "ex").glob("*.request.json")]
    reply.write_text(f"model: test\nChange: bigger blocks\n```python\n{source}```\n")
    resumed = optimize(resume=summary["run_id"], rounds=1, llm_exchange=tmp_path / "ex", settings=load_settings(tmp_path))
    assert resumed["rounds"][0]["outcome"] == "improved", resumed["rounds"][0]
    assert [ref for ref, seed in BENCHED if ref is not None] == [("reference for", BENCHED[-1][1])]


def test_cli_errors_are_one_line(tmp_path):
    kopt = [sys.executable, "-m", "kopt.cli"]
    res = subprocess.run(kopt + ["optimize", "missing.py"], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 1 and res.stderr.strip() == "kopt: error: missing.py: no such task file"
    res = subprocess.run(kopt + ["runs", "show", "x"], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 1 and "no rounds store in" in res.stderr and len(res.stderr.splitlines()) == 1
    bad = tmp_path / "bad.py"
    bad.write_text(ROOT.joinpath("examples/vector_add.py").read_text().replace("return x + y", "return x * y"))
    res = subprocess.run(kopt + ["optimize", str(bad), "--json"], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 1 and "the task's own kernel fails validation (incorrect)" in res.stdout  # --json: the error as JSON
    res = subprocess.run(kopt + ["optimize", str(bad), "--proposer", "llm"], cwd=tmp_path, capture_output=True,
                         text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert res.returncode == 1


def test_patterns_for_a_finding_follow_the_diagnosis_then_the_recorded_win_rate():
    """An L2 symptom names no pattern of its own: the loop orders the catalog's patterns for it by their record, so
    the statistics synthesis writes change what is tried first (before, catalog file order decided)."""
    from kopt.optimize import pattern_order
    from kopt.patterns import load_patterns
    from kopt.vocabulary import Finding

    catalog = {p.id: p for p in load_patterns()}
    low = Finding("low_occupancy", "L2", "ncu: theoretical occupancy 25 %")
    fresh = pattern_order(low, catalog)
    assert set(fresh) == {p.id for p in catalog.values() if "low_occupancy" in p.finding_ids} and len(fresh) > 3

    def record(pid, wins, tries):
        catalog[pid] = dataclasses.replace(catalog[pid], stats={"tries": tries, "wins": wins, "speedups": []})

    record("balance_tail_wave", 0, 14)  # never won: tried last
    record("persistent_grid", 3, 4)  # won 3 of 4: tried first
    ordered = pattern_order(low, catalog)
    assert ordered[0] == "persistent_grid" and ordered[-1] == "balance_tail_wave"
    ranked = Finding("low_occupancy", "L1", "grid of one program", patterns=["scale_grid_with_problem"])
    assert pattern_order(ranked, catalog)[:2] == ["scale_grid_with_problem", "persistent_grid"]


def test_a_run_started_without_a_gpu_is_timed_when_resumed_on_one(tmp_path, monkeypatch):
    """Start untimed (no GPU), resume with a GPU: the initial kernel is timed once, and a second run of the same
    task (the other arm of an ablation) takes that measurement instead of timing it again."""
    import kopt.optimize
    from kopt.config import load_settings
    from kopt.optimize import start_run, time_untimed_baseline
    from kopt.rounds.store import RoundsStore

    task = tmp_path / "vector_add.py"
    shutil.copy(ROOT / "examples/vector_add.py", task)
    store = RoundsStore(load_settings(tmp_path).state_dir)
    runs = [start_run(task, store, {"rounds": 1, "proposer": "recipes", "grounding": g}, lambda *a: None)
            for g in ("full", "none")]
    assert not runs[0].timing["available"] and runs[0].baseline == [None] * len(runs[0].baseline)
    assert time_untimed_baseline(store, runs[0], lambda *a: None).timing["available"] is False  # still no GPU
    benched = []
    monkeypatch.setattr(kopt.optimize, "timing_available", lambda: (True, "fake GPU clock (test)"))
    monkeypatch.setattr(kopt.optimize, "bench_times", lambda t, c: benched.append(t) or fake_bench(t, c))
    first = time_untimed_baseline(store, runs[0], lambda *a: None)
    second = time_untimed_baseline(store, runs[1], lambda *a: None)
    assert len(benched) == 1 and first.baseline == second.baseline == fake_bench(task, None).times
    assert second.timing["from_run"] == first.run_id and second.initial["bench"] == first.initial["bench"]
    store.close()
