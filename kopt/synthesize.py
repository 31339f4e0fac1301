"""Retrospective synthesis: validated rounds across runs become patterns, so L1 gets better over time.

Every round is keyed by what made it work. A recipe round: the finding it acted on and the recipe. An
LLM round: the kind of change its candidate made to its parent (kopt/change_kinds.py reads it from the
diff), whatever finding it was filed under. A round that used a known pattern, or an LLM change that a
curated pattern prescribes for a symptom the parent showed, counts toward that pattern's stats (tries,
wins, speedups, families; failures lower its win rate). Two or more wins of one key that no pattern
covers become a new pattern, with the rounds as provenance; an LLM one carries the symptoms most winning
parents showed, the winning Change lines as guidance and the best diffs as examples. A new one that
duplicates a known pattern (same finding, same recipe) is merged into it. Curated files are never written: their stats go to an overlay copy in the output
directory. A ledger (synthesis.json) there remembers counted rounds, so running it twice counts once.

Wins that only a profile or the compiler's IR found (L2-L4) teach L1 a shortcut: two or more wins of one
pattern on the same kind of kernel (the ops it uses: dot, reduce, ...) that share L1 source signals become
a synthesized pattern with those signals as symptoms and the same recipe. Once it is proven (won at least
half its tries), L1 acts on it for a kernel like those without profiling it.
"""

from __future__ import annotations

import difflib
import json
import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kopt.change_kinds import ANSWERS, CHANGE_KINDS, classify_change
from kopt.config import Settings
from kopt.diagnose.l1 import fits
from kopt.diagnose.l1_detectors import l1_view
from kopt.errors import KoptError
from kopt.patterns import Pattern, check_pattern, load_patterns, pattern_from_dict
from kopt.signals import SIGNALS
from kopt.vocabulary import FAILED, FINDING_IDS, Outcome

MIN_WINS = 2
LEDGER = "synthesis.json"
OVERLAY_MARK = "# kopt synthesize: stats overlay"

RECIPE_FAMILY = {
    "launch_config_search": "launch_config", "autotune": "launch_config", "num_stages_search": "pipelining",
    "alignment_hints": "memory_access", "contiguous_reorder": "memory_access", "dot_precision": "tensor_cores",
    "grouped_order": "cache", "eviction_policy": "cache", "persistent_grid": "persistent",
    "hoist_invariant": "loop", "split_block": "registers", "int32_indexing": "indexing",
}
MAX_EXAMPLES, MAX_DIFF_LINES = 2, 80
# A symptom on more than this share of all diagnosed parents (once there are BASE_RATE_MIN of them) tells no
# kernel apart (on the LLM campaign, untuned_config sat on 86 of 87): it is left out of synthesized symptoms.
UBIQUITOUS_SHARE, BASE_RATE_MIN = 0.75, 10


@dataclass
class Attempt:
    """One round, keyed for grouping."""

    ref: str  # run_id:n
    finding: str
    change: str  # recipe:NAME or a CHANGE_KINDS key
    family: str  # the operator's family (evals/suite FAMILY)
    op: str
    win: bool
    speedup: float | None
    pattern_id: str | None
    hypothesis: str
    finding_ids: list[str]
    level: str | None = None  # the deepest diagnosis level of the round
    kinds: tuple[str, ...] = ()  # the kernel kinds of the source the round changed (L1's view)
    signals: tuple[str, ...] = ()  # the L1 source signals of that source
    diagnosed: tuple[str, ...] = ()  # findings on that source: its L1 signals' and any recorded diagnosis of it
    diff: str = ""  # an LLM candidate's change to that source, trimmed

    @property
    def llm(self) -> bool:
        return self.change in CHANGE_KINDS


@dataclass
class Action:
    kind: str  # create | update | skip
    pattern_id: str
    reason: str
    wins: int = 0
    tries: int = 0
    rounds: list[str] = field(default_factory=list)
    families: list[str] = field(default_factory=list)
    path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def _family_of(source: str) -> str:
    match = re.search(r"^FAMILY\s*=\s*[\"'](\w+)[\"']", source, re.M)
    return match.group(1) if match else "any"


def collect_attempts(store: Any, run_ids: list[str] | None = None, *, diagnose_parents: bool = False) -> list[Attempt]:
    """Keyed attempts (wins and failures) from the store's runs (all runs when run_ids is None).

    An LLM round is keyed by the kind of change its candidate made to its parent (the task, or the last win
    before it), whatever finding it was filed under: grounded rounds often disputed their top finding and
    ungrounded ones had none. What the parent showed is diagnosed instead: its L1 signals, the findings any
    recorded diagnosis (a grounded round of any run) gave that same source, and with `diagnose_parents` what
    kopt's diagnosis finds on it now (L1-L3 without a GPU: seconds per kernel)."""
    runs = [store.run(r) for r in run_ids] if run_ids else store.runs()
    recorded = _recorded_diagnoses(store, store.runs())
    fresh: dict[str, set[str]] = {}
    attempts = []
    for run in runs:
        task_source = store.get(run.task_hash)
        family = (run.options or {}).get("family") or _family_of(task_source)
        op = (run.options or {}).get("op") or Path(run.task_path).stem
        parent, parent_hash = task_source, run.task_hash
        view = l1_view(parent)
        for rnd in store.rounds(run.run_id):
            if rnd.outcome not in FAILED and rnd.outcome != Outcome.IMPROVED:
                continue
            finding = (rnd.hypothesis_key or "").split("/")[0] or (rnd.finding_ids or ["unknown"])[0]
            diff, hypothesis = "", rnd.hypothesis
            if rnd.proposer.startswith("recipe:"):
                change = rnd.proposer
            elif rnd.candidate:
                candidate, hypothesis = store.get(rnd.candidate), change_line(store, rnd)
                change = classify_change(parent, candidate, hypothesis)[0]
                diff = trimmed_diff(parent, candidate)
            else:
                continue
            win = rnd.outcome == Outcome.IMPROVED
            speedup = rnd.speedup_best if rnd.speedup_best else rnd.speedup_initial
            diagnosed = {SIGNALS[s].finding for s in view[1]} | recorded.get(parent_hash, set())
            if diagnose_parents and not rnd.proposer.startswith("recipe:"):
                if parent_hash not in fresh:
                    fresh[parent_hash] = diagnose_source(parent, op)
                diagnosed |= fresh[parent_hash]
            attempts.append(Attempt(f"{run.run_id}:{rnd.n}", finding, change, family, op, win,
                                    speedup if win else None, rnd.pattern_id, hypothesis, list(rnd.finding_ids),
                                    rnd.level_reached, *view, tuple(sorted(diagnosed)), diff))
            if win and rnd.candidate:
                parent, parent_hash = store.get(rnd.candidate), rnd.candidate
                view = l1_view(parent)
    return attempts


def change_line(store: Any, rnd: Any) -> str:
    """An LLM round's whole Change line, from its transcript's reply (the round's hypothesis keeps 300 characters)."""
    digest = (rnd.evidence or {}).get("transcript")
    if digest:
        try:
            replies = [m["content"] for m in json.loads(store.get(digest))["messages"] if m["role"] == "assistant"]
        except (KeyError, TypeError, ValueError):
            replies = []
        match = re.search(r"^\s*Change:\s*(.+)$", replies[-1], re.M) if replies else None
        if match:
            return match.group(1).strip()
    return rnd.hypothesis


def diagnose_source(source: str, op: str) -> set[str]:
    """The finding ids kopt's diagnosis (L1-L3, no GPU: the kernels are compiled for the configured target) gives
    a task source, written to a scratch file named after its operator."""
    import tempfile

    from kopt.diagnose.escalate import diagnose

    with tempfile.TemporaryDirectory(prefix="kopt-synth-") as tmp:
        path = Path(tmp) / f"{op}.py"
        path.write_text(source)
        try:
            found = diagnose(path, level="L3", gpu=False).findings
        except KoptError:  # a kernel that cannot be loaded keeps what L1 and the recorded rounds found
            return set()
    return {f.id for f in found if f.id in FINDING_IDS and f.id != "compile_failure"}


def _recorded_diagnoses(store: Any, runs: list[Any]) -> dict[str, set[str]]:
    """Source hash -> the findings recorded rounds' diagnoses gave that source (the parent each round started from)."""
    found: dict[str, set[str]] = defaultdict(set)
    for run in runs:
        parent = run.task_hash
        for rnd in store.rounds(run.run_id):
            found[parent].update(f for f in rnd.finding_ids if f in FINDING_IDS)
            if rnd.outcome == Outcome.IMPROVED and rnd.candidate:
                parent = rnd.candidate
    return found


def trimmed_diff(old: str, new: str) -> str:
    """The unified diff old -> new with one line of context, cut to MAX_DIFF_LINES: an example, not a patch."""
    lines = [line.rstrip() for line in  # trailing blanks would force YAML to quote the whole diff
             difflib.unified_diff(old.splitlines(), new.splitlines(), "parent", "candidate", n=1, lineterm="")]
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + [f"... ({len(lines) - MAX_DIFF_LINES} more diff lines)"]
    return "\n".join(lines)


def _covering(attempt: Attempt, catalog: dict[str, Pattern]) -> str | None:
    """The known pattern this attempt counts toward: the one it used, else a duplicate by finding + recipe, or for
    an LLM change a pattern that prescribes that kind of change for a symptom its parent showed."""
    if attempt.pattern_id in catalog:
        return attempt.pattern_id
    new_id = _new_id(attempt)
    if new_id in catalog:
        return new_id
    if attempt.llm:
        for pid in CHANGE_KINDS[attempt.change].curated:
            p = catalog.get(pid)
            if p and fits(p, set(attempt.kinds)) and (set(p.finding_ids) & set(attempt.diagnosed)
                                                      or set(p.source_signals) & set(attempt.signals)):
                return pid
        return None
    recipe = attempt.change.split(":", 1)[1]
    for p in catalog.values():
        if p.recipe_name == recipe and attempt.finding in p.finding_ids:
            return p.id
    return None


def _new_id(attempt: Attempt) -> str:
    if attempt.llm:
        return f"llm_{attempt.change}"
    change = attempt.change.split(":", 1)[-1]
    return re.sub(r"[^a-z0-9_]", "_", f"{attempt.finding}_via_{change}".lower())


def _shared(values: list[tuple[str, ...]]) -> list[str]:
    """What at least half of the wins' parents showed, most common first."""
    counts = Counter(v for vs in values for v in set(vs))
    return sorted((v for v, c in counts.items() if 2 * c >= len(values)), key=lambda v: (-counts[v], v))


def _first_sentences(text: str, limit: int = 300) -> str:
    """Whole leading sentences of a Change line up to `limit` characters (the first one cut at a word if longer)."""
    sentences = re.split(r"(?<=[.!?])(?<!e\.g\.)(?<!i\.e\.)\s+(?=[A-Z(])", " ".join(text.split()))
    if len(sentences) > 1 and not sentences[-1].endswith((".", "!", "?", ")")):
        sentences.pop()  # a Change line cut short (a round's hypothesis keeps 300 characters): drop its last piece
    kept = sentences[0]
    for sentence in sentences[1:]:
        if len(kept) + 1 + len(sentence) > limit:
            break
        kept += " " + sentence
    return kept if len(kept) <= limit else kept[:limit].rsplit(" ", 1)[0] + " ..."


def ubiquitous(attempts: list[Attempt]) -> set[str]:
    """Findings and signals that nearly every diagnosed parent shows: no evidence for any one change."""
    if len(attempts) < BASE_RATE_MIN:
        return set()
    counts = Counter(v for a in attempts for v in set(a.diagnosed) | set(a.signals))
    return {v for v, c in counts.items() if c > UBIQUITOUS_SHARE * len(attempts)}


def _llm_pattern(pid: str, wins: list[Attempt], tries: int, common: set[str]) -> Pattern | None:
    """A guidance pattern from LLM wins of one kind of change: symptoms are what most winning parents showed
    that this change answers (less what nearly all parents show), guidance the winning rounds' Change lines,
    examples their diffs. None when the parents share no such symptom."""
    if wins[0].change == "rewritten":
        return None
    kind, answers = CHANGE_KINDS[wins[0].change], set(ANSWERS[wins[0].change]) - common
    findings = [f for f in _shared([w.diagnosed for w in wins]) if f in answers]
    signals = [s for s in _shared([w.signals for w in wins]) if s in answers]
    if not findings and not signals:
        return None
    best = sorted(wins, key=lambda w: -(w.speedup or 0))
    ops, families = sorted({w.op for w in wins}), sorted({w.family for w in wins})
    speedups = [round(w.speedup, 3) for w in wins if w.speedup]
    said = " | ".join(f"{w.op} ({w.speedup or 0:.2f}x): {_first_sentences(w.hypothesis)}" for w in best[:4])
    conditions = [kind.precondition] + [SIGNALS[s].condition for s in signals if SIGNALS[s].condition]
    examples = [{"round": w.ref, "op": w.op, "speedup": round(w.speedup or 0, 3),
                 "change": _first_sentences(w.hypothesis, 600), "diff": w.diff} for w in best[:MAX_EXAMPLES] if w.diff]
    effect = (f"median {statistics.median(speedups):.2f}x (range {min(speedups):.2f}-{max(speedups):.2f}x) "
              f"over {len(speedups)} validated wins" if speedups else f"{len(wins)} validated wins")
    unmatched = ", ".join(kind.curated) or "none"
    return pattern_from_dict({
        "id": pid,
        "title": f"{kind.what[0].upper()}{kind.what[1:].split(' (')[0]} (synthesized from LLM wins)",
        "family": kind.family,
        "applies_to": families,
        "symptoms": {"findings": findings, "source": signals},
        "recipe": {"guidance": f"{kind.what[0].upper()}{kind.what[1:]}. What the winning rounds changed: {said}"},
        "preconditions": [c for c in conditions if c],
        "rationale": {"why": f"{len(wins)} validated LLM rounds on {len(ops)} operators ({', '.join(ops)}) made this "
                             f"change; most of their parent kernels showed {', '.join(findings + signals)}. The curated "
                             f"patterns that prescribe it ({unmatched}) list none of those symptoms. Rounds: "
                             + ", ".join(f"{w.ref} {w.speedup or 0:.2f}x" for w in wins) + "."},
        "expected_effect": effect,
        "provenance": {"kind": "synthesized", "rounds": [w.ref for w in wins]},
        "stats": {"tries": tries, "wins": len(wins), "speedups": speedups, "families": families},
        "examples": examples,
    })


def _new_pattern(pid: str, wins: list[Attempt], tries: int, common: set[str]) -> Pattern | None:
    first = wins[0]
    if first.llm:
        return _llm_pattern(pid, wins, tries, common)
    if first.finding not in FINDING_IDS:
        return None
    recipe_name = first.change.split(":", 1)[1]
    kind_text = f"the {recipe_name} recipe"
    families = sorted({w.family for w in wins})
    ops = sorted({w.op for w in wins})
    speedups = [round(w.speedup, 3) for w in wins if w.speedup]
    shared = [f for f in first.finding_ids if f in FINDING_IDS and all(f in w.finding_ids for w in wins)]
    hypotheses = list(dict.fromkeys(w.hypothesis for w in wins))[:4]
    recipe: dict[str, Any] = {"name": recipe_name}
    recipe["guidance"] = (f"When {first.finding} ({FINDING_IDS[first.finding]}) is found, {kind_text}. "
                          f"Validated on {', '.join(ops)}: " + " | ".join(hypotheses))
    effect = (f"median {statistics.median(speedups):.2f}x (range {min(speedups):.2f}-{max(speedups):.2f}x) "
              f"over {len(speedups)} validated wins" if speedups else f"{len(wins)} validated wins")
    return pattern_from_dict({
        "id": pid,
        "title": f"{FINDING_IDS[first.finding].capitalize()}: {kind_text} (synthesized)",
        "family": RECIPE_FAMILY.get(recipe_name, "memory_access"),
        "applies_to": families,
        "symptoms": {"findings": list(dict.fromkeys([first.finding, *shared]))},
        "recipe": recipe,
        "rationale": {"why": f"Synthesized from {len(wins)} validated rounds on {len(ops)} operators whose "
                             f"evidence pointed at {first.finding}; the rounds' hypotheses say why it worked."},
        "expected_effect": effect,
        "provenance": {"kind": "synthesized", "rounds": [w.ref for w in wins]},
        "stats": {"tries": tries, "wins": len(wins), "speedups": speedups, "families": families},
    })


def _shortcut_id(base_id: str, kinds: tuple[str, ...]) -> str:
    return f"{base_id}_at_l1_{'_'.join(kinds) or 'any'}"


def _shortcut(pid: str, base: Pattern, kinds: tuple[str, ...], shared: set[str], group: list[Attempt]) -> Pattern:
    """The L1 shortcut to `base` for kernels of these kinds showing these signals, from the deep rounds in `group`."""
    wins, record = [a for a in group if a.win], _tally(group)
    speedups = record["speedups"]
    ops, levels = sorted({a.op for a in wins}), sorted({a.level or "?" for a in wins})
    deep = sorted({a.finding for a in wins})
    what = f"{'/'.join(kinds)} kernels showing {', '.join(sorted(shared))}"
    recipe = {k: base.recipe[k] for k in ("name", "params") if k in base.recipe}
    recipe["guidance"] = (f"On {what}, apply {base.id} straight away: {' '.join(str(base.recipe.get('guidance', base.title)).split())}")
    effect = (f"median {statistics.median(speedups):.2f}x (range {min(speedups):.2f}-{max(speedups):.2f}x) over "
              f"{len(speedups)} validated wins" if speedups else f"{len(wins)} validated wins")
    return pattern_from_dict({
        "id": pid,
        "title": f"{base.title}, from L1 on {'/'.join(kinds)} kernels (synthesized shortcut)",
        "family": base.family,
        "applies_to": list(kinds) or ["any"],
        "symptoms": {"findings": sorted({SIGNALS[sig].finding for sig in shared}), "source": sorted(shared)},
        "recipe": recipe,
        "preconditions": list(base.preconditions),
        "rationale": {"why": f"On {what}, only {'/'.join(levels)} evidence ({', '.join(deep)}) led to {base.id}, which "
                             f"then won {len(wins)} of {len(group)} tries ({', '.join(ops)}). L1 proposes it for such "
                             f"a kernel without the profile; failures lower its win rate until L1 stops trusting it.",
                      "notes": list(base.rationale.get("notes", []))},
        "expected_effect": effect,
        "provenance": {"kind": "synthesized", "rounds": [a.ref for a in wins]},
        "stats": record,
    })


def _rule(group: list[Attempt], wins: list[Attempt], base: Pattern) -> set[str] | None:
    """The signals a shortcut asks for: the most general set the rounds still vouch for. First the signals every
    try showed; if the pattern is not proven on the tries that show them, the signals every win showed (which
    match fewer kernels). None when L1 could not tell the kernels apart or already reaches the pattern."""
    common = set.intersection(*(set(a.signals) for a in group))
    specific = set.intersection(*(set(a.signals) for a in wins))
    rules = [r for r in (common, specific) if r and not r & set(base.source_signals)]
    for rule in rules:
        matching = [a for a in group if rule <= set(a.signals)]
        won = sum(a.win for a in matching)
        if won >= MIN_WINS and 2 * won >= len(matching):
            return rule
    return rules[-1] if rules else None


def plan_shortcuts(attempts: list[Attempt], catalog: dict[str, Pattern], synthesized: dict[str, Pattern],
                   promoted: set[str]) -> tuple[list[Action], dict[str, Pattern], set[str]]:
    """L1 shortcuts from rounds whose pattern only L2-L4 found: (actions, patterns to write, rounds now promoted).
    A group is the deep tries of one recipe pattern on one kind of kernel; rounds of a group too small to
    promote stay unpromoted, so later wins can still join them."""
    groups: dict[tuple[str, tuple[str, ...]], list[Attempt]] = defaultdict(list)
    for a in attempts:
        base = catalog.get(a.pattern_id or "")
        if (a.ref not in promoted and base is not None and base.recipe_name and a.level not in (None, "L1")
                and a.signals and base.provenance["kind"] == "curated"):
            groups[(base.id, a.kinds)].append(a)
    actions, writes, done = [], {}, set()
    for (base_id, kinds), group in sorted(groups.items()):
        pid, base, wins = _shortcut_id(base_id, kinds), catalog[base_id], [a for a in group if a.win]
        known = synthesized.get(pid)
        if known is not None:
            shared = set(known.source_signals)
        elif len(wins) >= MIN_WINS:
            shared = _rule(group, wins, base)
            if shared is None:
                continue
        else:
            continue
        group = [a for a in group if shared <= set(a.signals)]
        if not group:
            continue
        if known is not None:
            pattern, won = _recorded(known, group), sum(a.win for a in group)
            kind, why = "update", f"{won} deep win(s), {len(group) - won} failure(s) of {base_id}"
        else:
            pattern = _shortcut(pid, base, kinds, shared, group)
            kind, why = "create", f"{len(wins)} wins of {base_id} that only L2-L4 found, on {'/'.join(kinds)} kernels"
        writes[pid] = pattern
        done.update(a.ref for a in group)
        actions.append(Action(kind, pid, why, sum(a.win for a in group), len(group), [a.ref for a in group],
                              sorted({a.family for a in group if a.win})))
    return actions, writes, done


def _read_ledger(out_dir: Path) -> dict[str, Any]:
    path = out_dir / LEDGER
    if not path.is_file():
        return {"counted": [], "stats": {}}
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise KoptError(f"{path}: unreadable synthesis ledger ({exc}); move it aside to recount every round") from exc


def _tally(group: list[Attempt]) -> dict[str, Any]:
    """The stats record of a group of attempts: tries, wins, the wins' speedups and families."""
    wins = [a for a in group if a.win]
    return {"tries": len(group), "wins": len(wins), "speedups": [round(a.speedup, 3) for a in wins if a.speedup],
            "families": sorted({a.family for a in wins})}


def _plus(stats: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    return {"tries": stats.get("tries", 0) + extra["tries"], "wins": stats.get("wins", 0) + extra["wins"],
            "speedups": list(stats.get("speedups", [])) + extra["speedups"],
            "families": sorted(set(stats.get("families", [])) | set(extra["families"]))}


def _with_stats(pattern: Pattern, extra: dict[str, Any]) -> Pattern:
    return pattern_from_dict({**pattern.to_dict(), "stats": _plus(pattern.stats, extra)})


def _recorded(pattern: Pattern, group: list[Attempt]) -> Pattern:
    """A synthesized pattern with a group's record added: its stats, and its wins' rounds in the provenance."""
    updated = _with_stats(pattern, _tally(group))
    updated.provenance["rounds"] = list(dict.fromkeys(updated.provenance["rounds"] + [a.ref for a in group if a.win]))
    return updated


def plan(attempts: list[Attempt], curated: dict[str, Pattern], synthesized: dict[str, Pattern],
         ledger: dict[str, Any]) -> tuple[list[Action], dict[str, Pattern], dict[str, Any]]:
    """What to change: actions, the patterns to write (id -> Pattern), and the new ledger."""
    counted = set(ledger.get("counted", []))
    fresh = [a for a in attempts if a.ref not in counted]
    catalog = {**curated, **synthesized}
    stats: dict[str, dict[str, Any]] = {k: dict(v) for k, v in ledger.get("stats", {}).items()}
    by_pattern: dict[str, list[Attempt]] = defaultdict(list)
    uncovered: dict[str, list[Attempt]] = defaultdict(list)
    for a in fresh:
        pid = _covering(a, catalog)
        (by_pattern[pid] if pid else uncovered[_new_id(a)]).append(a)

    actions, writes, common = [], {}, ubiquitous(attempts)
    for pid, group in sorted(uncovered.items()):
        wins = [a for a in group if a.win]
        pattern = _new_pattern(pid, wins, len(group), common) if len(wins) >= MIN_WINS else None
        if pattern is None:
            why = (f"{len(wins)} validated win(s); {MIN_WINS} needed" if len(wins) < MIN_WINS
                   else "no kind of change recognised in the diffs" if group[0].change == "rewritten"
                   else "the winning parents share no diagnosed symptom this change answers" if group[0].llm
                   else f"finding {group[0].finding!r} is not in the label set")
            actions.append(Action("skip", pid, why, len(wins), len(group), [a.ref for a in group]))
            continue  # not counted: these rounds can still form a pattern with later wins
        writes[pid] = pattern
        counted.update(a.ref for a in group)
        what = f"LLM change {group[0].change}" if group[0].llm else f"{group[0].finding} + {group[0].change}"
        actions.append(Action("create", pid, f"{len(wins)} uncovered wins with {what}",
                              len(wins), len(group), [a.ref for a in group], pattern.applies_to))
    for pid, group in sorted(by_pattern.items()):
        wins, extra = [a for a in group if a.win], _tally(group)
        if pid in synthesized:  # synthesized files carry their own stats and provenance
            pattern = _recorded(catalog[pid], group)
        else:  # curated: the overlay holds curated text + every stats contribution so far
            stats[pid] = _plus(stats.get(pid, {}), extra)
            pattern = _with_stats(catalog[pid], stats[pid])
        writes[pid] = pattern
        counted.update(a.ref for a in group)
        actions.append(Action("update", pid, f"{len(wins)} win(s), {len(group) - len(wins)} failure(s)",
                              len(wins), len(group), [a.ref for a in group], extra["families"]))
    promoted = set(ledger.get("promoted", []))
    # a shortcut used in its own right was just updated above: build on that version
    short_actions, short_writes, newly = plan_shortcuts(attempts, catalog, {**synthesized, **writes}, promoted)
    actions += short_actions
    writes.update(short_writes)
    return actions, writes, {"counted": sorted(counted), "promoted": sorted(promoted | newly), "stats": stats}


def synthesize(store: Any, out_dir: Path, *, run_ids: list[str] | None = None, curated_dirs: list[Path] | None = None,
               dry_run: bool = False, diagnose_parents: bool = False) -> list[Action]:
    """Read rounds, plan, and (unless dry_run) write patterns + ledger into out_dir. Returns the actions."""
    from kopt.patterns import default_pattern_dirs

    out_dir = Path(out_dir)
    dirs = [Path(d) for d in (curated_dirs if curated_dirs is not None else default_pattern_dirs())]
    sources = [d for d in dirs if d.resolve() != out_dir.resolve()]
    curated = {p.id: p for p in load_patterns(sources) if p.provenance["kind"] == "curated"}
    in_out = {p.id: p for p in load_patterns([out_dir])}
    curated.update({k: v for k, v in in_out.items() if v.provenance["kind"] == "curated" and k not in curated})
    synthesized = {k: v for k, v in in_out.items() if v.provenance["kind"] == "synthesized"}
    ledger = _read_ledger(out_dir)
    actions, writes, new_ledger = plan(collect_attempts(store, run_ids, diagnose_parents=diagnose_parents), curated, synthesized, ledger)
    for action in actions:
        if action.kind != "skip":
            action.path = str(out_dir / f"{action.pattern_id}.yaml")
            if action.pattern_id in curated and _is_curated_file(out_dir / f"{action.pattern_id}.yaml"):
                action.path = None  # the curated file itself lives here: stats stay in the ledger only
    if dry_run:
        return actions
    out_dir.mkdir(parents=True, exist_ok=True)
    for action in actions:
        if action.path:
            _write(writes[action.pattern_id], Path(action.path), overlay=action.pattern_id in curated)
    tmp = out_dir / f".{LEDGER}.tmp"
    tmp.write_text(json.dumps(new_ledger, indent=1))
    tmp.replace(out_dir / LEDGER)
    return actions


def _write(pattern: Pattern, path: Path, overlay: bool) -> None:
    """Checked, then written atomically; an overlay of a curated pattern says it is a copy."""
    data = pattern.to_dict()
    check_pattern(data, path)
    head = f"{OVERLAY_MARK} of the curated {pattern.id}; edit the curated file, not this one\n" if overlay else ""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(head + yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, width=100, allow_unicode=True))
    tmp.replace(path)


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line text (an example's diff) as a literal block, so the file reads like the diff itself."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_BlockDumper.add_representer(str, _text)


def _is_curated_file(path: Path) -> bool:
    """A file on disk whose text is curated (never rewritten); overlays we wrote say they are copies."""
    if not path.is_file():
        return False
    text = path.read_text()
    return "kind: curated" in text and not text.startswith(OVERLAY_MARK)


def upsert_index(settings: Settings, paths: list[Path]) -> str:
    """Put written synthesized patterns into the served `patterns` collection (replacing their old points),
    so the next L1 triage retrieves them. Returns what happened, in one line."""
    from kopt.index.backends import DENSE, open_backend
    from kopt.index.embed import embed_text, encode
    from kopt.index.tokenize import doc_vector
    from kopt.ingest.enrich import Registry
    from kopt.ingest.pipeline import chunk_file, payload, point_id, revised

    if not paths:
        return "index: nothing to upsert"
    backend = open_backend(settings)
    try:
        served = backend.read_catalog()["corpora"].get("patterns")
        if not served or served["collection"] not in backend.names():
            return "index: the patterns corpus is not ingested (kopt ingest patterns); files written only"
        model, points = served.get("model") or settings.embed_model, []
        with revised(backend, "patterns") as coll:  # a new version: readers may hold the served one
            for path in paths:
                rel = f"synthesized/{path.name}"
                chunks, _ = chunk_file(rel, path.read_bytes())
                backend.delete(coll, [pid for pid, _ in backend.scroll(coll, {"path": rel}, payload=False)])
                vectors = encode(model, [embed_text(c.header, c.body) for c in chunks])
                points += [(point_id("patterns", c), {DENSE: vec.tolist()}, doc_vector(c.text, served.get("avgdl") or 200.0),
                            payload(c, "patterns", served["version"], Registry())) for c, vec in zip(chunks, vectors)]
            backend.upsert(coll, points)
            backend.flush(coll)
    finally:
        backend.close()
    return f"index: upserted {len(points)} pattern point(s) into {coll}"
