"""The prompt exchange end to end on CPU: real kopt processes, real request and reply files, the real loop
(validation through the Triton interpreter), kill -9 mid-round, the campaign path, and the grounding arms."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kopt.errors import KoptError
from kopt.rounds.store import RoundsStore

ROOT = Path(__file__).resolve().parents[1]
KOPT = [sys.executable, "-m", "kopt.cli"]


def kopt(args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "KOPT_HOME": str(cwd / "home"), "COLUMNS": "300"}
    return subprocess.run(KOPT + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def kopt_json(args: list[str], cwd: Path) -> dict | list:
    res = kopt(args + ["--json"], cwd)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    return out["items"] if isinstance(out, dict) and "items" in out else out


def requests(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.request.json"))]


def answer(request: dict, folder: Path, change: str = "BLOCK_SIZE 2048: fewer programs", model: str = "replier-1",
           body: str | None = None) -> Path:
    """Write a reply the way a human replier does: from the request alone (its task file, its format rule)."""
    user = request["messages"][-1]["content"]
    source = re.search(r"```python\n(.*?)```", user, re.S).group(1)
    if body is None:
        edited = source.replace("BLOCK_SIZE=1024", "BLOCK_SIZE=2048")
        edited = edited if edited != source else source + "# a replier's note\n"
        body = f"Change: {change}\n```python\n{edited}```\n"
    reply = folder / f"{request['id']}.reply.md"
    reply.write_text(f"model: {model}\n{body}")
    return reply


@pytest.fixture
def task(tmp_path: Path) -> Path:
    path = tmp_path / "vector_add.py"
    shutil.copy(ROOT / "examples/vector_add.py", path)
    return path


@pytest.fixture
def aligned_task(task: Path) -> Path:
    """The task with every case a multiple of 16 and >= 132 programs, so that the untuned config is the diagnosis's
    first finding (the per-case launch facts would otherwise lead with the odd cases' masked access)."""
    path = task
    text = path.read_text()
    cases = next(line for line in text.splitlines() if line.startswith("CASES = "))
    path.write_text(text.replace(cases, 'CASES = [{"n": 1 << 24}, {"n": 1 << 20}, {"n": 1_000_000}, {"n": 1 << 26}, '
                                        '{"n": 33_554_432}]'))
    return path


def test_waiting_reply_resume_unparsable_and_pending(task, tmp_path):
    ex = tmp_path / "ex"
    start = ["optimize", str(task), "--proposer", "llm", "--grounding", "none", "--llm-exchange", "ex", "--rounds", "3"]
    first = kopt_json(start, tmp_path)
    assert first["status"] == "waiting" and first["rounds"] == []
    assert first["resume"] == f"kopt optimize --resume {first['run_id']} --llm-exchange {ex}"
    assert [c["case"] for c in first["initial"]] == [{"n": 1 << 24}, {"n": 98_432}, {"n": 1_000_003}, {"n": 1 << 26},
                                                    {"n": 33_554_431}]
    (req,) = requests(ex)
    assert req["context"]["round"] == 1 and req["context"]["grounding"] == "none"
    system, user = req["messages"][0]["content"], req["messages"][1]["content"]
    assert 'one line starting "Change:"' in system and "ONE ```python block" in system  # self-contained format rule
    assert "def add_kernel" in user and "unavailable: no CUDA GPU" in user and "diagnosis" not in user
    assert (ex / f"{req['id']}.request.md").read_text().startswith(f"# LLM request {req['id']}")

    (pending,) = kopt_json(["runs", "pending"], tmp_path)
    assert pending["run_id"] == first["run_id"] and pending["round"] == 1 and pending["status"] == "waiting"
    assert pending["request"] == str(ex / f"{req['id']}.request.json") and not pending["replied"]
    assert pending["reply"] == str(ex / f"{req['id']}.reply.md")

    # no reply yet: resuming spends nothing and asks the same request again
    again = kopt_json(["optimize", "--resume", first["run_id"], "--llm-exchange", "ex"], tmp_path)
    assert again["status"] == "waiting" and again["rounds"] == [] and len(requests(ex)) == 1

    answer(req, ex)
    second = kopt_json(["optimize", "--resume", first["run_id"], "--llm-exchange", "ex"], tmp_path)
    (r1,) = second["rounds"]
    assert (r1["proposer"], r1["outcome"], r1["hypothesis"]) == ("llm:replier-1", "untimed", "BLOCK_SIZE 2048: fewer programs")
    assert r1["level_reached"] is None and "findings" not in r1["evidence"]  # grounding none: no diagnosis ran
    assert (ex / f"{req['id']}.consumed.json").is_file()
    store = RoundsStore(tmp_path / ".kopt")
    transcript = json.loads(store.get(r1["evidence"]["transcript"]))
    store.close()
    assert transcript["model"] == "replier-1" and transcript["exchange"]["request_id"] == req["id"]
    assert transcript["messages"][-1]["content"] == (ex / f"{req['id']}.reply.md").read_text().split("\n", 1)[1]

    # an unusable reply fails its round once (no second request), and the next request says why
    req2 = next(r for r in requests(ex) if r["context"]["round"] == 2)
    answer(req2, ex, body="I would raise BLOCK_SIZE, but here is no code.\n")
    third = kopt_json(["optimize", "--resume", first["run_id"], "--llm-exchange", "ex"], tmp_path)
    r2 = third["rounds"][1]
    assert r2["outcome"] == "unparsable" and "no ```python code block" in r2["message"]
    assert [r["context"]["round"] for r in requests(ex)].count(2) == 1
    req3 = next(r for r in requests(ex) if r["context"]["round"] == 3)
    assert "-> unparsable: unusable reply: no ```python code block" in req3["messages"][1]["content"]
    assert third["status"] == "waiting"
    assert kopt_json(["runs", "list"], tmp_path)[0]["status"] == "waiting"
    show = kopt(["runs", "show", first["run_id"]], tmp_path)
    assert "grounding: none" in show.stdout and f"llm exchange: {ex}" in show.stdout


def test_a_changed_request_refuses_its_reply_and_a_reply_names_its_model(task, tmp_path):
    ex = tmp_path / "ex"
    first = kopt_json(["optimize", str(task), "--proposer", "llm", "--grounding", "none", "--llm-exchange", "ex",
                       "--rounds", "1"], tmp_path)
    (req,) = requests(ex)
    answer(req, ex)
    path = ex / f"{req['id']}.request.json"
    path.write_text(path.read_text().replace("vector add", "vector sub"))
    res = kopt(["optimize", "--resume", first["run_id"], "--llm-exchange", "ex"], tmp_path)
    assert res.returncode == 1 and len(res.stderr.strip().splitlines()) == 1
    assert "refused: its request" in res.stderr and "was changed" in res.stderr
    path.write_text(json.dumps(req))  # restored: now the reply is fine, but it must name its model
    (ex / f"{req['id']}.reply.md").write_text("Change: x\n```python\nx = 1\n```\n")
    res = kopt(["optimize", "--resume", first["run_id"], "--llm-exchange", "ex"], tmp_path)
    assert res.returncode == 1 and "the first line must be `model: NAME`" in res.stderr
    res = kopt(["optimize", "--resume", first["run_id"]], tmp_path)  # the exchange is never taken from the store
    assert res.returncode == 1 and f"resume it with --llm-exchange {ex}" in res.stderr


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _sandbox_child_running(ancestor: int) -> bool:
    """Is a sandbox worker below `ancestor` (our kopt process) alive? Other tests on this machine may run theirs."""
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if b"kopt.harness.worker" not in (proc / "cmdline").read_bytes():
                continue
            pid = int(proc.name)
            while pid > 1 and pid != ancestor:
                pid = _ppid(pid)
            if pid == ancestor:
                return True
        except (OSError, ValueError, IndexError):
            continue
    return False


def test_kill_9_around_the_exchange_loses_no_round_and_reuses_no_reply(task, tmp_path):
    ex = tmp_path / "ex"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "KOPT_HOME": str(tmp_path / "home")}
    args = ["optimize", str(task), "--proposer", "llm", "--grounding", "none", "--llm-exchange", "ex", "--rounds", "2"]
    # killed as soon as its request is on disk (between writing the request and the reply)
    proc = subprocess.Popen(KOPT + args, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 240
    while not list(ex.glob("*.request.json")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    (req,) = requests(ex)
    store = RoundsStore(tmp_path / ".kopt")
    (run,) = store.runs()
    assert [p["request_id"] for p in store.pending(run.run_id)] == [req["id"]]  # recorded before it went out
    store.close()
    answer(req, ex)

    # killed after consuming the reply, while its candidate runs in the sandbox
    proc = subprocess.Popen(KOPT + ["optimize", "--resume", run.run_id, "--llm-exchange", "ex"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    while not _sandbox_child_running(proc.pid) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert (ex / f"{req['id']}.consumed.json").is_file()
    store = RoundsStore(tmp_path / ".kopt")
    assert store.rounds(run.run_id) == [] and store.run(run.run_id).status == "running"
    store.close()

    out = kopt_json(["optimize", "--resume", run.run_id, "--llm-exchange", "ex"], tmp_path)
    (r1,) = out["rounds"]  # round 1 is not lost: done with its own reply
    assert r1["n"] == 1 and r1["proposer"] == "llm:replier-1" and r1["outcome"] == "untimed"
    assert out["status"] == "waiting"
    round2 = [r for r in requests(ex) if r["context"]["round"] == 2]
    assert len(requests(ex)) == 2 and len(round2) == 1 and round2[0]["id"] != req["id"]
    assert not (ex / f"{round2[0]['id']}.reply.md").exists()  # round 2 waits for its own reply: none re-used
    assert "round 1 [llm:replier-1] BLOCK_SIZE 2048" in round2[0]["messages"][1]["content"]


def test_grounding_full_shows_the_diagnosis_as_evidence_and_none_runs_no_diagnosis(aligned_task, tmp_path):
    from kopt.optimize import optimize

    task = aligned_task

    (tmp_path / "full").mkdir()
    full = optimize(task, rounds=1, proposer="llm", grounding="full", llm_exchange=tmp_path / "ex-full",
                    settings=_settings(tmp_path / "full"))
    none = optimize(task, rounds=1, proposer="llm", grounding="none", llm_exchange=tmp_path / "ex-none",
                    settings=_settings(tmp_path / "full"))
    assert full["options"]["grounding"] == "full" and none["options"]["grounding"] == "none"
    (f,), (n,) = requests(tmp_path / "ex-full"), requests(tmp_path / "ex-none")
    assert f["messages"][0] == n["messages"][0]  # the same system prompt for both arms
    fu, nu = f["messages"][1]["content"], n["messages"][1]["content"]
    assert "## kopt's diagnosis (evidence to weigh, not an order)" in fu and "may disagree" in fu
    assert re.search(r"### 1\. untuned_config \(L1, confidence 0\.\d\d\)", fu) and "evidence [L1" in fu
    assert fu.index("### Per case") < fu.index("### 1. ") and "add_kernel grid" in fu  # launch facts lead
    for text in (fu, nu):
        assert "def add_kernel" in text and "## Measured on this version" in text and "## Your reply" in text
    assert "untuned_config" not in nu and "evidence" not in nu and "pattern" not in nu
    # the arms differ only by the diagnosis section
    assert re.sub(r"## kopt's diagnosis.*?\n\n## Earlier", "## Earlier", fu, flags=re.S) == nu
    with pytest.raises(KoptError, match="--grounding none .* --proposer llm"):
        optimize(task, proposer="auto", grounding="none", llm_exchange=tmp_path / "ex", settings=_settings(tmp_path))
    with pytest.raises(KoptError, match="has grounding full; an arm cannot change"):
        optimize(resume=full["run_id"], grounding="none", llm_exchange=tmp_path / "ex-full",
                 settings=_settings(tmp_path / "full"))


def _settings(workspace: Path):
    from kopt.config import load_settings

    return load_settings(workspace)


def test_campaign_advances_waiting_runs_one_round_per_call(tmp_path):
    """kopt eval suite --llm-exchange on CPU: the first call writes each op's request; after the replies, the
    same call validates each reply's candidate, commits it and writes the next requests."""
    from kopt.campaign import plan_jobs, suite_ops

    args = ["eval", "suite", "--suite", str(ROOT / "evals/suite"), "--ops", "gelu,silu", "--rounds", "2", "--gpus", "0",
            "--proposer", "llm", "--grounding", "none", "--llm-exchange", "ex", "--campaign", "arms"]
    ex = tmp_path / "ex"
    first = kopt_json(args, tmp_path)
    assert [(j["op"], j["status"], j["rounds"]) for j in first["jobs"]] == [("gelu", "waiting", 0), ("silu", "waiting", 0)]
    assert len(requests(ex)) == 2
    for req in requests(ex):
        answer(req, ex, change="same kernel, a note")
    second = kopt_json(args, tmp_path)
    assert {j["run_id"] for j in second["jobs"]} == {j["run_id"] for j in first["jobs"]}  # resumed, not restarted
    assert [(j["status"], j["rounds"]) for j in second["jobs"]] == [("waiting", 1), ("waiting", 1)]
    assert sorted(r["context"]["round"] for r in requests(ex)) == [1, 1, 2, 2]
    pending = kopt_json(["runs", "pending"], tmp_path)
    assert sorted((p["op"], p["round"], p["grounding"]) for p in pending) == [("gelu", 2, "none"), ("silu", 2, "none")]
    store = RoundsStore(tmp_path / ".kopt")
    try:
        ops = suite_ops(ROOT / "evals/suite", ["gelu"])
        resumed, _ = plan_jobs(store, ops, ["progressive"], "arms", 2, "llm", grounding="none")
        fresh, _ = plan_jobs(store, ops, ["progressive"], "arms", 2, "llm", grounding="full")
        assert resumed[0].resume and fresh[0].resume is None  # the other arm is its own run
    finally:
        store.close()


def test_ask_prose_and_the_rerank_go_through_the_exchange_too(tmp_path):
    """Every LLM caller gets the exchange: kopt.llm.complete (kopt ask's prose) waits, then reads the reply;
    the rerank keeps the hybrid order while its request waits."""
    from kopt.config import load_settings
    from kopt.index.hits import Hit, StoredChunk
    from kopt.index.llm_rerank import rerank
    from kopt.llm import ExchangeWaiting, complete, make_llm

    llm = make_llm(load_settings(tmp_path, llm_provider="exchange", llm_exchange_dir=str(tmp_path / "ex")))
    with pytest.raises(ExchangeWaiting) as waiting:
        complete(llm, "You answer questions.", "Why is my kernel slow?")
    (req,) = requests(tmp_path / "ex")
    assert req["messages"] == [{"role": "system", "content": "You answer questions."},
                               {"role": "user", "content": "Why is my kernel slow?"}]
    assert waiting.value.reply == tmp_path / "ex" / f"{req['id']}.reply.md"
    waiting.value.reply.write_text("model: replier-2\nIt moves 3 bytes per flop.\n")
    assert complete(llm, "You answer questions.", "Why is my kernel slow?") == "It moves 3 bytes per flop."

    hits = [Hit(1.0 - i / 10, f"def f{i}(): pass", StoredChunk(path=f"a{i}.py", start_line=1, end_line=2)) for i in range(3)]
    order, reason = rerank(llm, "where is f2 decided?", hits)
    assert order == hits and reason.startswith("LLM rerank: waiting for the LLM reply to")
    rerank_request = next(r for r in requests(tmp_path / "ex") if r["id"] != req["id"])
    (tmp_path / "ex" / f"{rerank_request['id']}.reply.md").write_text("model: replier-2\nDoc: 3, Relevance: 9\n")
    order, reason = rerank(llm, "where is f2 decided?", hits)
    assert reason is None and order[0] is hits[2]


def test_a_resumed_round_asks_its_recorded_request_without_diagnosing_again(aligned_task, tmp_path, monkeypatch):
    """The diagnosis costs GPU time: it runs once per round (when the request is written), never for `none`."""
    import kopt.diagnose.escalate
    from kopt.optimize import optimize

    task = aligned_task

    real, calls = kopt.diagnose.escalate.diagnose, []
    monkeypatch.setattr(kopt.diagnose.escalate, "diagnose", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = optimize(task, rounds=1, proposer="llm", grounding="full", llm_exchange=tmp_path / "ex",
                     settings=_settings(tmp_path))
    assert first["status"] == "waiting" and len(calls) == 1
    (req,) = requests(tmp_path / "ex")
    answer(req, tmp_path / "ex")
    done = optimize(resume=first["run_id"], llm_exchange=tmp_path / "ex", settings=_settings(tmp_path))
    assert len(calls) == 1 and done["status"] == "done"  # round 1 committed from the recorded request
    (r1,) = done["rounds"]
    assert r1["level_reached"] == "L3" and r1["finding_ids"][0] == "untuned_config" and r1["evidence"]["findings"]
    assert r1["hypothesis_key"] == "untuned_config/llm" and r1["pattern_id"] is None

    none = optimize(task, rounds=1, proposer="llm", grounding="none", llm_exchange=tmp_path / "ex2",
                    settings=_settings(tmp_path))
    assert none["status"] == "waiting" and len(calls) == 1  # the `none` arm never diagnoses


def _cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


@pytest.mark.skipif(not _cuda(), reason="needs a CUDA GPU: the real bench times the initial kernel")
def test_on_a_gpu_the_first_request_holds_the_measured_times_and_roofline(task, tmp_path):
    from kopt.optimize import optimize

    summary = optimize(task, rounds=1, proposer="llm", grounding="none", llm_exchange=tmp_path / "ex",
                       settings=_settings(tmp_path))
    assert all(c["ms"] > 0 and 0 < c["roofline"] and c["bound"] == "memory" for c in summary["initial"])
    (req,) = requests(tmp_path / "ex")
    prompt = req["messages"][1]["content"]
    for c in summary["initial"]:
        assert f"case {json.dumps(c['case'], sort_keys=True)}: {c['ms']:.4f} ms, " in prompt
    assert prompt.count("of the memory-bound roofline") == len(summary["initial"])
