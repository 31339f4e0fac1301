"""Escalation policy on real kernels: real triage, real Triton compile to sm_90, no GPU."""

from pathlib import Path

import pytest

from kopt.diagnose.escalate import diagnose, grounded, merge
from kopt.vocabulary import Evidence, Finding

CASES = Path(__file__).resolve().parents[1] / "evals" / "diagnosis"


@pytest.fixture()
def settings(tmp_path, monkeypatch):
    monkeypatch.setenv("KOPT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from kopt.config import load_settings

    return load_settings(workspace=tmp_path)


def levels(diag):
    return {r.level: r for r in diag.levels}


def test_merge_corroboration_and_failed():
    l1 = Finding("small_block", "L1", "l1 says", 0.7, [Evidence("L1", "source", "BLOCK=64", {}, "k.py:3")], [3])
    l3 = Finding("small_block", "L3", "l3 says", 0.75, [Evidence("L3", "ptx", "ld.b32", {}, "k.py:5")], [5],
                 ["grow the block"])
    spill = Finding("register_spill", "L3", "spills", 0.9, [], [1], ["fewer live values"])
    merged = merge([l1, l3, spill], failed={"register_spill"})
    assert [f.id for f in merged] == ["small_block", "register_spill"]
    top = merged[0]
    assert top.level == "L3" and top.confidence == 0.8 and top.kernel_lines == [3, 5] and len(top.evidence) == 2
    assert merged[1].confidence == 0.45 and merged[1].message.startswith("(already tried")
    assert grounded(top, set()) and not grounded(top, {"small_block"})


def test_l1_stops_when_grounded(settings):
    diag = diagnose(CASES / "matmul_fp32_ieee.py", gpu=False, settings=settings)
    runs = levels(diag)
    assert diag.root_cause.id == "fp32_dot_ieee" and diag.root_cause.level == "L1"
    assert runs["L2"].status == "not_needed" and runs["L3"].status == "not_needed"
    assert "grounded, actionable" in runs["L3"].reason and diag.l3 is None


def test_goes_to_l3_then_l4_when_the_l3_hypothesis_failed(settings):
    diag = diagnose(CASES / "matmul_no_pipeline.py", gpu=False, settings=settings)
    runs = levels(diag)  # the launch's num_stages=1 grounds the hypothesis before compiling
    assert runs["L1"].status == "used" and runs["L3"].status == runs["L4"].status == "not_needed"
    assert diag.root_cause.id == "no_software_pipelining" and diag.root_cause.level == "L1"
    deep = diagnose(CASES / "matmul_no_pipeline.py", level="L3", gpu=False, settings=settings)
    assert deep.root_cause.id == "no_software_pipelining" and deep.root_cause.level == "L3"
    retry = diagnose(CASES / "matmul_no_pipeline.py", gpu=False, settings=settings, failed={"no_software_pipelining"})
    runs = levels(retry)
    assert runs["L4"].status == "used" and "kopt ingest" in runs["L4"].reason  # the empty index says what to ingest
    tried = next(f for f in retry.findings if f.id == "no_software_pipelining")
    assert tried.level == "L4" and tried.message.startswith("(already tried")
    assert retry.root_cause.id != "no_software_pipelining"
    assert any(e.source == "pass_note" and "tritongpu-pipeline.md" in e.location for e in tried.evidence)


def test_compile_failure_is_a_finding(settings, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text((CASES / "add_small_block.py").read_text().replace(
        "    y = tl.load(y_ptr + offs, mask=mask)\n", "    y = tl.load(y_ptr + offs, mask=mask)\n    z = tl.arange(0, 3)\n"))
    diag = diagnose(bad, level="L3", gpu=False, settings=settings)
    f = diag.root_cause
    assert f.id == "compile_failure" and f.kernel_lines == [14]
    assert "bad.py:14" in f.evidence[0].location and "power of 2" in f.message


def test_l2_without_gpu_is_unavailable_with_reason(settings):
    diag = diagnose(CASES / "add_small_block.py", level="L2", gpu=True, settings=settings)
    runs = levels(diag)
    assert runs["L2"].status == "unavailable" and ("CUDA" in runs["L2"].reason or "ncu" in runs["L2"].reason)
    assert runs["L3"].status == "not_needed" and runs["L3"].reason == "--level L2"
