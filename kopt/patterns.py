"""The pattern catalog: known rewrites with the symptoms that call for them.

One YAML file per pattern (file name = id) under corpora/patterns/ (curated) and KOPT_HOME/patterns
(synthesized from validated rounds). L1 matches its source signals against `symptoms.source`; L2/L3
match finding ids and profiler metrics; the optimizer runs `recipe.name` when it has one and hands
`recipe.guidance` to an LLM otherwise. The schema check names the file and field of any mistake,
because a silently skipped pattern is a pattern nobody ever tries.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kopt.config import kopt_home
from kopt.errors import KoptError
from kopt.signals import SIGNALS
from kopt.vocabulary import FINDING_IDS

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: ~10x faster on the catalog

# Deterministic recipes the optimizer implements, one file each (kopt/rewrite/recipes/<name>.py); anything else
# is guidance-only.
RECIPES: tuple[str, ...] = (
    "launch_config_search", "autotune", "alignment_hints", "dot_precision", "grouped_order",
    "eviction_policy", "persistent_grid", "hoist_invariant", "contiguous_reorder", "split_block",
    "int32_indexing", "num_stages_search",
)

FAMILIES: tuple[str, ...] = (
    "launch_config", "memory_access", "tiling", "pipelining", "tensor_cores", "layout",
    "registers", "reduction", "atomics", "fusion", "persistent", "indexing", "cache", "loop", "precision",
)

PROVENANCE_KINDS = ("curated", "synthesized")

# `name op number`, e.g. `sm__throughput.avg.pct_of_peak_sustained_elapsed < 40` or `dram_pct > 70`.
METRIC_PREDICATE = re.compile(r"^\s*([A-Za-z_][\w.:]*)\s*(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$")

_REQUIRED = ("id", "title", "family", "applies_to", "symptoms", "recipe", "rationale", "expected_effect", "provenance")
_KNOWN = set(_REQUIRED) | {"preconditions", "stats", "examples"}
EXAMPLE_KEYS = ("round", "op", "speedup", "change", "diff")  # a validated win's diff to its parent, trimmed


@dataclass
class Pattern:
    """A catalog entry. `stats` holds tries, wins, speedups and families; synthesis updates them."""

    id: str
    title: str
    family: str
    applies_to: list[str]
    symptoms: dict[str, list[str]]  # findings, metrics, source
    recipe: dict[str, Any]  # name (a RECIPES entry) + params, and/or guidance text
    rationale: dict[str, Any]  # why (text), notes (corpora/passes files), symbols (compiler symbols)
    expected_effect: str
    provenance: dict[str, Any]  # kind (curated|synthesized), rounds (run_id:n of the rounds it came from)
    preconditions: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    examples: list[dict[str, Any]] = field(default_factory=list)  # EXAMPLE_KEYS: the wins it was learnt from
    path: Path | None = None

    @property
    def finding_ids(self) -> list[str]:
        return self.symptoms.get("findings", [])

    @property
    def source_signals(self) -> list[str]:
        return self.symptoms.get("source", [])

    @property
    def metric_predicates(self) -> list[str]:
        return self.symptoms.get("metrics", [])

    @property
    def recipe_name(self) -> str | None:
        return self.recipe.get("name")

    @property
    def win_rate(self) -> float:
        """Wins over tries with a Laplace prior, so an untried curated pattern sits at 0.5."""
        tries = int(self.stats.get("tries", 0))
        wins = int(self.stats.get("wins", 0))
        return (wins + 1) / (tries + 2)

    @property
    def proven(self) -> bool:
        """Validated at least twice and won at least half its tries: L1 may act on it without profiling."""
        wins, tries = int(self.stats.get("wins", 0)), int(self.stats.get("tries", 0))
        return wins >= 2 and 2 * wins >= tries

    def text(self) -> str:
        """Plain text for embedding and search: what it fixes, when, how, and why."""
        lines = [
            f"Pattern {self.id}: {self.title}",
            f"Family: {self.family}. Applies to: {', '.join(self.applies_to)}.",
        ]
        if self.finding_ids:
            lines.append("Fixes: " + "; ".join(f"{f} ({FINDING_IDS[f]})" for f in self.finding_ids))
        if self.source_signals:
            lines.append("Source signals: " + "; ".join(f"{s} ({SIGNALS[s].means})" for s in self.source_signals))
        if self.metric_predicates:
            lines.append("Profiler symptoms: " + "; ".join(self.metric_predicates))
        if self.recipe_name:
            lines.append(f"Recipe: {self.recipe_name} {self.recipe.get('params') or ''}".rstrip())
        if self.recipe.get("guidance"):
            lines.append("How: " + " ".join(str(self.recipe["guidance"]).split()))
        if self.preconditions:
            lines.append("Preconditions: " + "; ".join(self.preconditions))
        if self.rationale.get("why"):
            lines.append("Why: " + " ".join(str(self.rationale["why"]).split()))
        refs = list(self.rationale.get("notes", [])) + list(self.rationale.get("symbols", []))
        if refs:
            lines.append("Compiler references: " + ", ".join(refs))
        lines.append(f"Expected effect: {' '.join(self.expected_effect.split())}")
        for ex in self.examples:
            lines.append(f"Example {ex['round']} ({ex.get('op', '?')}, {ex.get('speedup', '?')}x): "
                         + " ".join(str(ex.get("change", "")).split()))
        if self.examples:
            lines += ["Example diff:", *str(self.examples[0]["diff"]).splitlines()[:40]]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("path")
        if not data["examples"]:  # files without examples stay as they were
            data.pop("examples")
        return data


def _fail(path: Path | str, field_name: str, problem: str) -> KoptError:
    return KoptError(f"{path}: field {field_name!r}: {problem}")


def _str_list(data: dict, key: str, path: Path | str, *, label: str = "", required: bool = False) -> list[str]:
    """`data[key]` as a list of strings; `label` is the dotted parent for the error message."""
    name = f"{label}.{key}" if label else key
    value = data.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(path, name, "must be a list of non-empty strings")
    if required and not value:
        raise _fail(path, name, "must not be empty")
    return value


def check_pattern(data: Any, path: Path | str) -> None:
    """Raise KoptError naming the file and the field if `data` is not a valid pattern."""
    if not isinstance(data, dict):
        raise _fail(path, "<document>", f"must be a mapping, got {type(data).__name__}")
    for key in _REQUIRED:
        if key not in data or data[key] in (None, "", [], {}):
            raise _fail(path, key, "missing")
    unknown = set(data) - _KNOWN
    if unknown:
        raise _fail(path, sorted(unknown)[0], f"unknown field; known: {', '.join(sorted(_KNOWN))}")
    for key in ("id", "title", "family", "expected_effect"):
        if not isinstance(data[key], str):
            raise _fail(path, key, "must be a string")
    if not re.fullmatch(r"[a-z0-9][a-z0-9_]*", data["id"]):
        raise _fail(path, "id", f"{data['id']!r} must be snake_case")
    if isinstance(path, Path) and path.suffix in (".yaml", ".yml") and path.stem != data["id"]:
        raise _fail(path, "id", f"{data['id']!r} must equal the file name {path.stem!r}")
    if data["family"] not in FAMILIES:
        raise _fail(path, "family", f"unknown family {data['family']!r}; known: {', '.join(FAMILIES)}")
    _str_list(data, "applies_to", path, required=True)
    _str_list(data, "preconditions", path)

    symptoms = data["symptoms"]
    if not isinstance(symptoms, dict):
        raise _fail(path, "symptoms", "must be a mapping with findings, metrics, source")
    extra = set(symptoms) - {"findings", "metrics", "source"}
    if extra:
        raise _fail(path, f"symptoms.{sorted(extra)[0]}", "unknown key; known: findings, metrics, source")
    for key in ("findings", "metrics", "source"):
        _str_list(symptoms, key, path, label="symptoms")
    if not any(symptoms.get(k) for k in ("findings", "metrics", "source")):
        raise _fail(path, "symptoms", "needs at least one finding, metric or source predicate")
    for fid in symptoms.get("findings", []):
        if fid not in FINDING_IDS:
            raise _fail(path, "symptoms.findings", f"unknown finding id {fid!r}")
    for signal in symptoms.get("source", []):
        if signal not in SIGNALS:
            raise _fail(path, "symptoms.source", f"unknown source signal {signal!r}; known: {', '.join(SIGNALS)}")
    for predicate in symptoms.get("metrics", []):
        if not METRIC_PREDICATE.match(predicate):
            raise _fail(path, "symptoms.metrics", f"{predicate!r} is not 'metric <op> number'")

    recipe = data["recipe"]
    if not isinstance(recipe, dict):
        raise _fail(path, "recipe", "must be a mapping with name/params and/or guidance")
    extra = set(recipe) - {"name", "params", "guidance"}
    if extra:
        raise _fail(path, f"recipe.{sorted(extra)[0]}", "unknown key; known: name, params, guidance")
    if not recipe.get("name") and not recipe.get("guidance"):
        raise _fail(path, "recipe", "needs a name or guidance")
    if "name" in recipe and recipe["name"] not in RECIPES:
        raise _fail(path, "recipe.name", f"unknown recipe {recipe['name']!r}; known: {', '.join(RECIPES)}")
    if "params" in recipe and not isinstance(recipe["params"], dict):
        raise _fail(path, "recipe.params", "must be a mapping")
    if "guidance" in recipe and not isinstance(recipe["guidance"], str):
        raise _fail(path, "recipe.guidance", "must be text")

    rationale = data["rationale"]
    if not isinstance(rationale, dict) or not isinstance(rationale.get("why"), str):
        raise _fail(path, "rationale.why", "rationale must be a mapping with 'why' text")
    for key in ("notes", "symbols"):
        _str_list(rationale, key, path, label="rationale")
    for note in rationale.get("notes", []):
        if not note.endswith(".md") or "/" in note:
            raise _fail(path, "rationale.notes", f"{note!r} must be a note file name in corpora/passes/ (x.md)")

    provenance = data["provenance"]
    if not isinstance(provenance, dict) or provenance.get("kind") not in PROVENANCE_KINDS:
        raise _fail(path, "provenance.kind", f"must be one of {', '.join(PROVENANCE_KINDS)}")
    _str_list(provenance, "rounds", path, label="provenance")
    if provenance["kind"] == "synthesized" and not provenance.get("rounds"):
        raise _fail(path, "provenance.rounds", "a synthesized pattern names the rounds it came from")

    stats = data.get("stats") or {}
    if not isinstance(stats, dict):
        raise _fail(path, "stats", "must be a mapping")
    for key in ("tries", "wins"):
        if not isinstance(stats.get(key, 0), int) or stats.get(key, 0) < 0:
            raise _fail(path, f"stats.{key}", "must be a non-negative integer")
    if stats.get("wins", 0) > stats.get("tries", 0):
        raise _fail(path, "stats.wins", "more wins than tries")
    speedups = stats.get("speedups", [])
    if not isinstance(speedups, list) or not all(isinstance(s, (int, float)) and s > 0 for s in speedups):
        raise _fail(path, "stats.speedups", "must be a list of positive numbers")
    _str_list(stats, "families", path, label="stats")

    examples = data.get("examples") or []
    if not isinstance(examples, list):
        raise _fail(path, "examples", "must be a list of mappings with round and diff")
    for i, ex in enumerate(examples):
        if not isinstance(ex, dict) or not all(isinstance(ex.get(k), str) and ex[k].strip() for k in ("round", "diff")):
            raise _fail(path, f"examples[{i}]", "must be a mapping with round and diff text")
        if set(ex) - set(EXAMPLE_KEYS):
            raise _fail(path, f"examples[{i}].{sorted(set(ex) - set(EXAMPLE_KEYS))[0]}",
                        f"unknown key; known: {', '.join(EXAMPLE_KEYS)}")


def pattern_from_dict(data: dict[str, Any], path: Path | None = None) -> Pattern:
    """Check and build a Pattern; missing optional sections become empty."""
    check_pattern(data, path or "<pattern>")
    symptoms = {k: list(data["symptoms"].get(k) or []) for k in ("findings", "metrics", "source")}
    raw_stats = data.get("stats") or {}
    stats = {"tries": raw_stats.get("tries", 0), "wins": raw_stats.get("wins", 0),
             "speedups": list(raw_stats.get("speedups") or []), "families": list(raw_stats.get("families") or [])}
    raw = data["rationale"]
    rationale = {"why": raw["why"], "notes": list(raw.get("notes") or []), "symbols": list(raw.get("symbols") or [])}
    provenance = {"kind": data["provenance"]["kind"], "rounds": list(data["provenance"].get("rounds") or [])}
    return Pattern(
        id=data["id"], title=data["title"], family=data["family"], applies_to=list(data["applies_to"]),
        symptoms=symptoms, recipe=dict(data["recipe"]), rationale=rationale,
        expected_effect=data["expected_effect"], provenance=provenance,
        preconditions=list(data.get("preconditions") or []), stats=stats,
        examples=[dict(ex) for ex in data.get("examples") or []], path=path,
    )


def default_pattern_dirs() -> list[Path]:
    """The curated catalog shipped with kopt, then the synthesized one in KOPT_HOME/patterns."""
    from kopt.corpora import CORPORA_DIR

    return [CORPORA_DIR / "patterns", kopt_home() / "patterns"]


def load_pattern(path: Path) -> Pattern:
    try:
        data = yaml.load(path.read_text(), Loader=SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise KoptError(f"{path}{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from exc
    return pattern_from_dict(data, path)


def load_patterns(dirs: list[Path] | None = None) -> list[Pattern]:
    """All patterns in `dirs` (default: default_pattern_dirs()); a later dir overrides an id of an earlier one."""
    by_id: dict[str, Pattern] = {}
    for directory in dirs if dirs is not None else default_pattern_dirs():
        directory = Path(directory)
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.yaml")) + sorted(directory.glob("*.yml")):
            pattern = load_pattern(path)
            by_id[pattern.id] = pattern
    return sorted(by_id.values(), key=lambda p: p.id)


def save_pattern(pattern: Pattern, directory: Path) -> Path:
    """Write `pattern` as <directory>/<id>.yaml atomically (checked first, so a bad one never lands)."""
    data = pattern.to_dict()
    check_pattern(data, f"{directory}/{pattern.id}.yaml")
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{pattern.id}.yaml"
    tmp = target.with_suffix(".yaml.tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False, width=100, allow_unicode=True))
    tmp.replace(target)
    pattern.path = target
    return target
