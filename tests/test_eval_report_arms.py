"""The experiment report (kopt eval report --arm / --compare) on a real rounds store built with the store API:
figures per arm, rejected candidates by reason, replies per win, and the paired comparison, checked by hand."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from kopt.rounds.store import Round, RoundsStore
from kopt.suite_report import arm_summary, bootstrap_geomean, compare_arms, operator_result

REFS = {"eager_ms": [8.0], "compile_ms": [2.0]}
# optimize records a cheat caught by validation as `rejected` with the harness' message; the guard's say so
MESSAGES = {"full": {"rejected": "the candidate launched no Triton kernel: the work was not its own"},
            "none": {"rejected": "candidate rejected: TOLERANCES changed"}}
# (op, baseline ms per case, rounds as (outcome, case times, level reached)) per arm; every round is an LLM reply.
ARMS = {
    "full": [
        ("a", [4.0], [("improved", [2.0], "L1"), ("incorrect", [], "L3"), ("improved", [1.0], "L3")]),  # x4
        ("b", [1.0, 1.0], [("rejected", [], "L1"), ("improved", [0.5, 0.5], "L2")]),  # x2; round 1 a cheat
        ("c", [3.0], [("unparsable", [], None), ("slower", [3.5], "L1")]),  # x1
        ("d", [None], [("untimed", [], "L1")]),  # no GPU: no speedup
        ("e", [1.0], []),  # only in this arm, still running
    ],
    "none": [
        ("a", [4.0], [("improved", [2.0], None)]),  # x2: full/none = 2 (win)
        ("b", [1.0, 1.0], [("improved", [0.5, 0.5], None), ("rejected", [], None)]),  # x2: ratio 1 (tie)
        ("c", [3.0], [("improved", [1.5], None), ("compile_error", [], None)]),  # x2: ratio 0.5 (loss)
        ("d", [None], [("untimed", [], None)]),
    ],
}


def _build(root: Path) -> Path:
    store = RoundsStore(root / ".kopt")
    try:
        for arm, ops in ARMS.items():
            for op, base, rounds in ops:
                opts = {"campaign": arm, "op": op, "family": "fam", "policy": "progressive", "rounds": 5,
                        "proposer": "llm", "grounding": arm}
                if op == "a":
                    opts["references"] = REFS
                run = store.create_run(Path(f"/suite/{op}.py"), f"# {op}\n", opts, base,
                                       {"available": None not in base, "reason": "test", "roofline": []}, {})
                for n, (outcome, times, level) in enumerate(rounds, 1):
                    store.add_round(Round(run_id=run.run_id, n=n, level_reached=level, hypothesis=f"h{n}",
                                          hypothesis_key=f"x/llm{n}", finding_ids=[], pattern_id=None,
                                          proposer="llm:test-model", candidate=None, outcome=outcome,
                                          message=MESSAGES.get(arm, {}).get(outcome), case_times=times, seconds=1.0))
                if op != "e":
                    store.set_status(run.run_id, "done", "round budget spent")
    finally:
        store.close()
    return root / ".kopt"


@pytest.fixture()
def results(tmp_path):
    store = RoundsStore(_build(tmp_path))
    try:
        by_arm = {arm: [] for arm in ARMS}
        for run in store.runs():
            by_arm[run.options["campaign"]].append(operator_result(run, store.rounds(run.run_id), "fam"))
        return by_arm
    finally:
        store.close()


def test_arm_figures_count_every_candidate_and_reply(results):
    full, none = arm_summary(results["full"]), arm_summary(results["none"])
    assert full["geomean_speedup"] == pytest.approx(8 ** 0.25)  # a, b, c, e: (4 * 2 * 1 * 1) ** (1/4)
    assert full["median_speedup"] == pytest.approx(1.5) and full["over_2x"] == 1 and none["over_2x"] == 0
    assert none["geomean_speedup"] == pytest.approx(2.0) and full["timed"] == 4 and full["untimed"] == ["d"]
    assert full["candidates"] == 8 and full["wins"] == 3
    assert full["reasons"] == {"incorrect": 1, "slower": 1, "cheat": 1, "unparsable": 1}  # the report's order
    assert full["rejected"] == 4 and full["rejected_share"] == pytest.approx(0.5)
    assert full["llm_replies"] == 8 and full["replies_per_win"] == pytest.approx(8 / 3)
    assert full["win_levels"] == {"none": 0, "L1": 1, "L2": 1, "L3": 1, "L4": 0}
    assert none["reasons"] == {"compile_error": 1, "rejected": 1} and none["rejected_share"] == pytest.approx(2 / 6)
    assert none["replies_per_win"] == pytest.approx(2.0) and none["win_levels"]["none"] == 3
    # op a's torch references: full ends at 1 ms, none at 2 ms (eager 8 ms, compile 2 ms)
    assert full["geomean_vs_eager"] == pytest.approx(8.0) and full["geomean_vs_compile"] == pytest.approx(2.0)
    assert none["geomean_vs_compile"] == pytest.approx(1.0)
    assert full["median_best_round"] == pytest.approx(2.5)  # best rounds 3 (a) and 2 (b)
    assert full["groundings"] == ["full"] and full["unfinished"] == ["e"]


def test_paired_comparison_by_hand(results):
    cmp = compare_arms(results["full"], results["none"], seed=1)
    assert [(p["op"], p["ratio"], p["verdict"]) for p in cmp["pairs"]] == [
        ("a", pytest.approx(2.0), "win"), ("b", pytest.approx(1.0), "tie"), ("c", pytest.approx(0.5), "loss")]
    assert cmp["geomean_ratio"] == pytest.approx(1.0)
    # resampling {ln 2, 0, -ln 2}: all three -ln 2 has probability 1/27 (3.7% > 2.5%), so the interval's ends
    # are the extreme ratios themselves
    assert cmp["ci95"] == [pytest.approx(0.5), pytest.approx(2.0)]
    assert (cmp["wins"], cmp["losses"], cmp["ties"]) == (1, 1, 1)
    assert cmp["untimed"] == ["d"] and cmp["only_a"] == ["e"] and cmp["only_b"] == []
    assert compare_arms(results["none"], results["full"])["pairs"][0]["verdict"] == "loss"


def test_bootstrap_is_seeded_and_narrows_to_a_constant_ratio():
    ratios = [1.1, 1.3, 0.9, 2.0, 1.05, 1.2]
    assert bootstrap_geomean(ratios, seed=3) == bootstrap_geomean(ratios, seed=3)
    lo, hi = bootstrap_geomean(ratios, seed=3)
    g = math.exp(sum(map(math.log, ratios)) / len(ratios))
    assert min(ratios) < lo < g < hi < max(ratios)
    assert bootstrap_geomean([1.5] * 4) == (pytest.approx(1.5), pytest.approx(1.5))


def test_within_two_percent_is_a_tie_either_way(results):
    base = results["none"][0]  # op a, x2
    def verdict(speedup: float) -> str:
        return compare_arms([replace(base, speedup=speedup)], [base])["pairs"][0]["verdict"]
    assert [verdict(2 * f) for f in (1.019, 1 / 1.019, 1.021, 1 / 1.021)] == ["tie", "tie", "win", "loss"]


def test_an_arm_that_tried_nothing_is_no_tie(results):
    """A timed baseline with no candidate yet (a job cut short) is 1.00x, and would pass for a tie."""
    base = results["none"][0]
    untried = replace(base, speedup=1.0, rounds=0)
    cmp = compare_arms([untried], [replace(base, speedup=1.0)])
    assert cmp["pairs"] == [] and cmp["untimed"] == [base.op]


def _kopt(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "KOPT_HOME": str(cwd / "home"), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "kopt.cli", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_cli_compares_two_arms_as_markdown_and_json(tmp_path):
    store = _build(tmp_path)
    md = _kopt(["eval", "report", "--store", str(store), "--compare", "full", "none"], tmp_path)
    assert md.returncode == 0, md.stderr
    text = md.stdout
    assert "| figure | full | none |" in text and "| candidates rejected | 4 (50%) | 2 (33%) |" in text
    assert "| LLM replies consumed / per win | 8 / 2.67 | 6 / 2 |" in text
    assert "| unparsable reply | 1 (12%) | 0 (0%) |" in text and "| cheat | 1 (12%) | 0 (0%) |" in text
    assert "| a | fam | 4.00x | 2.00x | 2.000 | win |" in text
    assert "Geomean full / none: **1.000** (95% bootstrap interval 0.500-2.000 over 3 operators, 10000 resamples" in text
    assert "ties (within 2%) 1" in text and "only in full: e" in text
    js = _kopt(["eval", "report", "--store", str(store), "--compare", "full", "none", "--json"], tmp_path)
    data = json.loads(js.stdout)
    assert data["compare"]["geomean_ratio"] == pytest.approx(1.0)
    assert data["arms"]["none"]["summary"]["reasons"] == {"compile_error": 1, "rejected": 1}
    one = _kopt(["eval", "report", "--store", str(store), "--arm", "none"], tmp_path)
    assert one.returncode == 0 and "| figure | none |" in one.stdout and "bootstrap" not in one.stdout


def test_an_operator_left_out_leaves_every_figure_of_both_arms(tmp_path):
    store = _build(tmp_path)
    args = ["eval", "report", "--store", str(store), "--compare", "full", "none", "--json"]
    whole = json.loads(_kopt(args, tmp_path).stdout)
    out = _kopt([*args, "--leave-out", "a"], tmp_path)
    assert out.returncode == 0, out.stderr
    left = json.loads(out.stdout)
    for arm in ("full", "none"):
        ops = {r["op"] for r in whole["arms"][arm]["results"]}
        assert {r["op"] for r in left["arms"][arm]["results"]} == ops - {"a"}
    assert "a" not in {p["op"] for p in left["compare"]["pairs"]} and "a" in {p["op"] for p in whole["compare"]["pairs"]}
    md = _kopt(["eval", "report", "--store", str(store), "--compare", "full", "none", "--leave-out", "a"], tmp_path)
    assert "(left out: a)" in md.stdout and "| a | fam |" not in md.stdout
    bad = _kopt([*args, "--leave-out", "zz"], tmp_path)
    assert bad.returncode == 1 and json.loads(bad.stdout)["error"] == "--leave-out zz: no such operator in full, none"
    assert "Traceback" not in bad.stderr


def test_cli_says_which_arm_is_missing(tmp_path):
    store = _build(tmp_path)
    bad = _kopt(["eval", "report", "--store", str(store), "--compare", "full", "nope"], tmp_path)
    assert bad.returncode != 0 and "no runs of campaign 'nope'" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_arms_can_be_the_groundings_of_one_campaign(tmp_path):
    """kopt eval suite --grounding keeps both arms in one campaign: CAMPAIGN/GROUNDING picks one."""
    store = RoundsStore(_build(tmp_path))
    try:
        for run in store.runs():  # the two campaigns become one, told apart by the runs' grounding
            store.set_status(run.run_id, run.status, run.stop_reason, {**run.options, "campaign": "llm"})
    finally:
        store.close()
    out = _kopt(["eval", "report", "--store", str(tmp_path / ".kopt"), "--compare", "llm/full", "llm/none", "--json"],
                tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["compare"]["wins"] == 1 and data["compare"]["only_a"] == ["e"]
    assert data["arms"]["llm/none"]["summary"]["groundings"] == ["none"]
    missing = _kopt(["eval", "report", "--store", str(tmp_path / ".kopt"), "--arm", "llm/half"], tmp_path)
    assert missing.returncode != 0 and "no runs of campaign 'llm' with grounding 'half'" in missing.stderr
    mixed = _kopt(["eval", "report", "--store", str(tmp_path / ".kopt"), "--campaign", "llm"], tmp_path)
    assert mixed.returncode != 0 and "report them with --compare llm/full llm/none" in mixed.stderr


def test_an_arm_without_torch_references_uses_the_other_arms(tmp_path):
    """The campaign times torch eager/compile once per task (one arm's run); the report finds them for the other."""
    store = RoundsStore(_build(tmp_path))
    try:
        for run in store.runs():
            if run.options["campaign"] == "none" and run.options["op"] == "a":
                store.set_status(run.run_id, run.status, run.stop_reason,
                                 {k: v for k, v in run.options.items() if k != "references"})
    finally:
        store.close()
    js = _kopt(["eval", "report", "--store", str(tmp_path / ".kopt"), "--compare", "full", "none", "--json"], tmp_path)
    assert js.returncode == 0, js.stderr
    none = json.loads(js.stdout)["arms"]["none"]["summary"]
    assert none["geomean_vs_compile"] == pytest.approx(1.0) and none["geomean_vs_eager"] == pytest.approx(4.0)
