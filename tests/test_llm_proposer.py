"""The LLM proposer through the real llama-index OpenAI-compatible client, against a loopback HTTP
server that replays recorded chat-completion replies (garbage, HTTP errors and a slow server included)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from kopt.config import load_settings
from kopt.vocabulary import Evidence, Finding

ROOT = Path(__file__).resolve().parents[1]
REPLIES = json.loads((ROOT / "tests/fixtures/llm/vector_add_replies.json").read_text())
VECTOR_ADD = ROOT / "examples/vector_add.py"


@pytest.fixture
def replay(llm_server):
    """Starts a loopback server that replays the named list of REPLIES."""
    return lambda name: llm_server(REPLIES[name])


def settings_for(server, workspace: Path):
    return load_settings(workspace, llm_provider="openai-like", llm_model="replay-model", llm_base_url=server.url,
                         llm_api_key="test", llm_timeout_s=1.0)


FINDING = Finding("untuned_config", "L1", "BLOCK_SIZE fixed at 1024 with default num_warps", 0.6,
                  [Evidence("L4", "compiler_source", "getSizePerThread: vector width from contiguity",
                            {"excerpt": "unsigned perThread = getNumElementsPerThread(op, order, axisInfo);"},
                            "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp:40-60@3.6.0")],
                  [9], ["BLOCK_SIZE stays a power of two"], ["raise_small_block"])
PERF = {"available": True, "cases": [{"case": {"n": 16777216}, "ms": 0.1234, "roofline": 0.61, "bound": "memory"}]}


def ask(proposer, findings=(FINDING,), patterns=None, history=()):
    """One proposal for vector_add from the prompt the loop builds (grounding full)."""
    from kopt.rewrite.llm import build_prompt, chat_messages

    source = VECTOR_ADD.read_text()
    return proposer.propose(chat_messages(build_prompt(source, PERF, list(history), list(findings), patterns)), source)


def test_garbage_replies_are_retried_then_the_good_one_is_taken(replay, tmp_path):
    from kopt.patterns import load_patterns
    from kopt.rewrite.llm import LLMProposer

    server = replay("garbage_then_good")
    proposer = LLMProposer(settings_for(server, tmp_path))
    patterns = [p for p in load_patterns() if p.id == "raise_small_block"]
    history = [{"n": 1, "hypothesis": "L1 untuned_config: autotune", "proposer": "recipe:autotune",
                "outcome": "incorrect", "message": "case {'n': 1}: 1 NaN", "speedup_initial": None}]
    reply = ask(proposer, patterns={FINDING.id: patterns}, history=history)
    assert reply.error is None and reply.source is not None
    assert "BLOCK_SIZE=2048, num_warps=8" in reply.source
    assert reply.summary.startswith("BLOCK_SIZE 2048")
    assert len(server.requests) == 3
    prompt = server.requests[0]["messages"][1]["content"]
    for needle in ("def add_kernel", "untuned_config", "Coalesce.cpp:40-60@3.6.0", "getNumElementsPerThread",
                   "raise_small_block", "round 1 [recipe:autotune]", "incorrect", "confidence 0.60",
                   "case {\"n\": 16777216}: 0.1234 ms, 61% of the memory-bound roofline", "may disagree"):
        assert needle in prompt, needle
    retry = server.requests[1]["messages"][-1]["content"]
    assert "no ```python code block" in retry
    assert "adds `TOLERANCES`" in server.requests[2]["messages"][-1]["content"]
    transcript = json.loads(reply.transcript)
    assert [m["role"] for m in transcript["messages"]].count("error") == 2


def test_unreachable_slow_and_broken_server_fails_the_round_with_the_reason(replay, tmp_path):
    from kopt.rewrite.llm import LLMProposer

    server = replay("unreachable")
    started = time.monotonic()
    reply = ask(LLMProposer(settings_for(server, tmp_path)))
    assert reply.source is None
    assert "3 attempts failed" in reply.error and "Timeout" in reply.error
    assert time.monotonic() - started < 15
    errors = [m["content"] for m in json.loads(reply.transcript)["messages"] if m["role"] == "error"]
    assert len(errors) == 3 and "InternalServerError" in errors[0] and "JSON" in errors[1]


def test_dead_port_is_unreachable_not_a_crash(tmp_path):
    from kopt.rewrite.llm import LLMProposer

    settings = load_settings(tmp_path, llm_provider="openai-like", llm_model="m", llm_base_url="http://127.0.0.1:9/v1",
                             llm_timeout_s=1.0)
    reply = ask(LLMProposer(settings))
    assert reply.source is None and "Connection" in reply.error


def test_optimize_with_the_llm_records_candidates_failures_and_transcripts(replay, tmp_path):
    """Two rounds through the real loop: a syntax-error reply thrice (proposer_error), then a wrong kernel
    (incorrect, caught by validation). Both recorded with their transcript artifacts."""
    from kopt.optimize import optimize
    from kopt.rounds.store import RoundsStore

    task = tmp_path / "vector_add.py"
    shutil.copy(VECTOR_ADD, task)
    server = replay("syntax_error")
    server.replies += REPLIES["wrong_result"]
    settings = settings_for(server, tmp_path)
    summary = optimize(task, rounds=2, proposer="llm", settings=settings)
    outcomes = [r["outcome"] for r in summary["rounds"]]
    assert outcomes == ["proposer_error", "incorrect"], summary["rounds"]
    assert summary["rounds"][0]["proposer"] == "llm:replay-model"
    assert "syntax error" in summary["rounds"][0]["message"]
    assert "incorrect" in summary["rounds"][1]["outcome"] and "elements outside" in summary["rounds"][1]["message"]
    store = RoundsStore(settings.state_dir)
    second = store.round(summary["run_id"], 2)
    assert "x - y" in store.get(second.candidate)
    transcript = json.loads(store.get(second.evidence["transcript"]))
    assert transcript["model"] == "replay-model"
    # the second prompt carries the first round's failure
    assert "proposer_error" in server.requests[-1]["messages"][1]["content"]
    assert summary["out"] is None  # nothing validated faster: nothing written


def test_a_reply_whose_last_code_block_is_never_closed_is_still_read():
    """A reply that ends inside its code block (cut off, or the model forgot the fence): the block runs to the end.
    A reply with no fence at all is still unusable."""
    from kopt.rewrite.llm import parse_reply

    current = (ROOT / "examples" / "vector_add.py").read_text()
    changed = current.replace("BLOCK_SIZE=1024", "BLOCK_SIZE=2048")
    assert changed != current
    source, summary = parse_reply(f"Change: bigger blocks\n```python\n{changed}", current)
    assert source.strip() == changed.strip() and summary == "bigger blocks"
    with pytest.raises(ValueError, match="no ```python code block"):
        parse_reply(f"Change: bigger blocks\n{changed}", current)
