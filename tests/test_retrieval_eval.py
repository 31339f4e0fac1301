"""Retrieval evals: the metrics on a hand-computed example, and the gold set against the real source: the repo's
own corpora and the installed triton package here, the rest of the Triton checkout in `make eval-data`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import triton
import yaml

from kopt.errors import KoptError
from kopt.retrieval_eval import Gold, Question, evaluate, first_rank, hit_answers, load_gold, split_of

REPO = Path(__file__).resolve().parents[1]
GOLD = REPO / "evals" / "retrieval" / "gold.yaml"
PINS, QUESTIONS = load_gold(GOLD)
# triton==3.6.0 (pyproject) ships the pin's python/triton/ as its package: those golds resolve without a checkout.
PACKAGE_PREFIX = "python/triton/"
TRITON_PACKAGE = Path(triton.__file__).parent


@dataclass
class Hit:
    meta: dict = field(default_factory=dict)

    def cite(self) -> str:
        return f"{self.meta['path']}:{self.meta.get('start_line')}"


def _hit(path, start=1, end=5, symbol="", corpus="triton"):
    return Hit({"corpus": corpus, "path": path, "start_line": start, "end_line": end, "symbol": symbol})


def _q(qid, *golds):
    return Question(qid, qid, "mechanism", False, tuple(Gold("triton", p, s, tuple(lines)) for p, s, lines in golds),
                    split_of(qid))


# --- metrics, computed by hand -------------------------------------------------------------------

def test_metrics_hand_computed():
    """Three questions: answered at rank 1 (file and symbol), rank 3 (file only; symbol at 4), never."""
    q1 = _q("q1", ("lib/A.cpp", "alpha", [10, 20]))
    q2 = _q("q2", ("lib/B.cpp", "beta", [100, 120]), ("lib/C.cpp", "gamma", [5, 9]))  # two acceptable golds
    q3 = _q("q3", ("lib/D.cpp", "delta", [1, 2]))
    results = {
        "q1": [_hit("lib/A.cpp", 12, 18), _hit("lib/X.cpp")],
        # rank 1, 2: other files; rank 3: the gold file but other lines; rank 4: the second gold by symbol name
        "q2": [_hit("lib/X.cpp"), _hit("lib/Y.cpp"), _hit("/abs/root/lib/B.cpp", 1, 50),
               _hit("lib/C.cpp", 300, 310, symbol="Outer::gamma")],
        "q3": [_hit("lib/X.cpp")] * 12,
    }
    report = evaluate([q1, q2, q3], lambda q, mode: results[q], ["hybrid"], k=10)
    got = report["modes"]["hybrid"]
    # file level: ranks 1, 3, none.  recall@1 = 1/3; recall@5 = recall@10 = 2/3; MRR = (1 + 1/3) / 3
    # nDCG@10 with one relevant item = 1/log2(rank+1): (1 + 1/log2(4)) / 3 = 0.5
    assert got["file"].pop("mrr_ci95") == [0.0, 1.0]
    assert got["file"] == pytest.approx(
        {"recall@1": 1 / 3, "recall@5": 2 / 3, "recall@10": 2 / 3, "mrr": 4 / 9, "ndcg@10": 0.5}, abs=1e-4)
    # symbol level: ranks 1, 4, none.  MRR = (1 + 1/4) / 3; nDCG = (1 + 1/log2(5)) / 3
    got["symbol"].pop("mrr_ci95")
    assert got["symbol"] == pytest.approx(
        {"recall@1": 1 / 3, "recall@5": 2 / 3, "recall@10": 2 / 3, "mrr": 5 / 12,
         "ndcg@10": (1 + 1 / 2.321928) / 3}, abs=1e-4)
    assert got["misses"] == {"file": ["q3"], "symbol": ["q3"]}
    ranks = {r["id"]: (r["file_rank"], r["symbol_rank"]) for r in got["per_question"]}
    assert ranks == {"q1": (1, 1), "q2": (3, 4), "q3": (None, None)}


def test_answer_only_within_k():
    q = _q("q", ("lib/A.cpp", "alpha", [10, 20]))
    hits = [_hit("lib/X.cpp")] * 5 + [_hit("lib/A.cpp", 10, 20)]
    report = evaluate([q], lambda *_: hits, ["dense"], k=5)
    assert report["modes"]["dense"]["file"]["mrr"] == 0.0
    assert report["modes"]["dense"]["misses"]["file"] == ["q"]


def test_symbol_level_needs_overlap_or_name():
    gold = Gold("triton", "lib/A.cpp", "Pass::runOnOperation", (50, 60))
    assert hit_answers(gold, _hit("lib/A.cpp", 60, 90).meta, "symbol")  # overlaps line 60
    assert not hit_answers(gold, _hit("lib/A.cpp", 61, 90).meta, "symbol")
    assert hit_answers(gold, _hit("lib/A.cpp", 61, 90).meta, "file")
    assert hit_answers(gold, _hit("lib/A.cpp", 200, 210, symbol="runOnOperation").meta, "symbol")
    assert not hit_answers(gold, _hit("lib/AB.cpp", 50, 60).meta, "file")  # folder boundary, not a suffix
    assert not hit_answers(gold, _hit("lib/A.cpp", 50, 60, corpus="passes").meta, "file")
    assert first_rank(_q("q", ("lib/A.cpp", "x", [1, 2])), [_hit("b").meta, _hit("lib/A.cpp").meta], "file") == 2


# --- the gold file: schema, and every gold resolves in the real source --------------------------

def test_gold_set_shape():
    assert len([q for q in QUESTIONS if all(g.corpus == "triton" for g in q.gold)]) >= 80
    assert sum(not q.uses_identifiers for q in QUESTIONS) >= len(QUESTIONS) / 2
    assert {q.category for q in QUESTIONS} == {"symptom", "mechanism", "option", "error"}


GOLD_FILES = {name: load_gold(GOLD.parent / f"{name}.yaml")[1] for name in ("gold", "tune", "holdout")}


def _golds(in_checkout: bool):
    """The golds only a Triton checkout holds (in_checkout), or the ones the repo and the installed package hold."""
    return [pytest.param(q, g, id=f"{name}:{q.id}:{g.path}") for name, qs in GOLD_FILES.items() for q in qs
            for g in q.gold if (g.corpus == "triton" and not g.path.startswith(PACKAGE_PREFIX)) == in_checkout]


def test_gold_files_keep_their_roles():
    """tune.yaml only tunes (dev), holdout.yaml is only held out (test), and no id or answer is in two files."""
    assert {q.split for q in GOLD_FILES["tune"]} == {"dev"}
    assert {q.split for q in GOLD_FILES["holdout"]} == {"test"}
    ids = [q.id for qs in GOLD_FILES.values() for q in qs]
    assert len(ids) == len(set(ids))
    answers = {name: {(g.path, g.symbol) for q in qs for g in q.gold} for name, qs in GOLD_FILES.items()}
    assert not answers["holdout"] & (answers["gold"] | answers["tune"])


def _assert_resolves(question, gold, path: Path):
    """Path exists at the pin, lines lie inside the file, and the symbol's name is written at or just before them."""
    assert path.is_file(), f"{question.id}: {gold.path} not found at {path}"
    lines = path.read_text().splitlines()
    start, end = gold.lines
    assert end <= len(lines), f"{question.id}: lines {gold.lines} beyond end of {gold.path} ({len(lines)} lines)"
    name = re.split(r"::|\.", gold.symbol)[-1]
    window = "\n".join(lines[max(start - 4, 0):end])
    assert re.search(rf"\b{re.escape(name)}\b", window), f"{question.id}: {name!r} not near {gold.path}:{start}-{end}"


@pytest.mark.parametrize("question,gold", _golds(in_checkout=False))
def test_gold_resolves_in_the_repo_or_the_installed_triton(question, gold):
    if gold.corpus == "triton":
        _assert_resolves(question, gold, TRITON_PACKAGE / gold.path.removeprefix(PACKAGE_PREFIX))
    else:
        _assert_resolves(question, gold, REPO / gold.path)


@pytest.mark.eval_data
@pytest.mark.parametrize("question,gold", _golds(in_checkout=True))
def test_gold_resolves_in_the_checkout(question, gold, triton_src):
    _assert_resolves(question, gold, triton_src / gold.path)


def test_package_golds_are_checked_against_the_pinned_release():
    assert triton.__version__ == "3.6.0"  # the package the python/triton golds were read against


@pytest.mark.eval_data
def test_pinned_checkout_matches_commit(triton_src):
    head = subprocess.run(["git", "-C", str(triton_src), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert head.stdout.strip() == PINS["triton"]["commit"]


# --- bad input is reported, not a traceback ---------------------------------------------------------

@pytest.mark.parametrize("mutate,needle", [
    (lambda d: d["questions"][0].pop("category"), "field 'category'"),
    (lambda d: d["questions"][0].update(category="vibes"), "expected one of"),
    (lambda d: d["questions"][0]["gold"][0].update(lines=[20, 10]), "field 'lines'"),
    (lambda d: d["questions"].append(dict(d["questions"][0])), "duplicate id"),
])
def test_load_gold_rejects_malformed(tmp_path, mutate, needle):
    doc = yaml.safe_load(GOLD.read_text())
    mutate(doc)
    bad = tmp_path / "gold.yaml"
    bad.write_text(yaml.safe_dump(doc))
    with pytest.raises(KoptError, match=re.escape(needle)) as info:
        load_gold(bad)
    assert str(bad) in str(info.value) and "\n" not in str(info.value)


def test_cli_reports_bad_gold_in_one_line(tmp_path):
    bad = tmp_path / "gold.yaml"
    bad.write_text("questions: [\n")
    run = subprocess.run([sys.executable, "-m", "kopt.cli", "eval", "retrieval", "--gold", str(bad)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 1
    assert run.stderr.startswith(f"kopt: error: {bad}") and "not valid YAML" in run.stderr
    assert "Traceback" not in run.stderr


# --- end to end: the CLI against a real index on disk -------------------------------------------

def _kopt(*args, env, cwd):
    return subprocess.run([sys.executable, "-m", "kopt.cli", *args], capture_output=True, text=True, env=env, cwd=cwd)


def test_cli_end_to_end_on_real_index(tmp_path, monkeypatch):
    """Ingest three patterns into a fresh index (in this process, where the embedding model is likely loaded
    already), then score a question whose answer is known with the CLI."""
    from kopt.config import Settings
    from kopt.ingest import ingest_corpus

    env = {**os.environ, "KOPT_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"}
    patterns = tmp_path / "patterns"  # a small catalog keeps embedding time down
    patterns.mkdir()
    for name in ("grouped_program_order", "persistent_grid", "tf32_dot"):
        source = REPO / "corpora" / "patterns" / f"{name}.yaml"
        (patterns / source.name).write_text(source.read_text())
    monkeypatch.setenv("KOPT_HOME", env["KOPT_HOME"])  # the vector cache's home
    ingest_corpus("patterns", Settings(index_path=tmp_path / "home" / "index"), path=patterns, progress=False)
    gold = tmp_path / "gold.yaml"
    gold.write_text(yaml.safe_dump({"questions": [
        {"id": "swizzle", "question": "grouped_program_order swizzled program order for L2 reuse", "category": "option",
         "uses_identifiers": True, "gold": [{"corpus": "patterns", "path": "corpora/patterns/grouped_program_order.yaml",
                                            "symbol": "grouped_program_order", "lines": [1, 2]}]},
        {"id": "src", "question": "a question over the source", "category": "mechanism", "uses_identifiers": False,
         "gold": [{"corpus": "triton", "path": "lib/A.cpp", "symbol": "a", "lines": [1, 2]}]},
    ]}))
    run = _kopt("eval", "retrieval", "--gold", str(gold), "--corpora", "patterns", "--modes", "sparse,hybrid",
                "--json", env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    report = yaml.safe_load(run.stdout)  # JSON is YAML
    assert report["questions"] == 1 and report["skipped"] == 1
    for mode in ("sparse", "hybrid"):
        assert report["modes"][mode]["per_question"][0]["file_rank"] == 1
        assert report["modes"][mode]["file"]["mrr"] == 1.0
    bad = _kopt("eval", "retrieval", "--gold", str(gold), "--corpora", "patterns", "--modes", "fuzzy",
                env=env, cwd=tmp_path)
    assert bad.returncode == 1 and "unknown search mode" in bad.stderr and "Traceback" not in bad.stderr


# --- the dev/test split -----------------------------------------------------------------------------

def test_split_is_a_fixed_partition_of_the_gold_set():
    """Every question is in exactly one half, the halves are both sizeable, and the rule does not drift."""
    from kopt.retrieval_eval import in_split

    dev, test = in_split(QUESTIONS, "dev"), in_split(QUESTIONS, "test")
    assert {q.id for q in dev}.isdisjoint(q.id for q in test) and len(dev) + len(test) == len(QUESTIONS)
    assert min(len(dev), len(test)) >= 0.4 * len(QUESTIONS)
    assert in_split(QUESTIONS, "all") == QUESTIONS
    assert (split_of("vec-width-128"), split_of("int-arg-div16")) == ("test", "dev")  # sha256(id) % 2, pinned
    with pytest.raises(KoptError, match="unknown split"):
        in_split(QUESTIONS, "train")


def test_a_tuning_file_puts_every_question_in_dev(tmp_path):
    """Questions written later to tune on never enter the test half, whatever their ids hash to."""
    from kopt.retrieval_eval import in_split

    doc = yaml.safe_load(GOLD.read_text())
    doc["split"] = "dev"
    tune = tmp_path / "tune.yaml"
    tune.write_text(yaml.safe_dump(doc))
    _, questions = load_gold(tune)
    assert any(split_of(q.id) == "test" for q in questions)
    assert in_split(questions, "dev") == questions and in_split(questions, "test") == []
    doc["split"] = "train"
    tune.write_text(yaml.safe_dump(doc))
    with pytest.raises(KoptError, match="field 'split'"):
        load_gold(tune)


def test_mrr_interval_says_how_far_chance_moves_a_small_sample():
    from kopt.retrieval_eval import mrr_interval

    assert mrr_interval([1.0] * 20) == [1.0, 1.0]
    fifty = [1.0] * 27 + [0.5] * 10 + [1 / 3] * 5 + [0.0] * 8  # about the held-out half's shape: MRR 0.673
    low, high = mrr_interval(fifty)
    assert low < sum(fifty) / 50 < high and 0.09 < high - low < 0.25
    assert mrr_interval(fifty) == [low, high]  # seeded: the same report twice
    assert mrr_interval([]) == []


def test_report_scores_each_split():
    a, b = next(q for q in QUESTIONS if split_of(q.id) == "dev"), next(q for q in QUESTIONS if split_of(q.id) == "test")
    gold_a = a.gold[0]
    answers = {a.question: [_hit(gold_a.path, *gold_a.lines, corpus=gold_a.corpus)], b.question: [_hit("lib/none.cpp")]}
    report = evaluate([a, b], lambda q, mode: answers[q], ["sparse"], k=10)
    by_split = report["modes"]["sparse"]["by_split"]
    assert by_split["dev"]["file"]["mrr"] == 1.0 and by_split["test"]["file"]["mrr"] == 0.0
    assert report["modes"]["sparse"]["file"]["mrr"] == 0.5
    assert report["modes"]["sparse"]["file"]["mrr_ci95"] == [0.0, 1.0]  # two questions tell almost nothing
