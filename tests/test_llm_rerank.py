"""The LLM rerank stage (kopt.index.llm_rerank) through the real llama-index OpenAI-compatible client against a
loopback server (conftest's llm_server), over a real on-disk index of the fixture corpus: the reply's order,
the fallbacks to hybrid order, `kopt eval retrieval --modes hybrid,hybrid+llm` and `ask`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from gitrepo import commit_all

from kopt.config import Settings, load_settings
from kopt.index import open_index
from kopt.index.llm_rerank import RERANK_DEPTH, SHOWN_LINES, rerank
from kopt.llm import make_llm

FIXTURES = Path(__file__).parent / "fixtures" / "corpus"
QUESTION = "which function decides the access order for coalescing"


@pytest.fixture(scope="module")
def index_path(tmp_path_factory):
    """The fixture corpus (22 chunks) ingested once as `triton` into an Edge index on disk."""
    from kopt.ingest import ingest_corpus

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tmp = tmp_path_factory.mktemp("rerank")
    checkout = tmp / "triton"
    shutil.copytree(FIXTURES, checkout, ignore=shutil.ignore_patterns("passes", "patterns"))
    commit_all(checkout)
    ingest_corpus("triton", Settings(workspace=tmp, index_path=tmp / "index"), path=checkout, progress=False)
    return tmp / "index"


def hybrid_hits(index_path: Path, query: str, k: int = RERANK_DEPTH) -> list:
    index = open_index(Settings(index_path=index_path))
    try:
        return index.search(query, corpus="triton", k=k)
    finally:
        index.close()


def llm_for(url: str, workspace: Path):
    return make_llm(load_settings(workspace, llm_provider="openai-like", llm_model="replay-model", llm_base_url=url,
                                  llm_api_key="test", llm_timeout_s=2.0))


def names(hits) -> list[str]:
    return [h.cite() for h in hits]


def test_scored_hits_come_first_by_relevance_then_the_rest_in_hybrid_order(index_path, llm_server, tmp_path):
    hits = hybrid_hits(index_path, QUESTION)
    assert len(hits) == RERANK_DEPTH
    server = llm_server([
        # out of range, zero and repeated numbers are dropped; 7 and 2 tie at 6 and keep their hybrid order
        {"content": "Sure.\nDoc: 15, Relevance: 9\nDoc: 9, Relevance: 8\nDoc: 0, Relevance: 10\nDoc: 21, Relevance: 10\n"
                    "Doc: 7, Relevance: 6\nDoc: 9, Relevance: 1\nDoc: 2, Relevance: 6"},
    ])
    reranked, reason = rerank(llm_for(server.url, tmp_path), QUESTION, hits)
    assert reason is None
    first = [hits[14], hits[8], hits[1], hits[6]]  # doc 15, then 9, then 2 and 7 (tied)
    assert names(reranked) == names(first + [h for h in hits if h not in first])
    assert len(server.requests) == 1  # every candidate in one call: their relevances are judged side by side
    prompt = server.requests[0]["messages"][-1]["content"]
    assert QUESTION in prompt and f"Doc {RERANK_DEPTH}:" in prompt and f"Doc {RERANK_DEPTH + 1}:" not in prompt
    assert f"path: {hits[0].meta['path']}:" in prompt and f"symbol: {hits[0].meta.get('qualname') or hits[0].meta['symbol']}" in prompt
    long_chunk = next(h for h in hits if len(h.text.splitlines()) > SHOWN_LINES)
    assert long_chunk.text.splitlines()[SHOWN_LINES] not in prompt  # only the first lines are shown


@pytest.mark.parametrize("replies, reason", [
    ([{"content": "The third candidate looks best."}], "no 'Doc: N, Relevance: R' line"),
    ([{"status": 500, "body": "{\"error\": \"overloaded\"}"}], "InternalServerError"),
    (None, "APIConnectionError"),  # nothing listens on the port
])
def test_a_failing_llm_keeps_the_hybrid_order_and_says_why(index_path, llm_server, tmp_path, replies, reason):
    hits = hybrid_hits(index_path, QUESTION)
    url = llm_server(replies).url if replies else "http://127.0.0.1:9/v1"
    reranked, why = rerank(llm_for(url, tmp_path), QUESTION, hits)
    assert names(reranked) == names(hits)
    assert reason in why and "hybrid order" in why and "\n" not in why and "Traceback" not in why


def test_eval_retrieval_measures_hybrid_llm_and_counts_fallbacks(index_path, llm_server, tmp_path):
    from click.testing import CliRunner

    from kopt.cli import cli

    hits = hybrid_hits(index_path, QUESTION)
    answer = next(i for i, h in enumerate(hits) if h.meta["path"] == "docs/guide.md" and i >= 2)
    assert all(h.meta["path"] != "docs/guide.md" for h in hits[:2])  # hybrid ranks the gold file below 2
    gold = tmp_path / "gold.yaml"
    gold.write_text(yaml.safe_dump({"questions": [
        {"id": f"q{n}", "question": q, "category": "mechanism", "uses_identifiers": False,
         "gold": [{"corpus": "triton", "path": "docs/guide.md", "symbol": "guide", "lines": [1, 12]}]}
        for n, q in enumerate((QUESTION, QUESTION + " in the fixture pass"))]}))
    # the warm-up query (q0 again) fails and is not counted; q0 is reranked; q1 gets garbage and is counted
    server = llm_server([{"status": 500, "body": "warm-up"}, {"content": f"Doc: {answer + 1}, Relevance: 9"},
                         {"content": "no idea"}])
    env = {"KOPT_INDEX_PATH": str(index_path), "KOPT_LLM_PROVIDER": "openai-like", "KOPT_LLM_MODEL": "replay-model",
           "KOPT_LLM_BASE_URL": server.url, "KOPT_LLM_TIMEOUT_S": "2"}
    result = CliRunner().invoke(cli, ["eval", "retrieval", "--gold", str(gold), "--corpora", "triton",
                                      "--modes", "hybrid,hybrid+llm", "--json"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    modes = json.loads(result.output)["modes"]
    assert modes["hybrid"]["per_question"][0]["file_rank"] == answer + 1
    assert modes["hybrid+llm"]["per_question"][0]["file_rank"] == 1
    assert modes["hybrid+llm"]["per_question"][1]["file_rank"] == modes["hybrid"]["per_question"][1]["file_rank"]
    assert modes["hybrid+llm"]["rerank_fallbacks"] == 1 and modes["hybrid+llm"]["llm"] == "replay-model"
    assert "no 'Doc: N, Relevance: R' line" in modes["hybrid+llm"]["rerank_fallback_reasons"][0]
    assert "rerank_fallbacks" not in modes["hybrid"]
    assert len(server.requests) == 3  # one call per question, the warm-up's too

    table = CliRunner().invoke(cli, ["eval", "retrieval", "--gold", str(gold), "--corpora", "triton",
                                     "--modes", "hybrid+llm", "--k", "5"], env={**env, "KOPT_LLM_BASE_URL": "http://127.0.0.1:9/v1"},
                               catch_exceptions=False)
    assert table.exit_code == 0, table.output
    assert "the LLM (replay-model) failed on 2 of 2 questions" in " ".join(table.output.split())


def test_eval_through_the_prompt_exchange_waits_then_scores_the_replies(index_path, tmp_path):
    """A batch eval with the exchange as the LLM: the first run writes one request per question and says they wait;
    once replies are written the same command scores them and names the model that replied."""
    from click.testing import CliRunner

    from kopt.cli import cli

    hits = hybrid_hits(index_path, QUESTION)
    answer = next(i for i, h in enumerate(hits) if h.meta["path"] == "docs/guide.md" and i >= 2)
    gold = tmp_path / "gold.yaml"
    gold.write_text(yaml.safe_dump({"questions": [
        {"id": "q", "question": QUESTION, "category": "mechanism", "uses_identifiers": False,
         "gold": [{"corpus": "triton", "path": "docs/guide.md", "symbol": "guide", "lines": [1, 12]}]}]}))
    exchange = tmp_path / "exchange"
    env = {"KOPT_INDEX_PATH": str(index_path), "KOPT_LLM_PROVIDER": "exchange", "KOPT_LLM_EXCHANGE_DIR": str(exchange)}
    args = ["eval", "retrieval", "--gold", str(gold), "--corpora", "triton", "--modes", "hybrid+llm"]
    first = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    assert "1 of 1 questions wait for a reply in the prompt exchange" in " ".join(first.output.split())
    (request,) = exchange.glob("*.request.json")
    assert f"Doc {RERANK_DEPTH}:" in json.loads(request.read_text())["messages"][-1]["content"]
    request.with_name(request.name.replace(".request.json", ".reply.md")).write_text(
        f"model: replier-9\nDoc: {answer + 1}, Relevance: 10\n")
    second = CliRunner().invoke(cli, [*args, "--json"], env=env, catch_exceptions=False)
    mode = json.loads(second.output)["modes"]["hybrid+llm"]
    assert mode["per_question"][0]["file_rank"] == 1 and mode["rerank_waiting"] == 0 and mode["rerank_fallbacks"] == 0
    assert mode["llm"] == "exchange: replier-9"


def test_eval_hybrid_llm_without_an_llm_is_a_one_line_error(tmp_path):
    gold = tmp_path / "gold.yaml"
    gold.write_text(yaml.safe_dump({"questions": [
        {"id": "q", "question": QUESTION, "category": "mechanism", "uses_identifiers": False,
         "gold": [{"corpus": "triton", "path": "docs/guide.md", "symbol": "guide", "lines": [1, 12]}]}]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOPT_LLM_")}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), KOPT_HOME=str(tmp_path / "home"))
    run = subprocess.run([sys.executable, "-m", "kopt.cli", "eval", "retrieval", "--gold", str(gold), "--corpora",
                          "triton", "--modes", "hybrid,hybrid+llm"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 1
    assert run.stderr.startswith("kopt: error: mode hybrid+llm needs an LLM") and run.stderr.count("\n") == 1
    assert "KOPT_LLM_PROVIDER" in run.stderr and "KOPT_LLM_BASE_URL" in run.stderr


@pytest.mark.parametrize("reranked", [True, False])
def test_ask_cites_the_reranked_top_source(index_path, llm_server, tmp_path, reranked):
    from kopt.ask import ask

    question = "where is the zebra stride error emitted"
    hits = hybrid_hits(index_path, question + " ")  # ask's query: the question plus the findings' meanings (none)
    promoted = next(i for i, h in enumerate(hits[:10]) if i >= 3 and h.cite() != hits[0].cite())
    rerank_replies = [{"content": f"Doc: {promoted + 1}, Relevance: 10\nDoc: 1, Relevance: 3"}]
    server = llm_server((rerank_replies if reranked else [{"status": 503, "body": "down"}])
                        + [{"content": "It is emitted by the pattern [1]."}])
    settings = load_settings(tmp_path, index_path=index_path, llm_provider="openai-like", llm_model="replay-model",
                             llm_base_url=server.url, llm_timeout_s=2.0)
    index = open_index(settings)
    try:
        answer = ask(question, settings=settings, index=index, llm=make_llm(settings))
    finally:
        index.close()
    expected = hits[promoted] if reranked else hits[0]
    assert answer.citations[0]["cite"] == expected.cite()
    assert answer.prose == "It is emitted by the pattern [1]."
    fallbacks = [n for n in answer.notes if "LLM rerank" in n]
    assert (fallbacks == []) if reranked else ("InternalServerError" in fallbacks[0] and "hybrid order" in fallbacks[0])


def test_search_command_reranks_through_the_prompt_exchange_and_needs_an_llm(index_path, tmp_path):
    """`kopt search --mode hybrid+llm` (a real subprocess): hybrid order and a note while the request waits, the
    LLM's order once its reply is written, and one clear error when no LLM is configured."""
    answer = next(i for i, h in enumerate(hybrid_hits(index_path, QUESTION)) if h.meta["path"] == "docs/guide.md")
    assert answer >= 1  # hybrid does not rank it first
    exchange = tmp_path / "exchange"
    env = {**os.environ, "KOPT_INDEX_PATH": str(index_path), "KOPT_SEARCH_WORKER": "0", "KOPT_LLM_PROVIDER": "exchange",
           "KOPT_LLM_EXCHANGE_DIR": str(exchange)}
    command = [sys.executable, "-m", "kopt.cli", "search", QUESTION, "--corpus", "triton", "--mode", "hybrid+llm",
               "--k", "3", "--json"]

    def top(done) -> str:
        assert done.returncode == 0, done.stderr
        hits = json.loads(done.stdout)["items"]
        assert len(hits) == 3
        return hits[0]["meta"]["path"]

    waiting = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert top(waiting) != "docs/guide.md" and "waiting for the LLM reply" in waiting.stderr
    (request,) = exchange.glob("*.request.json")
    request.with_name(request.name.replace(".request.json", ".reply.md")).write_text(
        f"model: replay-model\nDoc: {answer + 1}, Relevance: 9\n")
    replied = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert top(replied) == "docs/guide.md" and replied.stderr.strip() == ""

    del env["KOPT_LLM_PROVIDER"]
    unset = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    said = unset.stdout + unset.stderr  # with --json the error is a JSON object on stdout
    assert unset.returncode != 0 and "mode hybrid+llm needs an LLM" in said and "Traceback" not in said
