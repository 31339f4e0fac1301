"""The L1 signal registry and the recipe files hold together with the catalog: every signal has its detector,
every pattern names signals and recipes that exist, and adding a toy signal or a toy recipe takes one entry each."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from kopt import patterns
from kopt.diagnose import l1_detectors
from kopt.diagnose.l1 import triage
from kopt.diagnose.l1_detectors import DETECTORS, Signal, detects
from kopt.errors import KoptError
from kopt.patterns import RECIPES, load_patterns, pattern_from_dict
from kopt.rewrite import recipes
from kopt.signals import SIGNALS, SignalSpec

ROOT = Path(__file__).resolve().parents[1]
TOY_PATTERN = {**yaml.safe_load((ROOT / "corpora" / "patterns" / "alignment_hints.yaml").read_text()),
               "id": "drop_barrier", "recipe": {"name": "drop_barrier"}}


def test_every_registered_signal_has_exactly_its_detector():
    assert list(DETECTORS) and set(DETECTORS) == set(SIGNALS)
    with pytest.raises(ValueError, match="no signal 'made_up' in the registry"):
        detects("made_up")


def test_every_catalog_pattern_names_registered_signals_and_an_existing_recipe():
    for pattern in load_patterns():
        assert set(pattern.source_signals) <= set(SIGNALS), pattern.id
        assert pattern.recipe_name is None or pattern.recipe_name in recipes.RECIPES, pattern.id


def test_one_file_per_recipe_and_the_catalog_names_them_all():
    files = {p.stem for p in (ROOT / "kopt" / "rewrite" / "recipes").glob("*.py")} - {"__init__", "base", "launch_space"}
    assert files == set(RECIPES) == set(recipes.RECIPES)


def test_a_registered_signal_can_not_name_an_unknown_finding():
    with pytest.raises(ValueError, match="unknown finding id 'slow'"):
        SignalSpec("toy", "anything", "slow", 0.5)


TOY_TASK = textwrap.dedent('''\
    """A copy kernel that calls tl.debug_barrier in its body."""
    import triton
    import triton.language as tl

    @triton.jit
    def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.debug_barrier()
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    ''')


def test_a_toy_signal_is_one_registry_entry_and_one_detector(tmp_path, monkeypatch):
    """What ARCHITECTURE.md says to do to add a signal, done here: triage then reports its finding."""
    monkeypatch.setitem(SIGNALS, "debug_barrier", SignalSpec(
        "debug_barrier", "tl.debug_barrier in a kernel body", "latency_bound", 0.6, "the barrier is not needed"))
    monkeypatch.setattr(l1_detectors, "DETECTORS", dict(DETECTORS))

    @detects("debug_barrier")
    def _debug_barrier(s):
        return [Signal("debug_barrier", s.fn.name, [c.lineno], "a barrier in the body") for c in s.tl_calls("debug_barrier")]

    task = tmp_path / "toy.py"
    task.write_text(TOY_TASK)
    found = [f for f in triage(task, patterns=[]) if f.id == "latency_bound"]
    assert len(found) == 1 and found[0].kernel_lines == [8] and found[0].confidence == pytest.approx(0.36)
    assert found[0].conditions == ["the barrier is not needed"]


def test_a_toy_recipe_is_one_file_and_one_name(tmp_path, monkeypatch):
    """What ARCHITECTURE.md says to do to add a recipe, done here: a file `<name>.py` in the recipes package
    defining `<name>`, and its name in the catalog's list; propose() then runs it."""
    (tmp_path / "drop_barrier.py").write_text(textwrap.dedent('''\
        from kopt.rewrite.recipes.base import Proposal, Variant

        def drop_barrier(src, ctx):
            kept = src.code(src.module).replace("    tl.debug_barrier()\\n", "")
            return Proposal("drop_barrier", "drop the barrier", [Variant("no barrier", kept)])
        '''))
    monkeypatch.setattr(recipes, "__path__", [*recipes.__path__, str(tmp_path)])
    names = (*RECIPES, "drop_barrier")
    try:
        monkeypatch.setattr(recipes, "RECIPES", recipes.load(names))
    finally:
        sys.modules.pop("kopt.rewrite.recipes.drop_barrier", None)  # the toy module is gone after the test
        vars(recipes).pop("drop_barrier", None)
    with pytest.raises(KoptError, match="unknown recipe 'drop_barrier'"):
        pattern_from_dict(TOY_PATTERN)
    monkeypatch.setattr(patterns, "RECIPES", names)
    assert pattern_from_dict(TOY_PATTERN).recipe_name == "drop_barrier"
    proposal = recipes.propose("drop_barrier", TOY_TASK)
    assert "tl.debug_barrier()" not in proposal.variants[0].source and "tl.store(" in proposal.variants[0].source
