"""Synthesis on recorded rounds: a real rounds store (SQLite + artifacts) built here, real pattern files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kopt.patterns import load_patterns
from kopt.rounds.store import Round, RoundsStore
from kopt.synthesize import synthesize

TASK = '''"""op. Family: {family}."""
import triton
import triton.language as tl

FAMILY = "{family}"


@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * n, mask=offs < n)
    tl.store(y_ptr + offs, x, mask=offs < n)


def entry(x):
    k[(4,)](x, x, 4, BLOCK=256)
'''
HINTS_ID = "llm_vector_hints"  # LLM wins are keyed by their kind of change, whatever finding they were filed under
HINTED = TASK.replace("offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
                      "offs = tl.max_contiguous(tl.multiple_of(tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), BLOCK), BLOCK)")

CURATED = {
    "id": "raise_block", "title": "Raise a small block", "family": "launch_config", "applies_to": ["any"],
    "symptoms": {"findings": ["small_block"]}, "recipe": {"name": "launch_config_search"},
    "rationale": {"why": "bigger blocks keep more bytes in flight"}, "expected_effect": "1.5x",
    "provenance": {"kind": "curated"}, "stats": {"tries": 4, "wins": 2, "speedups": [1.5, 2.0]},
}


# a row reduction: L1 sees a `reduce` kernel whose only signal is no_autotune (num_warps is set, the grid scales)
ROW_SUM = '''"""row sum. Family: {family}."""
import triton
import triton.language as tl

FAMILY = "{family}"


@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n)
    tl.store(y_ptr + row, tl.sum(x, axis=0))


def entry(x, y):
    k[(x.shape[0],)](x, y, x.shape[1], BLOCK=1024, num_warps=4)
'''
# the pattern deeper levels find for it: L2/L3 findings only, so L1 cannot reach it
TAIL = {
    "id": "fill_last_wave", "title": "Size tiles so the grid fills the last wave", "family": "launch_config",
    "applies_to": ["reduction", "matmul"], "symptoms": {"findings": ["tail_effect"]},
    "recipe": {"name": "launch_config_search", "params": {"objective": "waves_close_to_integer"}},
    "rationale": {"why": "a partial last wave idles most SMs"}, "expected_effect": "1.2x",
    "provenance": {"kind": "curated"},
}


def _run(store: RoundsStore, op: str, family: str, rounds: list[dict], task: str = TASK) -> str:
    run = store.create_run(Path(f"/suite/{op}.py"), task.format(family=family), {"op": op}, [1.0] * 5,
                           {"available": True}, {"ok": True})
    for n, spec in enumerate(rounds, 1):
        source = spec.pop("source", None)
        store.add_round(Round(
            run_id=run.run_id, n=n, level_reached=spec.pop("level", "L1"), hypothesis=spec.pop("hyp", f"{op} try {n}"),
            hypothesis_key=f"{spec['finding']}/{spec.get('pattern') or 'llm'}", finding_ids=[spec["finding"]],
            pattern_id=spec.get("pattern"), proposer=spec["proposer"],
            candidate=store.put(source.format(family=family)) if source else None, outcome=spec["outcome"],
            case_times=[0.5] * 5 if spec["outcome"] == "improved" else [], speedup_initial=spec.get("speedup"),
            speedup_best=spec.get("speedup"), seconds=1.0))
    return run.run_id


@pytest.fixture()
def curated_dir(tmp_path: Path) -> Path:
    d = tmp_path / "curated"
    d.mkdir()
    (d / "raise_block.yaml").write_text("# hand-written, keep my comment\n" + yaml.safe_dump(CURATED, sort_keys=False))
    return d


@pytest.fixture()
def store(tmp_path: Path):
    s = RoundsStore(tmp_path / "ws" / ".kopt")
    yield s
    s.close()


def _hint_win(speedup: float) -> dict:
    return {"finding": "uncoalesced_access", "proposer": "llm:m", "outcome": "improved", "source": HINTED,
            "speedup": speedup, "level": "L3"}


def test_two_uncovered_wins_become_one_pattern_with_provenance(store, curated_dir, tmp_path):
    a = _run(store, "gelu", "elementwise", [_hint_win(1.8)])
    b = _run(store, "row_sum", "reduction", [
        {"finding": "uncoalesced_access", "proposer": "llm:m", "outcome": "incorrect", "source": HINTED},
        _hint_win(2.4)])
    out = tmp_path / "user"
    actions = synthesize(store, out, curated_dirs=[curated_dir])
    created = [x for x in actions if x.kind == "create"]
    assert [x.pattern_id for x in created] == [HINTS_ID]
    (pattern,) = [p for p in load_patterns([out]) if p.id == HINTS_ID]
    assert pattern.provenance == {"kind": "synthesized", "rounds": [f"{a}:1", f"{b}:2"]}
    assert pattern.applies_to == ["elementwise", "reduction"]
    assert "uncoalesced_access" in pattern.symptoms["findings"]  # the parent's strided access, diagnosed by L1
    assert pattern.stats["wins"] == 2 and pattern.stats["tries"] == 3  # the failed attempt counts as a try
    assert sorted(pattern.stats["speedups"]) == [1.8, 2.4]
    assert "gelu" in pattern.recipe["guidance"] and pattern.family == "memory_access"


def test_one_win_is_not_enough_until_a_second_arrives(store, curated_dir, tmp_path):
    out = tmp_path / "user"
    _run(store, "gelu", "elementwise", [_hint_win(1.5)])
    (skip,) = synthesize(store, out, curated_dirs=[curated_dir])
    assert skip.kind == "skip" and "2 needed" in skip.reason
    assert not list(out.glob("*.yaml"))
    _run(store, "silu", "elementwise", [_hint_win(1.6)])
    (create,) = synthesize(store, out, curated_dirs=[curated_dir])
    assert create.kind == "create" and len(create.rounds) == 2
    assert load_patterns([out])[0].applies_to == ["elementwise"]  # same family twice: one entry


def test_covered_wins_and_failures_update_curated_stats_in_an_overlay(store, curated_dir, tmp_path):
    before = (curated_dir / "raise_block.yaml").read_bytes()
    _run(store, "gelu", "elementwise", [
        {"finding": "small_block", "proposer": "recipe:launch_config_search", "pattern": "raise_block",
         "outcome": "improved", "speedup": 3.0},
        {"finding": "small_block", "proposer": "recipe:launch_config_search", "pattern": "raise_block",
         "outcome": "slower"}])
    # no pattern named, same finding + same recipe: a near-duplicate of raise_block, merged into it
    _run(store, "softmax", "softmax", [{"finding": "small_block", "proposer": "recipe:launch_config_search",
                                        "outcome": "compile_error"}])
    out = tmp_path / "user"
    (update,) = synthesize(store, out, curated_dirs=[curated_dir])
    assert update.kind == "update" and update.pattern_id == "raise_block" and update.tries == 3
    assert (curated_dir / "raise_block.yaml").read_bytes() == before  # curated text never rewritten
    merged = {p.id: p for p in load_patterns([curated_dir, out])}["raise_block"]
    assert merged.stats["tries"] == 7 and merged.stats["wins"] == 3 and merged.stats["speedups"] == [1.5, 2.0, 3.0]
    assert merged.stats["families"] == ["elementwise"]
    assert merged.title == CURATED["title"] and merged.provenance["kind"] == "curated"
    assert merged.win_rate < (2 + 1) / (4 + 2) + 0.1 and merged.win_rate == pytest.approx(4 / 9)

    # a second synthesis counts nothing twice; a new failure lowers the win rate further
    assert synthesize(store, out, curated_dirs=[curated_dir]) == []
    _run(store, "rmsnorm", "norm", [{"finding": "small_block", "proposer": "recipe:launch_config_search",
                                     "pattern": "raise_block", "outcome": "timeout"}])
    synthesize(store, out, curated_dirs=[curated_dir])
    again = {p.id: p for p in load_patterns([curated_dir, out])}["raise_block"]
    assert again.stats["tries"] == 8 and again.stats["wins"] == 3 and again.win_rate < merged.win_rate


def test_later_wins_update_the_synthesized_pattern(store, curated_dir, tmp_path):
    out = tmp_path / "user"
    _run(store, "gelu", "elementwise", [_hint_win(1.5)])
    _run(store, "silu", "elementwise", [_hint_win(1.7)])
    synthesize(store, out, curated_dirs=[curated_dir])
    c = _run(store, "col_sum", "reduction", [_hint_win(2.0)])
    (update,) = synthesize(store, out, curated_dirs=[curated_dir])
    assert update.kind == "update" and update.pattern_id == HINTS_ID
    (p,) = load_patterns([out])
    assert p.stats["wins"] == 3 and p.applies_to == ["elementwise"] and p.stats["families"] == ["elementwise", "reduction"]
    assert f"{c}:1" in p.provenance["rounds"]


def test_cli_dry_run_writes_nothing_then_writes(store, curated_dir, tmp_path):
    _run(store, "gelu", "elementwise", [_hint_win(1.5)])
    _run(store, "silu", "elementwise", [_hint_win(1.7)])
    out = tmp_path / "user"
    env = {**os.environ, "KOPT_HOME": str(tmp_path / "home")}
    cmd = [sys.executable, "-m", "kopt.cli", "synthesize", "--store", str(store.root), "--out", str(out), "--json"]
    dry = subprocess.run(cmd + ["--dry-run"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    report = json.loads(dry.stdout)
    # the shipped catalog's alignment_hints prescribes hints for the parent's strided access: the wins count toward it
    assert report["dry_run"] and [(a["kind"], a["pattern_id"]) for a in report["actions"]] == [("update", "alignment_hints")]
    assert not out.exists()
    done = subprocess.run(cmd + ["--no-index"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (out / "alignment_hints.yaml").read_text().startswith("# kopt synthesize: stats overlay")
    assert (out / "synthesis.json").is_file()
    bad = subprocess.run([sys.executable, "-m", "kopt.cli", "synthesize", "--store", str(tmp_path / "nowhere")],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert bad.returncode == 1 and "no rounds store" in bad.stderr and "Traceback" not in bad.stderr


def test_synthesized_pattern_is_upserted_into_the_patterns_collection(store, curated_dir, tmp_path, monkeypatch):
    """Real Qdrant Edge index with the real patterns corpus: after synthesis, L1's retrieval finds the new pattern,
    and a second synthesis replaces its point instead of adding a duplicate."""
    monkeypatch.setenv("KOPT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from kopt.config import load_settings
    from kopt.index import open_index
    from kopt.ingest.pipeline import ingest_corpus
    from kopt.synthesize import upsert_index

    settings = load_settings(tmp_path)
    ingest_corpus("patterns", settings, progress=False)
    _run(store, "gelu", "elementwise", [_hint_win(1.5)])
    _run(store, "silu", "elementwise", [_hint_win(1.7)])
    out = tmp_path / "home" / "patterns"
    synthesize(store, out, curated_dirs=[curated_dir])
    path = out / "llm_vector_hints.yaml"
    assert "upserted 1" in upsert_index(settings, [path])
    _run(store, "relu", "elementwise", [_hint_win(1.9)])
    synthesize(store, out, curated_dirs=[curated_dir])
    upsert_index(settings, [path])
    index = open_index(load_settings(tmp_path))
    try:
        hits = index.search("uncoalesced access fixed by multiple_of max_contiguous hints", corpus="patterns", k=10)
        mine = [h for h in hits if h.meta.get("path") == "synthesized/llm_vector_hints.yaml"]
        assert len(mine) == 1 and "relu" in mine[0].text
    finally:
        index.close()


def _tail(outcome: str, speedup: float | None = None) -> dict:
    return {"finding": "tail_effect", "proposer": "recipe:launch_config_search", "pattern": "fill_last_wave",
            "outcome": outcome, "speedup": speedup, "level": "L3"}


def test_wins_only_deeper_levels_found_become_an_l1_shortcut_that_l1_acts_on(store, curated_dir, tmp_path):
    """Two L3 wins of a curated pattern on reduce kernels, one failure: a synthesized pattern L1 can match from the
    source alone, with the same recipe, and proven enough (2 of 3) that L1 stops there without profiling."""
    from kopt.diagnose.escalate import GROUNDED
    from kopt.diagnose.l1 import triage

    (curated_dir / "fill_last_wave.yaml").write_text(yaml.safe_dump(TAIL, sort_keys=False))
    a = _run(store, "row_sum", "reduction", [_tail("improved", 1.1)], ROW_SUM)
    b = _run(store, "row_max", "reduction", [_tail("improved", 1.2)], ROW_SUM)
    c = _run(store, "softmax", "softmax", [_tail("slower")], ROW_SUM)
    _run(store, "gelu", "elementwise", [_tail("improved", 1.3)])  # another kind of kernel: not in the group
    out = tmp_path / "user"
    actions = synthesize(store, out, curated_dirs=[curated_dir])
    (create,) = [x for x in actions if x.kind == "create"]
    assert create.pattern_id == "fill_last_wave_at_l1_reduce" and create.wins == 2 and create.tries == 3
    shortcut = {p.id: p for p in load_patterns([out])}["fill_last_wave_at_l1_reduce"]
    assert shortcut.symptoms["source"] == ["no_autotune"] and shortcut.finding_ids == ["untuned_config"]
    assert shortcut.recipe["name"] == "launch_config_search" and shortcut.recipe["params"] == TAIL["recipe"]["params"]
    assert shortcut.applies_to == ["reduce"] and shortcut.proven
    assert shortcut.provenance["rounds"] == [f"{a}:1", f"{b}:1"] and f"{c}:1" not in shortcut.provenance["rounds"]
    update = next(x for x in actions if x.pattern_id == "fill_last_wave")
    assert update.kind == "update" and update.tries == 4  # the curated pattern's own record counts every try

    catalog = load_patterns([curated_dir, out])
    task = tmp_path / "row_mean.py"
    task.write_text(ROW_SUM.format(family="reduction"))
    (finding,) = [f for f in triage(task, patterns=catalog) if f.id == "untuned_config"]
    assert finding.patterns[0] == "fill_last_wave_at_l1_reduce" and finding.confidence >= GROUNDED
    before = [f for f in triage(task, patterns=load_patterns([curated_dir])) if f.id == "untuned_config"]
    assert all(f.confidence < GROUNDED for f in before)  # without synthesis L1 is not sure enough to stop
    other = tmp_path / "gelu.py"
    other.write_text(TASK.format(family="elementwise"))
    assert all("fill_last_wave_at_l1_reduce" not in f.patterns for f in triage(other, patterns=catalog))

    # counted once: a second synthesis adds nothing; a new deep failure on a matching kernel lowers its record
    assert [x for x in synthesize(store, out, curated_dirs=[curated_dir]) if x.kind != "skip"] == []
    _run(store, "rmsnorm", "norm", [_tail("timeout"), _tail("slower")], ROW_SUM)
    synthesize(store, out, curated_dirs=[curated_dir])
    again = {p.id: p for p in load_patterns([out])}["fill_last_wave_at_l1_reduce"]
    assert (again.stats["wins"], again.stats["tries"]) == (2, 5) and not again.proven


def test_a_shortcut_asks_for_more_signals_when_the_general_rule_is_not_proven(store, curated_dir, tmp_path):
    """Wins on kernels with default num_warps, failures on kernels without: `no_autotune` alone won 2 of 5, so the
    shortcut also asks for `default_num_warps` (2 of 2)."""
    (curated_dir / "fill_last_wave.yaml").write_text(yaml.safe_dump(TAIL, sort_keys=False))
    defaults = ROW_SUM.replace("BLOCK=1024, num_warps=4)", "BLOCK=8192)")  # a big tile on the default 4 warps
    for op in ("col_sum", "col_max"):
        _run(store, op, "reduction", [_tail("improved", 1.7)], defaults)
    for op in ("softmax", "layernorm", "rmsnorm"):
        _run(store, op, "norm", [_tail("slower")], ROW_SUM)
    out = tmp_path / "user"
    (create,) = [x for x in synthesize(store, out, curated_dirs=[curated_dir]) if x.kind == "create"]
    shortcut = {p.id: p for p in load_patterns([out])}[create.pattern_id]
    assert shortcut.symptoms["source"] == ["default_num_warps", "no_autotune"]
    assert (shortcut.stats["wins"], shortcut.stats["tries"]) == (2, 2)


def test_the_loop_tries_a_fix_once_and_keeps_shortcuts_to_their_kind_of_kernel(tmp_path):
    """A shortcut and its curated pattern share a recipe: trying either counts for both. The loop adds catalog
    patterns for a finding by win rate, but a synthesized one only for the kinds of kernel it was validated on."""
    from kopt.optimize import pattern_order
    from kopt.patterns import pattern_from_dict
    from kopt.rounds.store import RoundsStore as Store
    from kopt.vocabulary import Finding

    curated = pattern_from_dict(TAIL)
    shortcut = pattern_from_dict({**TAIL, "id": "fill_last_wave_at_l1_reduce", "applies_to": ["reduce"],
                                  "symptoms": {"findings": ["untuned_config"], "source": ["no_autotune"]},
                                  "provenance": {"kind": "synthesized", "rounds": ["r:1", "s:1"]},
                                  "stats": {"tries": 2, "wins": 2, "speedups": [1.1, 1.2]}})
    tune = pattern_from_dict({**TAIL, "id": "autotune_it", "symptoms": {"findings": ["untuned_config"]},
                              "recipe": {"name": "autotune"}})
    catalog = {p.id: p for p in (curated, shortcut, tune)}
    untuned = Finding("untuned_config", "L3", "no autotune")
    assert pattern_order(untuned, catalog, ("reduce",))[0] == "fill_last_wave_at_l1_reduce"
    assert pattern_order(untuned, catalog, ("elementwise",)) == ["autotune_it"]

    from kopt.optimize import Optimizer

    store = Store(tmp_path / ".kopt")
    try:
        task = tmp_path / "row_sum.py"
        task.write_text(ROW_SUM.format(family="reduction"))
        run = store.create_run(task, task.read_text(), {"rounds": 1}, [1.0], {"available": False, "reason": "cpu"},
                               {"ok": True})
        opt = Optimizer(task, None, store, run)
        opt.catalog = catalog
        assert opt.same_fix({"fill_last_wave_at_l1_reduce"}) == {"fill_last_wave_at_l1_reduce", "fill_last_wave"}
        assert opt.same_fix({"autotune_it"}) == {"autotune_it"}
    finally:
        store.close()
