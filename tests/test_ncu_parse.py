"""Nsight Compute: parsing both CSV pages, and running ncu (or failing to) without crashing.

CI has no GPU: the page format is checked on text in ncu's documented CSV shape, and on real
captures from the H200 (tests/fixtures/ncu/*_raw.csv, *_details.csv) when they are present.
"""

import stat
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kopt.diagnose import l2, ncu

FIXTURES = Path(__file__).parent / "fixtures" / "ncu"

RAW = textwrap.dedent('''\
    ==PROF== Connected to process 4711 (/usr/bin/python3)
    ==PROF== Disconnected from process 4711
    "ID","Process ID","Process Name","Host Name","thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum","launch__registers_per_thread","launch__waves_per_multiprocessor","sm__throughput.avg.pct_of_peak_sustained_elapsed","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_wait_per_issue_active.ratio","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","derived__memory_l2_theoretical_sectors_global_excessive"
    "","","","","","","","","","","","","%","usecond","register/thread","","%","inst","inst","sector","","sector"
    "0","4711","python3","h200","<0,kopt>","strided_copy_kernel","1","7","(128, 1, 1)","(16384, 1, 1)","0","9.0","91.52","1,120.35","24","15.52","6.10","38.75","1.10","16,777,216","524,288","14,680,064"
    "1","4711","python3","h200","<0,kopt>","copy_kernel","1","7","(128, 1, 1)","(4, 1, 1)","0","9.0","0.52","3.10","26","0.03","1.10","12.00","3.00","512","128","n/a"
    ''')

DETAILS = textwrap.dedent('''\
    "ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type","Rule Description","Estimated Speedup Type","Estimated Speedup"
    "0","4711","python3","h200","strided_copy_kernel","1","7","(128, 1, 1)","(16384, 1, 1)","0","9.0","GPU Speed Of Light Throughput","Memory Throughput","%","91.52","","","","",""
    "0","4711","python3","h200","strided_copy_kernel","1","7","(128, 1, 1)","(16384, 1, 1)","0","9.0","GPU Speed Of Light Throughput","Duration","usecond","1,120.35","","","","",""
    "0","4711","python3","h200","strided_copy_kernel","1","7","(128, 1, 1)","(16384, 1, 1)","0","9.0","Occupancy","Theoretical Occupancy","%","100","","","","",""
    "0","4711","python3","h200","strided_copy_kernel","1","7","(128, 1, 1)","(16384, 1, 1)","0","9.0","Memory Workload Analysis","","","","UncoalescedGlobalAccess","OPT","This kernel has uncoalesced global accesses resulting in a total of 14680064 excessive sectors (88% of the total 16777216 sectors). Check the L2 Theoretical Sectors Global Excessive table for the primary source locations.","global","81.25"
    "0","4711","python3","h200","strided_copy_kernel","1","7","(128, 1, 1)","(16384, 1, 1)","0","9.0","GPU Speed Of Light Throughput","","","","SOLBottleneck","INF","Memory is more heavily utilized than Compute.","",""
    "1","4711","python3","h200","copy_kernel","1","7","(128, 1, 1)","(4, 1, 1)","0","9.0","Launch Statistics","Waves Per SM","","0.03","","","","",""
    "1","4711","python3","h200","copy_kernel","1","7","(128, 1, 1)","(4, 1, 1)","0","9.0","Launch Statistics","","","","LaunchConfiguration","OPT","The grid for this launch is configured to execute only 4 blocks, which is less than the GPU's 132 multiprocessors.","global","96.97"
    ''')


def test_raw_page_units_numbers_and_nvtx_column():
    kernels = ncu.parse_raw(RAW)
    assert [k.name for k in kernels] == ["strided_copy_kernel", "copy_kernel"]
    k = kernels[0]
    assert k.value("gpu__time_duration.sum") == 1120.35 and k.unit("gpu__time_duration.sum") == "usecond"
    assert k.grid == "(16384, 1, 1)"
    assert "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg" in k.metrics  # kept as text
    assert kernels[1].metrics["derived__memory_l2_theoretical_sectors_global_excessive"]["value"] == "n/a"


def test_details_page_rules_with_speedups_and_merge():
    result = ncu.parse_pages(RAW, DETAILS)
    assert result.available and len(result.kernels) == 2
    strided = result.kernels[0]
    rule = next(r for r in strided.rules if r.type == "OPT")
    assert (rule.name, rule.speedup, rule.speedup_type) == ("UncoalescedGlobalAccess", 81.25, "global")
    assert strided.value("Theoretical Occupancy") == 100  # details display name beside raw names
    assert strided.value("Memory Throughput") == 91.52


def test_l2_findings_from_parsed_pages():
    result = ncu.parse_pages(RAW, DETAILS)
    strided, tiny = result.kernels
    f = l2.profile_findings(strided.metrics, strided.rules, kernel=strided.name)
    ids = [x.id for x in f]
    assert ids[0] == "uncoalesced_access" and "memory_bound" in ids
    unco = f[0]
    assert any(e.source == "ncu" and e.data.get("speedup") == 81.25 for e in unco.evidence)
    bound = next(x for x in f if x.id == "memory_bound")
    assert "long_scoreboard" in bound.message
    t = l2.profile_findings(tiny.metrics, tiny.rules)
    low = next(x for x in t if x.id == "low_occupancy")
    assert "fills only 3% of one wave" in low.message
    assert any(e.data.get("rule") == "LaunchConfiguration" for e in low.evidence)


def test_roofline_from_timing_alone():
    ceilings = {"gbps": 4800.0, "tflops": 989.0}
    mem = l2.profile_findings(None, None, {"seconds": 1e-3, "bytes": 4.2e9}, ceilings)
    assert mem[0].id == "memory_bound" and "88%" in mem[0].message and mem[0].evidence[0].source == "timing"
    lat = l2.profile_findings(None, None, {"seconds": 1e-3, "bytes": 2e8, "flops": 1e9}, ceilings)
    assert lat[0].id == "latency_bound"
    comp = l2.profile_findings(None, None, {"tflops": 800.0, "gbps": 500.0}, ceilings)
    assert comp[0].id == "compute_bound"
    assert l2.profile_findings(None, None, None, None) == []


def _fake_ncu(tmp_path: Path, body: str) -> str:
    """A real executable standing in for ncu (a Python script), to drive run_ncu's subprocess paths."""
    path = tmp_path / "ncu"
    path.write_text(f"#!{sys.executable}\nimport sys, time, pathlib\nargs = sys.argv[1:]\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_run_ncu_end_to_end_with_a_stand_in(tmp_path):
    (tmp_path / "raw.csv").write_text(RAW)
    (tmp_path / "details.csv").write_text(DETAILS)
    exe = _fake_ncu(tmp_path, f'''
        if args == ["--version"]:
            print("NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion 2025.3.1.0 (build 1)")
        elif "--import" in args:
            page = args[args.index("--page") + 1]
            print(pathlib.Path({str(tmp_path)!r}, page + ".csv").read_text())
        else:
            assert ["--nvtx-include", "kopt/"] == args[args.index("--nvtx-include"):args.index("--nvtx-include") + 2]
            assert "--clock-control" in args and args.count("--section") == 7
            pathlib.Path(args[args.index("-o") + 1] + ".ncu-rep").write_text("report")
        ''')
    result = ncu.run_ncu(["python3", "-c", "pass"], ncu=exe, timeout=60)
    assert result.available and result.version.startswith("Version 2025")
    assert [k.name for k in result.kernels] == ["strided_copy_kernel", "copy_kernel"]


def test_ncu_failures_are_reasons_not_crashes(tmp_path, monkeypatch):
    failing = _fake_ncu(tmp_path, '''
        if args == ["--version"]:
            print("Version 2025.3")
        else:
            print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters")
            sys.exit(1)
        ''')
    res = ncu.run_ncu(["true"], ncu=failing, timeout=60)
    assert not res.available and "ERR_NVGPUCTRPERM" in res.reason and "exit 1" in res.reason
    (tmp_path / "slow").mkdir()
    slow = _fake_ncu(tmp_path / "slow", '''
        if args != ["--version"]:
            time.sleep(30)
        ''')
    res = ncu.run_ncu(["true"], ncu=slow, timeout=1)
    assert not res.available and "timed out after 1 s" in res.reason
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    if ncu.find_ncu() is None:  # a machine with CUDA installed finds it in /usr/local/cuda anyway
        res = ncu.profile_task(Path(__file__).parents[1] / "examples" / "vector_add.py")
        assert not res.available and res.reason.startswith("ncu not found")


def test_a_background_profile_runs_beside_its_caller_and_cancel_kills_it(tmp_path):
    """The diagnosis starts ncu before L1 (ncu.Profiling) and cancels it when L1 is enough: cancel must come back at
    once and leave no ncu (nor its profiled child) behind; an uncancelled profile gives the parsed pages."""
    (tmp_path / "raw.csv").write_text(RAW)
    (tmp_path / "details.csv").write_text(DETAILS)
    task = Path(__file__).parents[1] / "examples" / "vector_add.py"
    exe = _fake_ncu(tmp_path, f'''
        if args == ["--version"]:
            print("Version 2025.3.1.0")
        elif "--import" in args:
            print(pathlib.Path({str(tmp_path)!r}, args[args.index("--page") + 1] + ".csv").read_text())
        else:
            pathlib.Path(args[args.index("-o") + 1] + ".ncu-rep").write_text("report")
        ''')
    ncu._PROFILES.clear()
    done = ncu.Profiling(task, ncu=exe)
    assert [k.name for k in done.result().kernels] == ["strided_copy_kernel", "copy_kernel"]

    (tmp_path / "slow").mkdir()
    pid_file = tmp_path / "slow" / "pid"
    slow = _fake_ncu(tmp_path / "slow", f'''
        import os
        if args != ["--version"]:
            pathlib.Path({str(pid_file)!r}).write_text(str(os.getpid()))
            time.sleep(60)
        ''')
    ncu._PROFILES.clear()
    started = time.monotonic()
    profiling = ncu.Profiling(task, ncu=slow)
    while not pid_file.exists() and time.monotonic() - started < 20:
        time.sleep(0.05)
    assert pid_file.exists(), "the stand-in ncu never started"
    profiling.cancel()
    assert time.monotonic() - started < 20
    result = profiling.result()
    assert not result.available and result.reason == "cancelled"
    assert not Path(f"/proc/{pid_file.read_text()}").exists()


CAPTURES = sorted(FIXTURES.glob("*_raw.csv")) if FIXTURES.is_dir() else []


@pytest.mark.skipif(not CAPTURES, reason="no ncu captures from the H200 yet (evals/device/capture_ncu.py)")
@pytest.mark.parametrize("raw_path", CAPTURES, ids=lambda p: p.stem)
def test_real_captures_parse_into_metrics_rules_and_findings(raw_path):
    details = raw_path.with_name(raw_path.name.replace("_raw.csv", "_details.csv"))
    result = ncu.parse_pages(raw_path.read_text(), details.read_text() if details.exists() else "")
    assert result.available and result.kernels
    for k in result.kernels:
        assert l2._q(k.metrics, "duration") and l2._q(k.metrics, "registers")
        assert l2._q(k.metrics, "mem_pct") is not None and l2._q(k.metrics, "theoretical_occ") is not None
        assert l2.dominant_stall(k.metrics) is not None
        assert l2.profile_findings(k.metrics, k.rules, kernel=k.name)
    if raw_path.stem.startswith("planted"):
        by_name = {k.name.split("(")[0]: k for k in result.kernels}
        ids = lambda name: {f.id for f in l2.profile_findings(by_name[name].metrics, by_name[name].rules)}
        assert "uncoalesced_access" in ids("strided_copy_kernel")
        assert "register_spill" in ids("spill_kernel")
        assert "low_occupancy" in ids("copy_kernel") or any(
            "low_occupancy" in ids(n) for n in by_name if n.startswith("copy"))


@pytest.mark.skipif(not (FIXTURES / "planted_raw.csv").exists(), reason="no planted ncu capture from the H200")
def test_an_occupancy_rule_alone_is_no_finding_when_occupancy_is_healthy():
    """H200 capture: the full-grid copy runs at 82 % achieved occupancy, where ncu still files AchievedOccupancy (an
    OPT rule with an estimated speedup); the 4-block copy at 6 %. Only the second is a low-occupancy kernel."""
    result = ncu.parse_pages((FIXTURES / "planted_raw.csv").read_text(), (FIXTURES / "planted_details.csv").read_text())
    copies = [k for k in result.kernels if k.name.startswith("copy_kernel")]
    waves = lambda k: l2._q(k.metrics, "waves")
    full, tiny = max(copies, key=waves), min(copies, key=waves)
    assert any(r.name == "AchievedOccupancy" and r.type == "OPT" for r in full.rules)
    full_findings = l2.profile_findings(full.metrics, full.rules)
    assert "low_occupancy" not in {f.id for f in full_findings}
    bound = [f for f in full_findings if f.id in ("memory_bound", "compute_bound", "latency_bound")]
    assert any(e.data.get("rule") == "AchievedOccupancy" for f in bound for e in f.evidence)  # kept as evidence
    assert "low_occupancy" in {f.id for f in l2.profile_findings(tiny.metrics, tiny.rules)}


@pytest.mark.skipif(not (FIXTURES / "matmul_details.csv").exists(), reason="no matmul ncu capture from the H200")
def test_launch_configuration_about_a_partial_wave_is_a_tail_effect():
    result = ncu.parse_pages((FIXTURES / "matmul_raw.csv").read_text(), (FIXTURES / "matmul_details.csv").read_text())
    rules = [r for k in result.kernels for r in k.rules if "A wave of thread blocks" in r.description]
    assert rules and all(l2._rule_target(r) == "tail_effect" for r in rules)


def test_a_profiled_kernels_findings_cite_the_lines_that_launch_it():
    """ncu's findings (throughput, occupancy, waves) have no source line of their own: they cite the task-file line
    where the profiled kernel is launched, its grid and config chosen (issue 22: each top finding cites a line)."""
    from kopt.diagnose import launch_facts
    from kopt.diagnose.l2 import result_findings
    from kopt.task import load_task

    task = Path(__file__).resolve().parents[1] / "examples" / "softmax.py"
    facts = launch_facts.capture(load_task(task), "sm_90")
    launch_line = next(i for i, line in enumerate(task.read_text().splitlines(), 1) if "softmax_kernel[" in line)
    result = ncu.parse_pages((FIXTURES / "softmax_raw.csv").read_text(), (FIXTURES / "softmax_details.csv").read_text())
    findings = result_findings(result)
    assert findings and all(not f.kernel_lines for f in findings)
    cited = launch_facts.cite_launches(findings, facts)
    assert all(f.kernel_lines == [launch_line] for f in cited)


def test_a_kernel_with_a_sliver_of_the_profiled_time_sinks():
    """The planted page holds five kernels; the second copy_kernel took 2 us of 264 (0.8 %): its findings keep a
    tenth of their confidence or less (on the H200 a 4-block torch zero-fill led a real kernel's diagnosis as
    low_occupancy), while the kernels with a tenth of the time or more keep theirs."""
    from kopt.diagnose.l2 import profile_findings, result_findings

    result = ncu.parse_pages((FIXTURES / "planted_raw.csv").read_text(), (FIXTURES / "planted_details.csv").read_text())
    short = result.kernels[3]
    assert short.name == "copy_kernel" and l2._q(short.metrics, "duration") < 3
    alone = {f.id: f.confidence for f in profile_findings(short.metrics, short.rules, kernel=short.name)}
    sunk = [f for f in result_findings(result) if "0.8% of the profiled GPU time" in f.message]
    assert alone and len(sunk) == len(alone) and all(f.confidence <= alone[f.id] * 0.1 for f in sunk)
    strided = [f for f in result_findings(result) if f.message.startswith("strided_copy_kernel")]
    assert strided and not any("profiled GPU time" in f.message for f in strided)


@pytest.mark.skipif(not (FIXTURES / "matmul_details.csv").exists(), reason="no matmul ncu capture from the H200")
def test_a_bank_conflict_count_only_the_profiler_saw_ranks_after_a_cause():
    """The H200 matmul's excessive shared wavefronts (ncu's UncoalescedSharedAccess, est. 12.5 %) are the compiler's
    shared layout: a weaker L1 cause still leads; a bank-conflict finding a static level also made is a cause."""
    from kopt.diagnose.escalate import merge, symptom
    from kopt.vocabulary import Evidence, Finding

    result = ncu.parse_pages((FIXTURES / "matmul_raw.csv").read_text(), (FIXTURES / "matmul_details.csv").read_text())
    conflicts = [f for f in l2.result_findings(result) if f.id == "bank_conflicts"]
    assert conflicts and conflicts[0].confidence > 0.4
    untuned = Finding("untuned_config", "L1", "fixed tiles, no autotune", 0.35, [Evidence("L1", "source", "BLOCK_M=64")],
                      [12], ["autotune the tiles"])
    assert [f.id for f in merge([*conflicts, untuned], set())][:2] == ["untuned_config", "bank_conflicts"]
    static = Finding("bank_conflicts", "L3", "a 32-way strided shared store", 0.3, [Evidence("L3", "sass", "STS")])
    assert symptom(conflicts[0]) and not symptom(merge([conflicts[0], static], set())[0])
