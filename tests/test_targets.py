"""Compiler families as Target classes: each family's differences in one place, read by the escalation."""

from pathlib import Path

import pytest

from kopt.diagnose.escalate import diagnose, for_target
from kopt.diagnose.targets import TARGETS, Ascend, Nvidia, target_for
from kopt.patterns import load_patterns

CASES = Path(__file__).resolve().parents[1] / "evals" / "diagnosis"


@pytest.fixture()
def settings(tmp_path, monkeypatch):
    monkeypatch.setenv("KOPT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from kopt.config import load_settings

    return load_settings(workspace=tmp_path)


def test_a_target_string_picks_its_family_class():
    assert isinstance(target_for(None), Nvidia) and isinstance(target_for("sm_80"), Nvidia)
    assert isinstance(target_for("ascend:Ascend910B3"), Ascend)
    assert (target_for("sm_90").compiler, target_for("ascend").compiler) == ("triton", "triton-ascend")


def test_the_catalog_splits_between_the_families_without_overlap():
    catalog = load_patterns()
    nvidia, ascend = for_target(catalog, "nvidia"), for_target(catalog, "ascend")
    assert nvidia and ascend and len(nvidia) + len(ascend) == len(catalog)
    assert all("ascend" in p.applies_to for p in ascend) and not {p.id for p in nvidia} & {p.id for p in ascend}


def test_a_toy_target_is_one_class_and_the_escalation_follows_it(settings, monkeypatch):
    """What ARCHITECTURE.md says to do to add a target, done here: its catalog, launch capture and L2/L3
    availability come from the class alone."""

    class Toy(Nvidia):
        family = "toy"
        captures_launches = False

        def covers(self, pattern):
            return False  # no catalog pattern speaks about this target

        def profiler_problem(self, untestable):
            return "the toy target has no profiler"

        def toolchain_problem(self):
            return "the toy toolchain is not installed"

    monkeypatch.setitem(TARGETS, "nvidia", Toy())
    diag = diagnose(CASES / "add_small_block.py", level="L3", gpu=True, settings=settings)
    runs = {r.level: r for r in diag.levels}
    assert "launches" not in runs["L1"].reason  # no per-case launch capture on this target
    assert all(not f.patterns for f in diag.findings if f.level == "L1")  # an empty catalog for it
    assert (runs["L2"].status, runs["L2"].reason) == ("unavailable", "the toy target has no profiler")
    assert (runs["L3"].status, runs["L3"].reason) == ("unavailable", "the toy toolchain is not installed")
