"""Campaign accounting on recorded rounds, job planning (resume/merge), the per-GPU worker pool, the report."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kopt.campaign import Job, campaign_runs, job_env, known_references, plan_jobs, run_campaign, suite_ops
from kopt.rounds.store import Round, RoundsStore
from kopt.suite_report import operator_result, plots, report_markdown, summarize

REPO = Path(__file__).resolve().parent.parent
SUITE = REPO / "evals" / "suite"


def _record(store: RoundsStore, op: str, base: list[float], rounds: list[tuple], *, policy: str = "progressive",
            status: str = "done", refs: dict | None = None, roofline: list[float] | None = None,
            campaign: str = "c1") -> str:
    """A run of `op` with rounds given as (outcome, case_times, level)."""
    opts = {"campaign": campaign, "op": op, "family": "fam", "policy": policy, "rounds": 10, "proposer": "recipes"}
    if refs:
        opts["references"] = refs
    run = store.create_run(Path(f"/suite/{op}.py"), f"# {op} {policy} {campaign}\n", opts, base,
                           {"available": None not in base, "reason": "test", "roofline": roofline or []}, {})
    for n, (outcome, times, level) in enumerate(rounds, 1):
        store.add_round(Round(run_id=run.run_id, n=n, level_reached=level, hypothesis=f"h{n}",
                              hypothesis_key=f"small_block/p{n}", finding_ids=["small_block"], pattern_id=f"p{n}",
                              proposer="recipe:launch_config_search", candidate=None, outcome=outcome,
                              case_times=times, seconds=2.0))
    if status != "running":
        store.set_status(run.run_id, status, "round budget spent")
    return run.run_id


@pytest.fixture()
def store(tmp_path: Path):
    s = RoundsStore(tmp_path / ".kopt")
    yield s
    s.close()


def test_operator_accounting_follows_the_paper(store):
    rid = _record(store, "a", [4.0, 9.0], [("improved", [2.0, 3.0], "L1"), ("slower", [5.0, 9.0], "L3"),
                                          ("improved", [1.0, 1.0], "L3"), ("incorrect", [], "L4")],
                  refs={"eager_ms": [2.0, 4.0], "compile_ms": [1.0, 2.0]}, roofline=[0.2, 0.1])
    r = operator_result(store.run(rid), store.rounds(rid))
    assert r.speedup == pytest.approx(math.sqrt(4 * 9))  # geomean over cases of initial / best
    assert r.best_round == 3 and r.best_level == "L3" and r.deepest_level == "L4" and r.rounds == 4
    assert r.vs_eager == pytest.approx(math.sqrt(2 * 4)) and r.vs_compile == pytest.approx(math.sqrt(1 * 2))
    assert r.initial_vs_eager == pytest.approx(math.sqrt(0.5 * 4 / 9))
    assert r.roofline == pytest.approx((0.8 + 0.9) / 2)  # initial fraction scaled by initial/final time
    assert r.rounds_to_90 == 3 and r.wall_s == 8.0
    # nothing improved: speedup 1, best round 0; untimed runs get no speedup at all
    none = _record(store, "b", [1.0], [("slower", [2.0], "L1")])
    assert operator_result(store.run(none), store.rounds(none)).speedup == 1.0
    untimed = _record(store, "c", [None], [("untimed", [], "L3")])
    u = operator_result(store.run(untimed), store.rounds(untimed))
    assert u.speedup is None and not u.timed and u.deepest_level == "L3"


def test_summary_figures(store):
    specs = {"a": 1.0, "b": 1.5, "c": 3.0, "d": 6.0, "e": 12.0}
    for i, (op, s) in enumerate(specs.items()):
        rounds = [("slower", [2.0], "L1")] * i + [("improved", [1.0 / s], "L1" if s < 5 else "L3")] if s > 1 else []
        _record(store, op, [1.0], rounds)
    results = [operator_result(run, store.rounds(run.run_id)) for run in store.runs()]
    s = summarize(results)
    assert s["geomean_speedup"] == pytest.approx((1.5 * 3 * 6 * 12) ** (1 / 5))
    assert s["median_speedup"] == pytest.approx(3.0) and s["over_2x"] == 3 and s["over_5x"] == 2
    assert s["improved"] == 4 and s["median_best_round"] == 3.5  # best rounds 2, 3, 4, 5
    assert s["best_levels"] == {"L1": 2, "L2": 0, "L3": 2, "L4": 0} and s["best_at_l1"] == 2
    assert s["trajectory_levels"]["L3"] == 2 and s["trajectory_levels"]["L1"] == 2


def test_plan_resumes_unfinished_and_skips_finished_runs(store):
    ops = suite_ops(SUITE, ["gelu", "silu", "softmax"])
    assert [o.family for o in ops] == ["elementwise", "elementwise", "softmax"]
    done = _record(store, "gelu", [None] * 5, [("untimed", [], "L1")] * 3)
    running = _record(store, "silu", [None] * 5, [], status="running")
    _record(store, "softmax", [None] * 5, [], campaign="other")  # another campaign: not ours
    jobs, finished = plan_jobs(store, ops, ["progressive", "always-deep"], "c1", 3, "recipes")
    assert finished == [done]
    # asked for more rounds than a run's spent budget: it goes on; a run that stopped for another reason does not
    more, _ = plan_jobs(store, ops[:1], ["progressive"], "c1", 4, "recipes")
    assert more[0].resume == done and more[0].rounds == 4
    store.set_status(done, "done", "no untried hypothesis left")
    assert plan_jobs(store, ops[:1], ["progressive"], "c1", 4, "recipes") == ([], [done])
    by = {(j.op, j.policy): j for j in jobs}
    assert by[("silu", "progressive")].resume == running
    assert by[("softmax", "progressive")].resume is None and len(jobs) == 5  # every op again under always-deep
    timed = _record(store, "softmax", [1.0] * 5, [("slower", [2.0] * 5, "L1")] * 3)  # done, timed, no references
    jobs, _ = plan_jobs(store, ops[2:], ["progressive"], "c1", 3, "recipes")
    assert jobs[0].references_only and jobs[0].resume == timed
    with pytest.raises(Exception, match="no operator 'nope'"):
        suite_ops(SUITE, ["nope"])


def test_references_are_reused_only_for_the_same_task_source(store):
    def run(source: str, refs: dict | None = None):
        opts = {"references": refs} if refs else {}
        return store.create_run(Path("/suite/gelu.py"), source, opts, [1.0], {"available": True}, {})

    measured = run("# gelu\n", {"eager_ms": [2.0], "compile_ms": [1.0]})
    same, changed = run("# gelu\n"), run("# gelu, edited\n")
    assert known_references(store, same) == {"eager_ms": [2.0], "compile_ms": [1.0], "from_run": measured.run_id}
    assert known_references(store, changed) is None and known_references(store, measured) is None


def test_split_campaigns_merge_across_stores(tmp_path, store):
    other = RoundsStore(tmp_path / "machine2" / ".kopt")
    try:
        _record(store, "a", [1.0], [], status="running")
        finished = _record(other, "a", [1.0], [("improved", [0.5], "L1")])
        _record(other, "b", [1.0], [])
        merged = campaign_runs([store, other], "c1")
        assert set(merged) == {("a", "progressive"), ("b", "progressive")}
        assert merged[("a", "progressive")][1].run_id == finished  # the finished run wins
    finally:
        other.close()


def test_one_worker_per_gpu_runs_jobs_in_child_processes(tmp_path):
    """Real children (python -m kopt.campaign): jobs spread over the workers, each pinned to its GPU index;
    a job whose task is missing fails alone, with the file named."""
    jobs = [Job(f"op{i}", str(tmp_path / f"missing{i}.py"), "x", "progressive", "c", 1, "recipes") for i in range(4)]
    seen = []
    results = run_campaign(jobs, tmp_path, 2, on_result=seen.append)
    assert len(results) == 4 and seen == results
    assert {r["gpu"] for r in results} == {0, 1}
    assert all(not r["ok"] and "missing" in r["error"] for r in results)


def test_report_markdown_and_svg_plots(store, tmp_path):
    _record(store, "a", [4.0], [("improved", [1.0], "L3")], refs={"eager_ms": [2.0], "compile_ms": [0.5]})
    _record(store, "a", [4.0], [("improved", [2.0], "L2")], policy="profile-only")
    results = [operator_result(run, store.rounds(run.run_id), policy=run.options["policy"]) for run in store.runs()]
    summaries = {p: summarize([r for r in results if r.policy == p]) for p in ("progressive", "profile-only")}
    text = report_markdown(results, {"date": "2026-11-29", "gpu": "H200", "driver": "570", "triton": "3.6.0",
                                     "torch": "2.11"}, "T", "plots")
    assert "| geomean speedup vs initial | 4.00x | 2.00x |" in text
    assert "| final vs torch.compile (geomean) | 0.50x | - |" in text
    assert "0.50x of torch.compile" in text  # the shortfall table names what is short
    assert "gpu H200, driver 570, triton 3.6.0" in text
    assert "### Policies on the same" not in text  # both policies ran every operator: one table says it all
    _record(store, "b", [9.0], [("improved", [1.0], "L1")])  # only progressive ran b (9x): compare on `a` alone
    results = [operator_result(run, store.rounds(run.run_id), policy=run.options["policy"]) for run in store.runs()]
    text = report_markdown(results, {}, "T", None)
    assert "| geomean speedup vs initial | 6.00x | 2.00x |" in text
    same = text.split("### Policies on the same 1 operators (a)")[1].split("###")[0]
    assert "| geomean speedup vs initial | 4.00x | 2.00x |" in same
    svgs = plots(results, summaries)
    assert {"speedup-per-operator-progressive.svg", "evidence-depth-best-rounds.svg"} <= set(svgs)
    for svg in svgs.values():
        ET.fromstring(svg)  # well-formed


def _kopt(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "KOPT_HOME": str(cwd / "home"), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "kopt.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, **kw)


def test_campaign_resumes_after_kill_9(tmp_path):
    """End to end on CPU: kill the campaign mid-run; the next call resumes the interrupted run (same run id)
    instead of starting over, finishes the rest, and the report lists every operator once."""
    import signal
    import time

    args = ["eval", "suite", "--suite", str(SUITE), "--ops", "gelu,silu", "--rounds", "1", "--gpus", "0"]
    env = {**os.environ, "KOPT_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "kopt.cli", *args], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    db = tmp_path / ".kopt" / "rounds.sqlite"
    deadline = time.monotonic() + 120
    first = None
    while time.monotonic() < deadline and first is None:
        time.sleep(0.5)
        if db.is_file():
            s = RoundsStore(db.parent)
            try:
                first = next((r.run_id for r in s.runs() if r.status == "running"), None)
            finally:
                s.close()
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert first, "no run started within 120 s"
    again = _kopt([*args, "--json"], tmp_path, timeout=300)
    assert again.returncode == 0, again.stderr
    out = json.loads(again.stdout)
    assert [j["ok"] for j in out["jobs"]] == [True, True]
    assert first in {j["run_id"] for j in out["jobs"]}  # resumed, not restarted
    assert sorted(r["op"] for r in out["results"]) == ["gelu", "silu"]
    report = _kopt(["eval", "report", "--append", str(tmp_path / "RESULTS.md"), "--plots", str(tmp_path / "plots")],
                   tmp_path)
    assert report.returncode == 0, report.stderr
    section = (tmp_path / "RESULTS.md").read_text()
    assert "## Suite campaign: suite" in section and "| gelu | elementwise | progressive |" in section
    assert "(plots/evidence-depth-trajectories.svg)" in section and (tmp_path / "plots").is_dir()


def test_ray_sends_the_same_jobs_to_a_local_cluster(tmp_path):
    """Ray is an optional extra: with it installed, a small local instance runs the jobs."""
    pytest.importorskip("ray")
    jobs = [Job(f"op{i}", str(tmp_path / f"missing{i}.py"), "x", "progressive", "c", 1, "recipes") for i in range(2)]
    results = run_campaign(jobs, tmp_path, 0, ray_address="local")
    assert len(results) == 2 and all("node" in r and "missing" in r["error"] for r in results)


def test_campaign_script_runs_phases_side_by_side_and_reports(tmp_path):
    """evals/device/campaign.sh on CPU with CONCURRENT=1: both phases finish, then the report and the store's tarball
    (a bare `wait` once hung here on the log's own tee until the device call's limit)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "OUT": str(tmp_path / "out"),
           "WS": str(tmp_path / "ws"), "OPS": "gelu", "POLICY_OPS": "gelu", "PHASES": "suite policies",
           "CONCURRENT": "1", "BUDGET_MIN": "3", "ROUNDS": "1", "OP_MINUTES": "1", "WORKERS": "1"}
    done = subprocess.run(["bash", str(REPO / "evals/device/campaign.sh")], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "== report" in done.stdout and (tmp_path / "out" / "store.tar.gz").is_file()
    report = (tmp_path / "out" / "suite.md").read_text()
    assert "| figure | progressive | profile-only | always-deep |" in report
    with tarfile.open(tmp_path / "out" / "store.tar.gz") as tar:  # the snapshot is a store that reports again
        tar.extractall(tmp_path / "back", filter="data")
    again = RoundsStore(tmp_path / "back" / ".kopt")
    try:
        assert sorted(r.options["policy"] for r in again.runs()) == ["always-deep", "profile-only", "progressive"]
    finally:
        again.close()


def test_job_env_caps_threads_and_pins_the_gpu(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    env = job_env(1, 2)
    assert env["OMP_NUM_THREADS"] == "2" and env["CUDA_VISIBLE_DEVICES"] == "1" and env["KOPT_GPU_LOCK"].endswith("gpu1.lock")
    monkeypatch.setenv("OMP_NUM_THREADS", "5")  # the user's own choice wins
    assert job_env(None, 2)["OMP_NUM_THREADS"] == "5" and "KOPT_GPU_LOCK" not in job_env(None, None)
