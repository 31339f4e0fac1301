"""Escalation policy on real kernels: real triage, real Triton compile to sm_90, no GPU."""

import sys
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


def test_a_profiler_restating_a_static_figure_adds_evidence_not_confidence():
    """ncu's launch rule (est. speedup 50 %) on a ragged last wave that L3 computed from the grid: L3's judgement
    stands, so the tail does not overtake the narrow load that moves every byte."""
    from kopt.diagnose.l2 import profile_findings
    from kopt.diagnose.ncu import Rule

    rule = Rule("Launch Statistics", "LaunchConfiguration", "OPT", "A wave of thread blocks is defined as ...", "global",
                50.0)
    measured = profile_findings({"Waves Per SM": 1.42}, [rule], kernel="xent")
    tail_l2 = next(f for f in measured if f.id == "tail_effect")
    assert tail_l2.confidence > 0.45  # alone, the rule's estimate raises it
    tail_l3 = Finding("tail_effect", "L3", "1.4 waves", 0.45, [Evidence("L3", "launch", "3000 programs / 2112 slots")])
    narrow = Finding("small_block", "L3", "4 B per thread", 0.8, [Evidence("L3", "ptx", "ld.global.b32")], [13],
                     ["grow the block"])
    merged = merge([narrow, tail_l3, *measured], set())
    tail = next(f for f in merged if f.id == "tail_effect")
    assert merged[0].id == "small_block" and tail.confidence == 0.45
    assert any(e.data.get("rule") == "LaunchConfiguration" for e in tail.evidence)


def test_an_occupancy_figure_only_the_profiler_restates_is_a_hint_below_the_static_cause():
    """ncu's theoretical occupancy of 12.5 % on a broadcast-product matmul whose launches and resources L1 and L3 found
    no occupancy cause in: the matmul without tensor cores stays first."""
    from kopt.diagnose.l2 import profile_findings

    measured = profile_findings({"Theoretical Occupancy": 12.5, "Achieved Occupancy": 11.0,
                                 "Block Limit Registers": 1, "Block Limit Shared Mem": 8}, [], kernel="router")
    occupancy = next(f for f in measured if f.id == "low_occupancy")
    no_tc = Finding("no_tensor_cores", "L1", "tl.sum over a broadcast product", 0.53,
                    [Evidence("L1", "source", "x[:, :, None] * w[None, :, :]")], [25], ["use tl.dot"])
    merged = merge([no_tc, *measured], set())
    assert merged[0].id == "no_tensor_cores"
    low = next(f for f in merged if f.id == "low_occupancy")
    assert low.confidence == round(occupancy.confidence / 2, 2) and "a hint" in low.message


def test_a_stall_rule_joined_by_its_wording_does_not_make_a_theoretical_occupancy_a_measurement():
    """A GEMM's one 8-warp block per SM (12.5 %) is L3's to judge; ncu's barrier-stall advice, which mentions
    occupancy, joins the L2 finding as evidence but does not lift it over the unpipelined loop."""
    from kopt.diagnose.l2 import profile_findings
    from kopt.diagnose.ncu import Rule

    stall = Rule("WarpStateStats", "CPIStall", "OPT", "Warps stall at a CTA barrier; check occupancy and divergence.",
                 "local", 30.0)
    measured = profile_findings({"Theoretical Occupancy": 12.5, "Achieved Occupancy": 12.4}, [stall], kernel="gemm")
    occupancy = Finding("low_occupancy", "L3", "8 warps/SM", 0.35, [Evidence("L3", "sass", "1 block x 8 warps")])
    unpipelined = Finding("no_software_pipelining", "L3", "no async copies", 0.75, [Evidence("L3", "ttgir", "0 async")],
                          [29], ["pipeline the loop"])
    merged = merge([occupancy, unpipelined, *measured], set())
    assert merged[0].id == "no_software_pipelining"
    low = next(f for f in merged if f.id == "low_occupancy")
    assert low.confidence == 0.35 and any(e.data.get("rule") == "CPIStall" for e in low.evidence)


def test_a_stall_rule_that_lists_bank_conflicts_as_a_possible_cause_is_no_bank_conflict_finding():
    from kopt.diagnose.l2 import profile_findings
    from kopt.diagnose.ncu import Rule

    mio = Rule("WarpStateStats", "CPIStall", "OPT", "Warps wait on a scoreboard dependency on a MIO operation; the cause "
               "may be shared memory bank conflicts or special math instructions.", "local", 39.2)
    assert "bank_conflicts" not in {f.id for f in profile_findings({}, [mio], kernel="xent")}
    conflicts = Rule("Memory Workload Analysis", "SharedMemoryConflicts", "OPT", "Shared stores have 4-way bank conflicts.",
                     "local", 20.0)
    assert "bank_conflicts" in {f.id for f in profile_findings({}, [conflicts], kernel="xent")}


def test_a_tail_is_judged_by_the_same_threshold_with_or_without_a_profile():
    """3.4 waves run as 4 with 15 % of the slot-time idle: neither L3 nor ncu's launch rule makes that a finding;
    1.4 waves (30 % idle) is one at both."""
    from kopt.diagnose.l2 import profile_findings
    from kopt.diagnose.launch_facts import material_tail
    from kopt.diagnose.ncu import Rule

    rule = Rule("Launch Statistics", "LaunchConfiguration", "OPT", "A wave of thread blocks is defined as ...", "global",
                20.0)
    assert not material_tail(3.4) and material_tail(1.4)
    assert "tail_effect" not in {f.id for f in profile_findings({"Waves Per SM": 3.4}, [rule], kernel="k")}
    assert "tail_effect" in {f.id for f in profile_findings({"Waves Per SM": 1.4}, [rule], kernel="k")}


def test_occupancy_is_low_below_a_quarter_of_the_warp_slots():
    from kopt.diagnose.l2 import profile_findings

    gemm = profile_findings({"Theoretical Occupancy": 37.5, "Achieved Occupancy": 35.6}, kernel="gemm")
    smem = profile_findings({"Theoretical Occupancy": 18.75, "Achieved Occupancy": 18.4}, kernel="grouped")
    assert not [f for f in gemm if f.id == "low_occupancy"]
    assert [f.id for f in smem] == ["low_occupancy"]


def test_a_source_pattern_alone_goes_on_to_the_compiled_kernel(settings):
    diag = diagnose(CASES / "matmul_fp32_ieee.py", gpu=False, settings=settings)
    runs = levels(diag)  # L1 reads the fp32 ieee dot in the source; only the compiled dot shows it runs on FMA
    assert runs["L3"].status == "used" and runs["L4"].status == "not_needed"
    assert "grounded, actionable" in runs["L4"].reason
    top = diag.root_cause
    assert top.id == "fp32_dot_ieee" and top.level == "L3" and top.observed
    assert any(e.source == "ptx" and "0 wgmma" in e.summary for e in top.evidence)


def test_findings_read_from_the_source_cite_what_the_compiler_made_of_their_lines(settings):
    diag = diagnose(CASES / "cumsum_scalar_loop.py", gpu=False, settings=settings)
    top = diag.root_cause  # a scalar loop is a source finding; its line's compiled loop holds no tensor load
    assert top.id == "scalar_loop" and top.level == "L1" and top.observed
    compiled = [e for e in top.evidence if e.level == "L3"]
    assert compiled and compiled[0].summary.startswith("compiled: loop with 0 plain tensor load")
    assert compiled[0].location == f"cumsum_scalar_loop.py:{top.kernel_lines[0]}"


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


def _stand_in_ncu(folder: Path, pages: dict[str, str] | None) -> Path:
    """A real executable in ncu's place: with `pages` it writes a report and exports them; without, it records its
    pid and hangs (a profile that L1 must cancel)."""
    folder.mkdir()
    for page, text in (pages or {}).items():
        (folder / f"{page}.csv").write_text(text)
    exe = folder / "ncu"
    exe.write_text(f"""#!{sys.executable}
import os, pathlib, sys, time
args, here = sys.argv[1:], pathlib.Path({str(folder)!r})
if args == ["--version"]:
    print("Version 2025.3.1.0")
elif "--import" in args:
    print((here / (args[args.index("--page") + 1] + ".csv")).read_text())
elif {pages is None!r}:
    (here / "pid").write_text(str(os.getpid()))
    time.sleep(120)
else:
    pathlib.Path(args[args.index("-o") + 1] + ".ncu-rep").write_text("report")
""")
    exe.chmod(0o755)
    return exe


@pytest.fixture()
def gpu_here(monkeypatch):
    """A CPU machine made to look like a GPU host: the profiler is the stand-in the test installs."""
    from kopt.diagnose import escalate, ncu

    monkeypatch.setattr(escalate, "gpu_unavailable", lambda: None)
    ncu._PROFILES.clear()
    return lambda exe: monkeypatch.setattr(ncu, "find_ncu", lambda: str(exe))


def test_the_profile_starts_beside_l1_and_is_cancelled_when_l1_is_enough(settings, tmp_path, gpu_here, monkeypatch):
    from kopt.diagnose import ncu

    started, real = [], ncu.Profiling
    monkeypatch.setattr(ncu, "Profiling", type("Spy", (real,), {
        "__init__": lambda self, *a, **kw: (started.append(self), real.__init__(self, *a, **kw))[1]}))
    gpu_here(_stand_in_ncu(tmp_path / "hung", None))
    diag = diagnose(CASES / "matmul_no_pipeline.py", gpu=True, settings=settings)
    runs = levels(diag)  # the launch's num_stages=1 grounds L1's finding
    assert diag.root_cause.id == "no_software_pipelining" and runs["L2"].status == "not_needed"
    assert len(started) == 1 and started[0].result().reason == "cancelled"  # started before L1, cancelled after it
    pid = tmp_path / "hung" / "pid"  # where the stand-in got as far as running, nothing of it is left
    assert not pid.exists() or not Path(f"/proc/{pid.read_text()}").exists()


def test_a_profile_taken_beside_l1_becomes_l2_findings(settings, tmp_path, gpu_here):
    from test_ncu_parse import DETAILS, RAW

    gpu_here(_stand_in_ncu(tmp_path / "ncu", {"raw": RAW, "details": DETAILS}))
    diag = diagnose(CASES / "add_small_block.py", level="L2", gpu=True, settings=settings)
    l2 = levels(diag)["L2"]
    assert l2.status == "used" and "profiled while L1 ran" in l2.reason and l2.findings >= 1
    assert any(f.level == "L2" for f in diag.findings)


def test_a_source_finding_cites_the_profile_of_its_kernel(settings, tmp_path, gpu_here):
    """A hard-coded config is read from the source; what bears on it is how far from its ceilings the kernel runs,
    so the finding carries the profiler's figures for that kernel (the captured profile, renamed to the task's)."""
    from test_ncu_parse import DETAILS, RAW

    pages = {page: text.replace("strided_copy_kernel", "add_kernel") for page, text in (("raw", RAW), ("details", DETAILS))}
    gpu_here(_stand_in_ncu(tmp_path / "ncu", pages))
    diag = diagnose(CASES / "add_small_block.py", level="L2", gpu=True, settings=settings)
    untuned = next(f for f in diag.findings if f.id == "untuned_config")
    measured = [e for e in untuned.evidence if e.level == "L2"]
    assert untuned.level == "L1" and [e.summary for e in measured][:1] == ["Speed of Light: memory 91.52%, SM 6.1% of peak"]
