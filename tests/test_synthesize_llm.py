"""Synthesis from LLM wins, on real candidates of the LLM campaign (evals/llm/campaign-2026-12-01): each fixture is
a parent kernel, the candidate an LLM round made from it, and the round's Change line (tests/fixtures/synthesis)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kopt.change_kinds import ANSWERS, classify_change, detected
from kopt.corpora import CORPORA_DIR
from kopt.patterns import check_pattern, load_patterns
from kopt.rounds.store import Round, RoundsStore
from kopt.synthesize import synthesize

FIXTURES = Path(__file__).parent / "fixtures" / "synthesis"
SUITE = Path(__file__).resolve().parents[1] / "evals" / "suite"
ROUNDS = json.loads((FIXTURES / "rounds.json").read_text())

# what each real round did, in kopt's words (read off the diff and the Change line by hand)
EXPECTED = {
    "col_sum_full_1": "split_reduction",  # a (column strip x row chunk) grid of fp32 partials, then a finalize kernel
    "swiglu_none_2": "unmasked_fast_path",  # full blocks unmasked, the tail masked
    "bmm_fp16_none_2": "operand_padding",  # misaligned operands copied into zero-padded buffers first
    "row_sum_full_2": "aligned_windows",  # rows read through 16-byte-aligned windows
    "row_max_none_2": "aligned_windows",
    "histogram_none_2": "atomics_privatized",  # global atomics spread over replicated scratch copies
    "gather_dim1_full_1": "grid_flattened",  # (row, k-block) grid -> one flat 1-D grid
    "depthwise_conv1d_none_1": "dot_reformulation",  # taps as a banded (Toeplitz) tensor-core product
    "transpose2d_full_2": "autotune_added",
}


def _pair(name: str) -> tuple[str, str]:
    """(parent, candidate); a round-1 parent is the suite's own task file, kept only there."""
    parent = FIXTURES / f"{name}.parent.py"
    if not parent.is_file():
        parent = SUITE / f"{name.rsplit('_', 2)[0]}.py"
    return parent.read_text(), (FIXTURES / f"{name}.candidate.py").read_text()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_main_kind_of_change_of_real_llm_rounds(name):
    parent, candidate = _pair(name)
    assert classify_change(parent, candidate, ROUNDS[name]["change"])[0] == EXPECTED[name]
    assert EXPECTED[name] in detected(parent, candidate)  # the diff alone shows it; the Change line only ranks


def test_col_sum_is_a_split_reduction_not_a_precision_change():
    """The old classifier called col_sum's 22x win `precision_changed` (its partials are fp32); no dtype of an
    operand changed."""
    parent, candidate = _pair("col_sum_full_1")
    assert "precision" not in detected(parent, candidate)
    assert detected(parent, parent) == [] and classify_change(parent, parent + "\n# note\n") == ["rewritten"]


def _store_with(store: RoundsStore, rounds: list[tuple[str, str, str]]) -> list[str]:
    """Runs whose round 1 is a fixture's real candidate: (fixture, arm, outcome). Returns the run ids."""
    ids = []
    for name, arm, outcome in rounds:
        parent, candidate = _pair(name)
        meta = ROUNDS[name]
        op = name.rsplit("_", 2)[0]
        run = store.create_run(Path(f"/suite/{op}.py"), parent, {"op": op, "grounding": arm}, [1.0], {"available": True},
                               {"ok": True})
        findings = meta["finding_ids"] if arm == "full" else []
        store.add_round(Round(
            run_id=run.run_id, n=1, level_reached="L3" if findings else None, hypothesis=meta["change"],
            hypothesis_key=f"{findings[0]}/llm" if findings else "llm", finding_ids=findings, pattern_id=None,
            proposer="llm:m", candidate=store.put(candidate), outcome=outcome,
            speedup_initial=meta["speedup_over_parent"], speedup_best=meta["speedup_over_parent"], seconds=1.0))
        ids.append(run.run_id)
    return ids


@pytest.fixture()
def store(tmp_path: Path):
    s = RoundsStore(tmp_path / ".kopt")
    yield s
    s.close()


def test_two_arms_wins_of_one_kind_become_one_pattern_with_symptoms_guidance_and_diffs(store, tmp_path):
    """A grounded and an ungrounded aligned-window win (different findings, one with none) make one pattern. Its
    symptoms come from diagnosing the parents, its guidance from the Change lines, its examples from the diffs;
    it passes the schema check and loads."""
    full, none = _store_with(store, [("row_sum_full_2", "full", "improved"), ("row_max_none_2", "none", "improved")])
    out = tmp_path / "patterns"
    actions = synthesize(store, out, curated_dirs=[CORPORA_DIR / "patterns"])
    (create,) = [a for a in actions if a.kind == "create"]
    assert create.pattern_id == "llm_aligned_windows" and create.rounds == [f"{full}:1", f"{none}:1"]
    text = (out / "llm_aligned_windows.yaml").read_text()
    check_pattern(yaml.safe_load(text), out / "llm_aligned_windows.yaml")
    assert "  diff: |" in text and "\n    +++ candidate\n" in text  # the diff reads as a diff in the file
    (p,) = [p for p in load_patterns([out]) if p.id == "llm_aligned_windows"]
    assert p.provenance == {"kind": "synthesized", "rounds": [f"{full}:1", f"{none}:1"]}
    assert p.family == "memory_access" and p.applies_to == ["reduction"]
    assert p.finding_ids or p.source_signals  # what the parents showed, found by L1 on their source ...
    assert set(p.finding_ids + p.source_signals) <= set(ANSWERS["aligned_windows"])  # ... that the change answers
    assert "row_sum (1.20x)" in p.recipe["guidance"] and "row_max" in p.recipe["guidance"]
    assert p.preconditions and sorted(p.stats["speedups"]) == sorted(
        round(ROUNDS[n]["speedup_over_parent"], 3) for n in ("row_sum_full_2", "row_max_none_2"))
    assert [ex["round"] for ex in p.examples] == [f"{full}:1", f"{none}:1"]  # best first
    assert "// VEC) * VEC" in p.examples[0]["diff"] and p.examples[0]["diff"].startswith("--- parent")
    assert "Example diff:" in p.text()


def test_a_win_a_curated_pattern_explains_counts_toward_it(store, tmp_path):
    """Autotune on a kernel L1 sees as untuned: the curated autotune_configs pattern prescribes exactly that, so the
    win updates its stats (in an overlay) instead of making a new pattern."""
    (run,) = _store_with(store, [("transpose2d_full_2", "full", "improved")])
    out = tmp_path / "patterns"
    (update,) = synthesize(store, out, curated_dirs=[CORPORA_DIR / "patterns"])
    assert (update.kind, update.pattern_id, update.rounds) == ("update", "autotune_configs", [f"{run}:1"])


def test_an_ungrounded_win_borrows_the_recorded_diagnosis_of_the_same_parent(store, tmp_path):
    """The `none` arm diagnoses nothing, but a grounded round that started from the same source recorded its
    findings: the attempt carries them, so the pattern's symptoms include them."""
    from kopt.synthesize import collect_attempts

    _store_with(store, [("col_sum_full_1", "full", "slower"), ("col_sum_full_1", "none", "improved")])
    grounded, ungrounded = collect_attempts(store)
    assert ungrounded.finding == "llm" and ungrounded.change == "split_reduction"
    assert set(ROUNDS["col_sum_full_1"]["finding_ids"]) <= set(ungrounded.diagnosed)
    assert grounded.diagnosed == ungrounded.diagnosed


def test_one_win_of_a_kind_waits_for_a_second(store, tmp_path):
    _store_with(store, [("row_max_none_2", "none", "improved")])  # no curated pattern prescribes aligned windows
    out = tmp_path / "patterns"
    (skip,) = synthesize(store, out, curated_dirs=[CORPORA_DIR / "patterns"])
    assert skip.kind == "skip" and skip.pattern_id == "llm_aligned_windows" and "2 needed" in skip.reason
    assert not list(out.glob("*.yaml"))


def test_diagnosing_the_parents_adds_what_only_the_compiled_ir_shows(store):
    """With diagnose_parents, each parent kernel goes through kopt's diagnosis up to L3 (compiled for sm_90 on the
    CPU): the attempt then carries IR-level findings that neither L1 nor an ungrounded round could give."""
    from kopt.synthesize import collect_attempts

    _store_with(store, [("row_max_none_2", "none", "improved")])
    (plain,) = collect_attempts(store)
    (deep,) = collect_attempts(store, diagnose_parents=True)
    assert set(plain.diagnosed) < set(deep.diagnosed)
    ir_only = {"layout_conversion", "no_software_pipelining", "non_vectorized_load", "register_spill", "bank_conflicts"}
    assert set(deep.diagnosed) & ir_only and not set(plain.diagnosed) & ir_only


def test_symptoms_nearly_every_parent_shows_are_left_out(store, tmp_path):
    """Ten runs whose parents are all untuned: `untuned_config` tells none of them apart, so the pattern made from
    two of their wins does not list it, while what those two parents share beyond it stays."""
    from kopt.synthesize import collect_attempts, ubiquitous

    rounds = [("row_sum_full_2", "full", "improved"), ("row_max_none_2", "none", "improved")]
    rounds += [("swiglu_none_2", "none", "slower"), ("gather_dim1_full_1", "full", "slower")] * 4
    _store_with(store, rounds)
    attempts = collect_attempts(store)
    assert all("untuned_config" in a.diagnosed for a in attempts) and "untuned_config" in ubiquitous(attempts)
    synthesize(store, tmp_path / "p", curated_dirs=[CORPORA_DIR / "patterns"])
    (p,) = [p for p in load_patterns([tmp_path / "p"]) if p.id == "llm_aligned_windows"]
    assert "untuned_config" not in p.finding_ids and "no_autotune" not in p.source_signals
    assert p.finding_ids or p.source_signals


def test_pattern_examples_are_checked_and_files_without_them_round_trip(tmp_path):
    from kopt.errors import KoptError
    from kopt.patterns import load_pattern, pattern_from_dict, save_pattern

    curated = load_pattern(CORPORA_DIR / "patterns" / "two_stage_reduction.yaml")
    saved = save_pattern(curated, tmp_path)
    assert "examples" not in yaml.safe_load(saved.read_text())  # an old file stays as it was
    data = {**curated.to_dict(), "examples": [{"round": "r:1", "diff": "--- parent\n+++ candidate"}]}
    assert pattern_from_dict(data).examples[0]["round"] == "r:1"
    with pytest.raises(KoptError, match=r"examples\[0\]"):
        pattern_from_dict({**data, "examples": [{"round": "r:1"}]})
    with pytest.raises(KoptError, match=r"examples\[0\]\.patch"):
        pattern_from_dict({**data, "examples": [{"round": "r:1", "diff": "x", "patch": "y"}]})


def test_the_whole_change_line_comes_from_the_transcript(store):
    """A round's hypothesis keeps 300 characters of the Change line; guidance is built from the whole line, which the
    round's transcript holds (the reply verbatim)."""
    from kopt.synthesize import collect_attempts

    parent, candidate = _pair("swiglu_none_2")
    whole = ROUNDS["swiglu_none_2"]["change"] + " The tail block keeps its mask, so results stay exact."
    run = store.create_run(Path("/suite/swiglu.py"), parent, {"op": "swiglu"}, [1.0], {"available": True}, {"ok": True})
    transcript = store.put_json({"messages": [{"role": "user", "content": "..."},
                                              {"role": "assistant", "content": f"Change: {whole}\n```python\n...\n```"}]})
    store.add_round(Round(run_id=run.run_id, n=1, level_reached=None, hypothesis=whole[:300], hypothesis_key="llm",
                          finding_ids=[], pattern_id=None, proposer="llm:m", candidate=store.put(candidate),
                          outcome="improved", speedup_best=1.15, evidence={"transcript": transcript}, seconds=1.0))
    (attempt,) = collect_attempts(store)
    assert attempt.hypothesis == whole and attempt.change == "unmasked_fast_path"
