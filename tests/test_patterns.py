"""The pattern catalog: every curated pattern loads and is well-formed; malformed ones are rejected by name."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kopt.errors import KoptError
from kopt.patterns import RECIPES, load_patterns, pattern_from_dict, save_pattern
from kopt.signals import SIGNALS
from kopt.vocabulary import FINDING_IDS

REPO = Path(__file__).resolve().parent.parent
CATALOG = REPO / "corpora" / "patterns"
PASSES = REPO / "corpora" / "passes"

GOOD = {
    "id": "demo_pattern",
    "title": "A demo",
    "family": "launch_config",
    "applies_to": ["elementwise"],
    "symptoms": {"findings": ["small_block"], "metrics": ["dram_pct < 50"], "source": ["small_block"]},
    "recipe": {"name": "launch_config_search", "params": {"BLOCK": [1024]}},
    "preconditions": ["BLOCK stays a power of two"],
    "rationale": {"why": "more bytes in flight", "notes": ["tritongpu-coalesce.md"], "symbols": ["CoalescePass"]},
    "expected_effect": "faster",
    "stats": {"tries": 0, "wins": 0, "speedups": []},
    "provenance": {"kind": "curated"},
}


@pytest.fixture(scope="module")
def catalog():
    return load_patterns([CATALOG])


def test_every_catalog_pattern_loads(catalog):
    files = sorted(CATALOG.glob("*.yaml"))
    assert len(files) >= 30
    assert [p.id for p in catalog] == sorted(f.stem for f in files)
    for p in catalog:
        assert p.provenance["kind"] == "curated" and p.stats["tries"] == 0 and p.stats["speedups"] == []
        assert p.recipe_name or p.recipe.get("guidance"), p.id
        assert set(p.finding_ids) <= set(FINDING_IDS)


def test_catalog_covers_the_topics_and_recipes(catalog):
    families = {p.family for p in catalog}
    assert {"launch_config", "memory_access", "tiling", "pipelining", "tensor_cores", "layout", "registers",
            "reduction", "atomics", "fusion", "persistent", "indexing", "cache", "loop"} <= families
    assert {p.recipe_name for p in catalog} - {None} == set(RECIPES)
    # every L1 signal leads to at least one pattern, so no signal is a dead end
    assert set(SIGNALS) <= {s for p in catalog for s in p.source_signals}
    by_id = {p.id: p for p in catalog}
    assert by_id["tf32_dot"].recipe["params"] == {"input_precision": "tf32"}
    assert by_id["grouped_program_order"].recipe_name == "grouped_order"


def test_rationale_notes_exist(catalog):
    notes = {n for p in catalog for n in p.rationale["notes"]}
    missing = sorted(n for n in notes if not (PASSES / n).is_file())
    assert not missing, f"pattern rationale names pass notes that do not exist: {missing}"


@pytest.mark.eval_data
def test_rationale_symbols_resolve_in_the_pinned_checkout(catalog, triton_src):
    text = "\n".join(
        f.read_text(errors="ignore") for sub in ("lib", "include", "python/triton", "python/src", "third_party/nvidia")
        for f in (triton_src / sub).rglob("*") if f.suffix in {".cpp", ".h", ".td", ".py", ".cc", ".c"} and f.is_file())
    unresolved = sorted({s for p in catalog for s in p.rationale["symbols"] if s not in text})
    assert not unresolved, f"compiler symbols not found in the pinned checkout: {unresolved}"


def test_text_renders_the_pattern_for_search(catalog):
    text = {p.id: p for p in catalog}["tf32_dot"].text()
    assert "tf32" in text and "fp32_dot_ieee" in text and FINDING_IDS["fp32_dot_ieee"] in text
    assert "Preconditions: tolerance allows tf32" in text
    assert "tritongpu-accelerate-matmul.md" in text


def _write(tmp_path: Path, data, name="demo_pattern.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


@pytest.mark.parametrize("change, field", [
    (lambda d: d.pop("id"), "'id'"),
    (lambda d: d["symptoms"].update(findings=["slow_kernel"]), "'symptoms.findings'"),
    (lambda d: d["symptoms"].update(source=["looks_slow"]), "'symptoms.source'"),
    (lambda d: d["symptoms"].update(metrics=["dram is high"]), "'symptoms.metrics'"),
    (lambda d: d["recipe"].update(name="make_it_fast"), "'recipe.name'"),
    (lambda d: d.update(applies_to="elementwise"), "'applies_to'"),
    (lambda d: d.update(family="misc"), "'family'"),
    (lambda d: d.update(id="Other-Id"), "'id'"),
    (lambda d: d.update(recipe={"params": {}}), "'recipe'"),
    (lambda d: d["stats"].update(tries=1, wins=2), "'stats.wins'"),
    (lambda d: d["rationale"].update(notes=["corpora/passes/x.md"]), "'rationale.notes'"),
    (lambda d: d.update(provenance={"kind": "synthesized"}), "'provenance.rounds'"),
    (lambda d: d.update(colour="blue"), "'colour'"),
])
def test_malformed_pattern_is_rejected_naming_file_and_field(tmp_path, change, field):
    data = yaml.safe_load(yaml.safe_dump(GOOD))
    change(data)
    path = _write(tmp_path, data)
    with pytest.raises(KoptError) as err:
        load_patterns([tmp_path])
    assert str(path) in str(err.value) and field in str(err.value)


def test_id_must_match_file_name_and_bad_yaml_names_the_line(tmp_path):
    _write(tmp_path, GOOD, name="another_name.yaml")
    with pytest.raises(KoptError, match=r"another_name\.yaml: field 'id'"):
        load_patterns([tmp_path])
    bad = tmp_path / "broken"
    bad.mkdir()
    _write(bad, "id: broken\ntitle: [unclosed\n", name="broken.yaml")
    with pytest.raises(KoptError, match=r"broken\.yaml:\d+: not valid YAML"):
        load_patterns([bad])


def test_save_then_load_round_trips_and_updates_stats(tmp_path):
    pattern = pattern_from_dict(GOOD)
    pattern.stats.update(tries=4, wins=3, speedups=[1.4, 1.2, 1.6], families=["elementwise"])
    pattern.provenance = {"kind": "synthesized", "rounds": ["run1:3", "run2:1"]}
    path = save_pattern(pattern, tmp_path / "synth")
    assert path.name == "demo_pattern.yaml" and not list(path.parent.glob("*.tmp"))
    [loaded] = load_patterns([tmp_path / "synth"])
    assert loaded.to_dict() == pattern.to_dict()
    assert loaded.win_rate == pytest.approx(4 / 6)


def test_save_refuses_a_malformed_pattern_without_writing(tmp_path):
    pattern = pattern_from_dict(GOOD)
    pattern.symptoms["findings"] = ["not_a_finding"]
    with pytest.raises(KoptError, match="symptoms.findings"):
        save_pattern(pattern, tmp_path)
    assert not list(tmp_path.iterdir())


def test_default_dirs_add_synthesized_patterns_from_kopt_home(tmp_path, monkeypatch):
    monkeypatch.setenv("KOPT_HOME", str(tmp_path))
    synthesized = pattern_from_dict({**GOOD, "provenance": {"kind": "synthesized", "rounds": ["r:1"]}})
    save_pattern(synthesized, tmp_path / "patterns")
    ids = {p.id: p for p in load_patterns()}
    assert "demo_pattern" in ids and ids["demo_pattern"].provenance["kind"] == "synthesized"
    assert "tf32_dot" in ids  # the curated catalog is still there
