"""One Outcome type, one way to record a round: every list of outcomes derives from kopt.vocabulary.Outcome,
and the loop and MCP record_round store rounds through the same optimize.record_round."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from kopt.commands.optimize import OUTCOME_STYLE
from kopt.mcp_server import RoundModel
from kopt.optimize import Timing, Validated, judge, record_round
from kopt.rounds.report import OUTCOME_COLOR
from kopt.rounds.store import RoundsStore, hypothesis_key
from kopt.suite_report import REJECT_REASONS
from kopt.vocabulary import FAILED, KEPT, ROUND_OUTCOMES, Outcome

ROOT = Path(__file__).resolve().parents[1]


def test_every_outcome_has_a_style_a_colour_and_a_place_in_the_reports():
    assert set(OUTCOME_STYLE) == set(Outcome)
    assert list(OUTCOME_COLOR) == list(ROUND_OUTCOMES)  # the HTML legend lists them in this order
    assert set(ROUND_OUTCOMES) == set(KEPT) | {o for o in REJECT_REASONS if o != "cheat"}
    assert set(FAILED) < set(ROUND_OUTCOMES) and Outcome.NOT_VALIDATED not in ROUND_OUTCOMES
    assert RoundModel.model_fields["outcome"].description.split(" | ") == [o.value for o in ROUND_OUTCOMES]


def test_no_module_spells_an_outcome_list_of_its_own():
    """A tuple, list or set of two or more outcome strings in kopt/ is a second home for the list. The harness is
    exempt: its failure reasons (timeout, crash, cuda_error, ...) are its own words, which
    optimize.VALIDATION_TO_OUTCOME maps to outcomes."""
    names = {o.value for o in Outcome}
    found = []
    for path in (ROOT / "kopt").rglob("*.py"):
        if path.parent.name == "harness":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                strings = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if sum(s in names for s in strings) >= 2:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_the_hypothesis_key_has_one_format():
    assert hypothesis_key("small_block", "autotune_block") == "small_block/autotune_block"
    assert hypothesis_key("small_block", None) == "small_block/llm"  # an LLM (or an agent) wrote the candidate
    assert hypothesis_key(None, None) == "llm"


def record(store, run, n, **kw):
    args = dict(n=n, hypothesis="h", finding_ids=["small_block"], pattern_id=None, proposer="llm:agent",
                source="def entry(): pass\n", outcome=Outcome.SLOWER, message="m", times=[2.0], roofline=[0.5],
                base=[1.0], evidence={}, level_reached="L1", seconds=1.234)
    return record_round(store, run, **{**args, **kw})


def test_record_round_stores_a_typed_round_with_speedups_and_refuses_an_unknown_outcome(tmp_path):
    store = RoundsStore(tmp_path / ".kopt")
    run = store.create_run(tmp_path / "t.py", "s", {"rounds": 3}, [4.0],
                           {"available": True, "reason": "", "roofline": []}, {})
    outcome, _ = judge(None, Validated(True, cases=1), Timing(True, [2.0]), None, [4.0])
    rnd = record(store, run, 1, outcome=outcome, base=[4.0], pattern_id="autotune_block")
    again = store.round(run.run_id, 1)
    assert again.outcome == "improved" and type(again.outcome) is str and json.dumps(again.to_dict())
    assert (again.hypothesis_key, again.speedup_initial, again.speedup_best, again.seconds) == (
        "small_block/autotune_block", 2.0, 2.0, 1.23)
    assert store.get(again.candidate) == "def entry(): pass\n" and rnd == again
    with pytest.raises(ValueError, match="'faster' is not a valid Outcome"):
        record(store, run, 2, outcome="faster")
    assert [r.n for r in store.rounds(run.run_id)] == [1]
