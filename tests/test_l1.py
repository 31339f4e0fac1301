"""L1 triage: each source signal on small kernels of our own, and the findings it makes from the catalog.

Fixture kernels in tests/fixtures/l1 mark every line a signal must point at with `# expect: <signal>`;
the detectors must find exactly those (no misses, no extras).
"""

from __future__ import annotations

import copy
import importlib.util
import os
import re
from pathlib import Path

import pytest

from kopt.diagnose.l1 import triage
from kopt.diagnose.l1_detectors import detect_signals
from kopt.errors import KoptError
from kopt.index.hits import StoredChunk
from kopt.patterns import load_patterns
from kopt.signals import SIGNALS
from kopt.vocabulary import FINDING_IDS

FIXTURES = Path(__file__).parent / "fixtures" / "l1"
KERNEL_FIXTURES = sorted(p for p in FIXTURES.glob("*.py") if p.name != "syntax_error.py")


def expected_signals(path: Path) -> set[tuple[str, int]]:
    out = set()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = re.search(r"# expect: (.*)$", line)
        if match:
            out |= {(name, number) for name in match.group(1).split()}
    return out


@pytest.fixture(scope="module")
def catalog():
    return load_patterns()


def by_id(findings):
    return {f.id: f for f in findings}


@pytest.mark.parametrize("path", KERNEL_FIXTURES, ids=lambda p: p.stem)
def test_signals_match_the_marked_lines_exactly(path):
    signals, _ = detect_signals(path.read_text(), str(path))
    found = {(s.name, line) for s in signals for line in s.lines}
    assert found == expected_signals(path)


def test_fixtures_cover_every_signal_and_are_real_triton():
    marked = {name for p in KERNEL_FIXTURES for name, _ in expected_signals(p)}
    assert marked == set(SIGNALS)
    import triton

    for path in KERNEL_FIXTURES:  # importing decorates every kernel: the fixtures are valid Triton
        spec = importlib.util.spec_from_file_location(f"l1_fixture_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        kernels = [v for v in vars(module).values() if isinstance(v, triton.runtime.jit.KernelInterface)]
        assert kernels, path.name


def test_interpreter_runs_the_scalar_loop_fixture():
    """The scalar-loop fixture computes what it claims (TRITON_INTERPRET=1 in a child, CPU tensors)."""
    import subprocess
    import sys

    code = (
        "import importlib.util, torch\n"
        f"spec = importlib.util.spec_from_file_location('t', {str(FIXTURES / 'scalar_row_sum.py')!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "x = m.make_inputs({'rows': 4, 'cols': 8}, 'cpu', 0)[0]\n"
        "torch.testing.assert_close(m.entry(x), m.reference(x)); print('ok')\n"
    )
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]


def test_clean_kernel_has_no_findings(catalog):
    assert triage(FIXTURES / "clean_add.py", patterns=catalog) == []


def test_naive_matmul_findings_rank_and_point_at_lines(catalog):
    path = FIXTURES / "naive_matmul.py"
    findings = triage(path, patterns=catalog)
    ids = [f.id for f in findings]
    assert ids[0] == "fp32_dot_ieee"  # the strongest signal comes first
    assert {"fp32_dot_ieee", "small_block", "transpose_before_dot", "poor_l2_reuse", "untuned_config"} == set(ids)
    dot = by_id(findings)["fp32_dot_ieee"]
    assert dot.level == "L1" and dot.kernel_lines == [21]
    assert dot.patterns[:2] == ["tf32_dot", "tf32x3_dot"]
    assert any("tolerance allows tf32" in c for c in dot.conditions)
    assert dot.evidence[0].source == "source" and dot.evidence[0].location == f"{path}:21"
    assert dot.evidence[-1].source == "pattern" and dot.evidence[-1].data["pattern"] == "tf32_dot"
    small = by_id(findings)["small_block"]
    assert small.patterns[0] == "larger_dot_tiles"  # a dot kernel gets the matmul pattern, not the 1-D one
    assert "raise_small_block" not in small.patterns
    assert by_id(findings)["poor_l2_reuse"].patterns == ["grouped_program_order"]
    assert all(f.id in FINDING_IDS and 0 < f.confidence <= 1 for f in findings)
    assert [f.confidence for f in findings] == sorted((f.confidence for f in findings), reverse=True)


def test_small_block_elementwise(catalog):
    findings = by_id(triage(FIXTURES / "small_block_add.py", patterns=catalog))
    assert findings["small_block"].patterns[0] == "raise_small_block"
    assert findings["small_block"].kernel_lines == [11, 22]  # the arange and the launch that sets BLOCK=64
    assert findings["too_many_programs"].patterns[0] == "coarsen_tiny_programs"
    assert findings["small_block"].confidence > findings["untuned_config"].confidence


@pytest.mark.parametrize("fixture, finding, pattern", [
    ("scalar_row_sum", "scalar_loop", "vectorize_scalar_loop"),
    ("int64_mod_bias", "int64_indexing", "int32_offsets"),
    ("int64_mod_bias", "modulo_indexing", "remove_modulo_indexing"),
    ("atomic_weighted_sum", "redundant_loads", "hoist_invariant_loads"),
    ("atomic_weighted_sum", "atomic_contention", "per_program_partials"),
    ("strided_gather", "uncoalesced_access", "contiguous_inner_axis"),
    ("strided_gather", "untuned_config", "scale_num_warps_with_tile"),
    ("one_program_rows", "low_occupancy", "scale_grid_with_problem"),
])
def test_signal_leads_to_its_pattern(catalog, fixture, finding, pattern):
    findings = by_id(triage(FIXTURES / f"{fixture}.py", patterns=catalog))
    assert pattern in findings[finding].patterns[:2], findings[finding].patterns


def test_strided_condition_and_generic_idiom_weighting(catalog):
    strided = by_id(triage(FIXTURES / "strided_gather.py", patterns=catalog))["uncoalesced_access"]
    assert any("stride is not 1" in c for c in strided.conditions)
    generic = by_id(triage(FIXTURES / "tuned_matmul.py", patterns=catalog))["uncoalesced_access"]
    assert generic.confidence < strided.confidence  # all-axes-strided idiom is usually called with stride 1


def test_coalescer_friendly_and_hinted_accesses_are_not_flagged():
    source = '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, M, N, stride, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows[:, None] + cols[None, :] * stride)
    offs = tl.max_contiguous(tl.multiple_of(tl.arange(0, BLOCK) % N, BLOCK), BLOCK)
    b = tl.load(y_ptr + offs)
    i = tl.program_id(0).to(tl.int64) * M
    tl.store(y_ptr + i + offs, x.sum(0) + b)
'''
    names = {s.name for s in detect_signals(source)[0]}
    assert not names & {"strided_access", "modulo_offsets", "int64_offsets"}


def test_win_rate_reorders_equally_matching_patterns(catalog):
    catalog = copy.deepcopy(catalog)
    path = FIXTURES / "naive_matmul.py"
    assert by_id(triage(path, patterns=catalog))["fp32_dot_ieee"].patterns[0] == "tf32_dot"
    for p in catalog:
        if p.id == "tf32x3_dot":
            p.stats.update(tries=10, wins=9)
        if p.id == "tf32_dot":
            p.stats.update(tries=10, wins=1)
    assert by_id(triage(path, patterns=catalog))["fp32_dot_ieee"].patterns[0] == "tf32x3_dot"


def test_syntax_error_is_a_finding_and_missing_file_an_error(tmp_path):
    [finding] = triage(FIXTURES / "syntax_error.py")
    assert finding.id == "compile_failure" and finding.kernel_lines == [7]
    assert finding.evidence[0].location.endswith("syntax_error.py:7")
    with pytest.raises(KoptError, match="cannot read task file"):
        triage(tmp_path / "nope.py")


def test_task_object_with_path_is_accepted(catalog):
    class Task:
        path = FIXTURES / "scalar_row_sum.py"

    assert [f.id for f in triage(Task(), patterns=catalog)] == ["scalar_loop"]


class _Hit:
    def __init__(self, symbol, score):
        self.chunk, self.score, self.text = StoredChunk(symbol=symbol), score, ""


class _RecordingIndex:
    """Answers `search` like kopt.index (hits over the patterns corpus) and records the queries."""

    def __init__(self, symbols, error=None):
        self.symbols, self.error, self.queries = symbols, error, []

    def search(self, query, *, corpus=None, k=10):
        self.queries.append((query, corpus, k))
        if self.error:
            raise self.error
        return [_Hit(s, 1.0 - i / 10) for i, s in enumerate(self.symbols)]


def test_retrieved_patterns_join_findings_or_add_weak_ones(catalog):
    index = _RecordingIndex(["online_softmax", "fuse_epilogue", "unknown_id", "vector_accumulator_reduction"])
    findings = triage(FIXTURES / "scalar_row_sum.py", index=index, patterns=catalog)
    query, corpus, _ = index.queries[0]
    assert corpus == "patterns" and "Row sums" in query and "row_sum_kernel" in query
    assert [f.id for f in findings] == ["scalar_loop", "serial_reduction"]
    main, weak = findings
    assert main.patterns[0] == "vectorize_scalar_loop" and "online_softmax" not in main.patterns
    # a hit with no matching finding becomes a weak finding; a later hit for the same finding joins it
    assert weak.patterns == ["online_softmax", "vector_accumulator_reduction"]
    assert weak.confidence == 0.3 < main.confidence and weak.evidence[0].source == "pattern"
    # fuse_epilogue is for matmuls: filtered by kernel kind; unknown ids are ignored
    assert all("fuse_epilogue" not in f.patterns for f in findings)


def test_missing_pattern_corpus_leaves_l1_standing(catalog):
    index = _RecordingIndex([], error=KoptError("corpus 'patterns' is not ingested (run kopt ingest patterns)"))
    plain = triage(FIXTURES / "naive_matmul.py", patterns=catalog)
    with_index = triage(FIXTURES / "naive_matmul.py", index=index, patterns=catalog)
    assert [f.to_dict() for f in with_index] == [f.to_dict() for f in plain]


@pytest.mark.slow
def test_real_index_retrieval(tmp_path, monkeypatch, catalog):
    """Ingest the catalog into a real Qdrant Edge index on disk and retrieve for a kernel."""
    ingest = pytest.importorskip("kopt.ingest")
    index_mod = pytest.importorskip("kopt.index")
    monkeypatch.setenv("KOPT_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from kopt.config import load_settings

    settings = load_settings(workspace=tmp_path)
    ingest.ingest_corpus("patterns", settings, progress=False)
    index = index_mod.open_index(settings)
    findings = triage(FIXTURES / "naive_matmul.py", index=index, patterns=catalog)
    dot = by_id(findings)["fp32_dot_ieee"]
    assert dot.patterns[0] == "tf32_dot" and dot.confidence == max(f.confidence for f in findings)
    assert {s.finding for s in SIGNALS.values()} >= {f.id for f in findings if f.confidence > 0.3}
