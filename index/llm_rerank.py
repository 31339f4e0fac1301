"""An LLM reads the top hybrid hits and puts the code that decides the question first.

Why: on fresh questions about parts of the compiler our notes do not cover, hybrid retrieval stays near file
MRR 0.5 (evals/retrieval/MISSES.md, update 12): the answer is mostly in the top 20, among its neighbours, and
telling the function that decides apart from the ones that merely share its words takes a reader of code. No
cross-encoder is installable offline, so the reader is the configured LLM (kopt.llm.make_llm), through
llama-index's LLMRerank. All candidates go in one call, so their relevances are judged side by side (and the
prompt exchange answers a question with one reply). It runs only when an LLM is configured; when the LLM fails,
the hybrid order stands.
"""

from __future__ import annotations

import re
from typing import Any

from kopt.index.hits import Hit
from kopt.llm import ExchangeWaiting

LLM_MODE = "hybrid+llm"  # the search mode: the hybrid top RERANK_DEPTH, reordered by the configured LLM
RERANK_DEPTH = 20  # hybrid hits the LLM reads, in one call
SHOWN_LINES = 30  # lines of each chunk the LLM sees

PROMPT = """Below are numbered candidates from a GPU compiler's source (Triton: Python front end, MLIR passes and \
analyses, lowering to LLVM and PTX) and from notes about it; each shows its path, its symbol and its first lines.
Then comes a question from a kernel performance engineer.

Choose the candidates whose code decides or does what the question asks about: the function that makes the \
decision, performs the rewrite or emits the message. Rank lower code that only calls it, tests it, declares it \
or shares its words. Leave out candidates that do not help answer the question.

Answer with one line per chosen candidate, best first, relevance from 1 (barely) to 10 (decides it), in exactly \
this format and nothing else:
Doc: 4, Relevance: 9
Doc: 1, Relevance: 5

{context_str}

Question: {query_str}
Answer:
"""

_CHOICE = re.compile(r"\bDoc(?:ument)?\s*:?\s*(\d+)\s*,\s*Relevance\s*:?\s*(\d+(?:\.\d+)?)", re.IGNORECASE)


def configured_llm(settings: Any) -> Any:
    """The configured LLM that mode hybrid+llm reranks with; none configured is the user's to fix."""
    from kopt.errors import KoptError
    from kopt.llm import make_llm

    llm = make_llm(settings)
    if llm is None:
        raise KoptError(f"mode {LLM_MODE} needs an LLM: set KOPT_LLM_PROVIDER (openai-like, openai, anthropic or "
                        "exchange), KOPT_LLM_MODEL and, for openai-like, KOPT_LLM_BASE_URL (or [llm] provider, model, "
                        "base_url in kopt.toml)")
    return llm


def parse_choices(reply: str, num_choices: int) -> tuple[list[int], list[float]]:
    """Doc numbers and relevances of the reply's `Doc: N, Relevance: R` lines; a number outside 1..num_choices
    or seen before (the reply lists best first) is dropped."""
    docs: list[int] = []
    relevances: list[float] = []
    for doc, relevance in _CHOICE.findall(reply):
        if 1 <= int(doc) <= num_choices and int(doc) not in docs:
            docs.append(int(doc))
            relevances.append(float(relevance))
    return docs, relevances


def _candidate(hit: Hit) -> str:
    c = hit.chunk
    name = c.qualname or c.symbol or "-"
    head = "\n".join(hit.text.splitlines()[:SHOWN_LINES])
    return f"path: {c.path}:{c.start_line}-{c.end_line}\nsymbol: {name}\n{head}"


def _numbered(nodes: list[Any]) -> str:
    return "\n\n".join(f"Doc {n}:\n{node.get_content()}" for n, node in enumerate(nodes, start=1))


def rerank(llm: Any, query: str, hits: list[Hit]) -> tuple[list[Hit], str | None]:
    """(the hits reordered, None), or (the hits as given, a one-line reason) when the LLM failed or named none.

    Within the first RERANK_DEPTH hits, the ones the LLM scored come first by its relevance (ties in hybrid order),
    then the rest in hybrid order; hits past the depth keep their place after them.
    """
    from llama_index.core.postprocessor import LLMRerank
    from llama_index.core.prompts import PromptTemplate
    from llama_index.core.schema import NodeWithScore, TextNode

    head, tail = hits[:RERANK_DEPTH], hits[RERANK_DEPTH:]
    if not head:
        return hits, None
    nodes = [NodeWithScore(node=TextNode(id_=str(i), text=_candidate(h)), score=h.score) for i, h in enumerate(head)]
    # a chat model is handed the candidates as context_messages, a completion model as context_str: one text either way
    prompt = PromptTemplate(PROMPT, template_var_mappings={"context_messages": "context_str"})
    reranker = LLMRerank(llm=llm, choice_select_prompt=prompt, choice_batch_size=len(nodes), top_n=len(nodes),
                         format_node_batch_fn=_numbered, parse_choice_select_answer_fn=parse_choices)
    model = getattr(llm, "model", type(llm).__name__)
    try:
        scored = reranker.postprocess_nodes(nodes, query_str=query)
    except ExchangeWaiting as exc:  # the prompt exchange: the request is written; its reply comes later
        return hits, f"LLM rerank: {exc}; hits are in hybrid order"
    except Exception as exc:  # network, HTTP, timeout and provider errors all leave the hybrid order
        detail = " ".join(str(exc).split())[:200]
        return hits, f"LLM rerank failed ({model}: {type(exc).__name__}: {detail}); hits are in hybrid order"
    if not scored:
        return hits, f"LLM rerank ({model}) replied with no 'Doc: N, Relevance: R' line; hits are in hybrid order"
    relevance = {int(n.node.node_id): n.score or 0.0 for n in scored}
    first = sorted(relevance, key=lambda i: (-relevance[i], i))
    rest = [i for i in range(len(head)) if i not in relevance]
    return [head[i] for i in first + rest] + tail, None


def search_reranked(index: Any, llm: Any, query: str, k: int, **search: Any) -> tuple[list[Hit], str | None]:
    """The top k after the LLM reranked the hybrid top max(k, RERANK_DEPTH); the reason too when it fell back."""
    hits, reason = rerank(llm, query, index.search(query, k=max(k, RERANK_DEPTH), **search))
    return hits[:k], reason
