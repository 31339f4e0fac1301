"""The LLM proposer: one candidate kernel file per round from a llama-index LLM (kopt.llm.make_llm: an
OpenAI-compatible server, OpenAI, Anthropic or the prompt exchange).

The prompt holds the current kernel, its measured time and roofline fraction per case, every earlier round
with its outcome (failures included) and, with grounding "full", kopt's diagnosis: each case's launches (grid,
arguments not 16-divisible, each kernel's share of the bytes), then the findings ranked with their confidence,
evidence (IR, profiler, compiler source), conditions and the catalog's guidance (the top three in full, the rest
one line each), framed as evidence to weigh, not an order (the model decides what limits the kernel most and may
disagree). With
grounding "none" the diagnosis is left out and everything else is the same. The reply must be the complete
task file in one ```python block; it is parsed and checked like any candidate (reference, inputs, cases and
tolerances unchanged). A live server that is unreachable, slow, or sends a garbage reply is retried up to
ATTEMPTS times; the prompt exchange is asked once per round (an unusable reply fails the round as
`unparsable`, and the next round's request says why). Every message and reply goes into the transcript.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any, Callable

from kopt.config import Settings
from kopt.errors import KoptError
from kopt.harness.guard import PROTECTED, check_candidate
from kopt.vocabulary import Finding

ATTEMPTS = 3
BACKOFF_S = 0.5
MAX_EVIDENCE = 4  # evidence lines per detailed finding
MAX_FINDINGS = 6
DETAILED_FINDINGS = 3  # findings shown with evidence and guidance; the next ones get one line each
GROUNDINGS = ("full", "none")
REPLY_RULE = "Reply with one line starting \"Change:\" that says what you changed and why, then the COMPLETE task " \
             "file in ONE ```python block."

SYSTEM = f"""You are a GPU kernel engineer optimizing a Triton kernel task file.
Rewrite the kernels and their launch to make the task faster on every case; keep results within the task's tolerance.
Rules:
- {REPLY_RULE}
- One round tries one change (one hypothesis).
- Keep {', '.join(PROTECTED[:8])} exactly as they are: the candidate is judged by them.
- Keep the `entry` function's signature; it may launch different kernels.
- The work is done in your own Triton kernels: outside `@triton.jit` code may only allocate, take views, query
  shapes, strides and dtypes, and launch kernels (no torch compute, no calls to the reference, no caching of
  results between calls: no functools cache decorators at all, launch-config helpers included; imports only of
  torch, triton, math, functools and typing). Anything else is rejected.
- Do not repeat a change that an earlier round already tried and that failed or was slower."""


@dataclass
class LLMReply:
    source: str | None  # the candidate file, None when no usable one came back
    summary: str  # the reply's "Change:" line
    error: str | None  # why no candidate came back
    transcript: str  # JSON: the messages, replies and errors, in order
    model: str = ""  # the model that answered (the exchange's reply names it)
    unparsable: bool = False  # a reply came, but held no usable task file (exchange only: no retry)


def performance_lines(perf: dict[str, Any]) -> list[str]:
    """Per case: the kernel time and the fraction of the roofline bound; or why they are unavailable."""
    if not perf.get("available"):
        return [f"- unavailable: {perf.get('reason') or 'not timed'}"]
    lines = []
    for c in perf["cases"]:
        ms = f"{c['ms']:.4f} ms" if c.get("ms") else "not timed"
        bound = f"{c['bound']}-bound " if c.get("bound") else ""
        roof = f", {100 * c['roofline']:.0f}% of the {bound}roofline" if c.get("roofline") else ", roofline unknown"
        lines.append(f"- case {json.dumps(c['case'], sort_keys=True)}: {ms}{roof}")
    return lines


def diagnosis_lines(findings: list[Finding], patterns: dict[str, list[Any]], case_facts: list[str] | None = None
                    ) -> list[str]:
    """kopt's diagnosis, evidence to weigh: per-case launch facts first (grid, 16-divisibility, each kernel's share
    of the bytes: what the LLM rounds otherwise worked out by hand), then the top findings with their evidence,
    conditions and guidance, each catalog pattern once, and the rest one line each. Catalog-match lines are left
    out (they say how a pattern was found, not what the kernel does)."""
    parts = ["## kopt's diagnosis (evidence to weigh, not an order)",
             "kopt's diagnosis ranked these findings, most likely first. It can be wrong. From this evidence and the "
             "timings above, decide what limits this kernel most and change that; you may disagree with the "
             "diagnosis (say why in your Change line)."]
    if case_facts:
        parts += ["", "### Per case: each launch's grid (programs per SM) and the arguments Triton cannot prove "
                  "16-divisible (an access whose address or mask uses one is not known 16-byte aligned)", *case_facts]
    if not findings:
        parts.append("- the diagnosis found nothing")
    shown: set[str] = set()
    for rank, f in enumerate(findings[:DETAILED_FINDINGS], 1):
        parts += ["", f"### {rank}. {f.id} ({f.level}, confidence {f.confidence:.2f})", f.message]
        if f.kernel_lines:
            parts.append(f"Kernel lines: {', '.join(map(str, f.kernel_lines))}")
        for ev in [e for e in f.evidence if not catalog_match(e)][:MAX_EVIDENCE]:
            where = f" @ {ev.location}" if ev.location else ""
            parts.append(f"- evidence [{ev.level} {ev.source}{where}]: {ev.summary}")
            excerpt = ev.data.get("excerpt") if isinstance(ev.data, dict) else None
            if excerpt:
                parts.append("  ```\n  " + "\n  ".join(str(excerpt).splitlines()[:12]) + "\n  ```")
        guides = patterns.get(f.id, [])[:2]
        said = {c for p in guides for c in p.preconditions}
        conditions = [c for c in f.conditions if c not in said]
        if conditions:
            parts.append("Conditions a rewrite must satisfy: " + "; ".join(conditions))
        for p in guides:
            if p.id in shown:
                parts.append(f"- known pattern {p.id}: see above")
                continue
            shown.add(p.id)
            parts.append(f"- known pattern {p.id}: {p.title}")
            if p.recipe.get("guidance"):
                parts.append("  How: " + " ".join(str(p.recipe["guidance"]).split()))
            if p.preconditions:
                parts.append("  Preconditions: " + "; ".join(p.preconditions))
    rest = findings[DETAILED_FINDINGS:MAX_FINDINGS]
    if rest:
        parts += ["", "### Lower-ranked findings"]
        parts += [f"- {rank}. {f.id} ({f.level}, confidence {f.confidence:.2f}): {f.message}"
                  for rank, f in enumerate(rest, DETAILED_FINDINGS + 1)]
    return parts


def catalog_match(ev: Any) -> bool:
    """Evidence that only says how the catalog matched (pattern strength, retrieval rank), not a validated record."""
    return ev.source == "pattern" and not (isinstance(ev.data, dict) and "wins" in ev.data)


def build_prompt(source: str, perf: dict[str, Any], history: list[dict[str, Any]],
                 findings: list[Finding] | None = None, patterns: dict[str, list[Any]] | None = None,
                 case_facts: list[str] | None = None) -> str:
    """The user message. `findings` None is grounding "none": no diagnosis at all (and no `case_facts`, which are
    the diagnosis' launch facts); the rest is the same."""
    parts = ["## The task file (current best version)", "```python", source.rstrip(), "```", "",
             "## Measured on this version (kernel time per case, fraction of the roofline bound)",
             *performance_lines(perf), ""]
    if findings is not None:
        parts += diagnosis_lines(findings, patterns or {}, case_facts) + [""]
    parts.append("## Earlier rounds")
    if history:
        for r in history:
            gain = f", x{r['speedup_initial']:.2f} vs initial" if r.get("speedup_initial") else ""
            parts.append(f"- round {r['n']} [{r['proposer']}] {r['hypothesis']} -> {r['outcome']}{gain}"
                         + (f": {r['message']}" if r.get("message") else ""))
    else:
        parts.append("- none yet")
    parts += ["", "## Your reply", REPLY_RULE]
    return "\n".join(parts)


def parse_reply(text: str, current: str) -> tuple[str, str]:
    """(source, summary) from a reply, or ValueError saying what is wrong with it."""
    blocks = re.findall(r"```(?:python|py)?[ \t]*\n(.*?)```", text, re.S)
    if not blocks:  # a reply cut off (or never closed) after its last fence: the rest of it is the block
        blocks = re.findall(r"```(?:python|py)?[ \t]*\n(.*)\Z", text, re.S)
    if not blocks:
        raise ValueError("no ```python code block in the reply")
    source = max(blocks, key=len).rstrip() + "\n"
    problem = check_candidate(current, source)
    if problem:
        raise ValueError(f"the code block is not a usable task file: {problem}")
    if source.strip() == current.strip():
        raise ValueError("the code block is the current file unchanged")
    match = re.search(r"^\s*Change:\s*(.+)$", text, re.M)
    summary = match.group(1).strip() if match else "LLM rewrite (no Change: line)"
    return source, summary[:300]


def chat_messages(user: str) -> list[dict[str, str]]:
    """The round's messages: the shared system prompt (identical for every grounding), then the user message."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


class LLMProposer:
    """Asks the configured LLM for one candidate; see the module docstring for the retry policy."""

    def __init__(self, settings: Settings, llm: Any = None):
        from kopt.llm import make_llm

        self.llm = llm or make_llm(settings)
        if self.llm is None:
            raise KoptError("no LLM configured: set llm_provider and llm_model (kopt.toml [llm] or KOPT_LLM_*)")
        self.model = settings.llm_model or getattr(self.llm, "model", "llm")

    def propose(self, messages: list[dict[str, str]], source: str, context: dict[str, Any] | None = None,
                on_request: Callable[[dict[str, Any]], None] | None = None) -> LLMReply:
        """One candidate for `source` from `messages` (chat_messages). The exchange's ExchangeWaiting passes
        through; `context` and `on_request` are the exchange's (the request's run and round; record it first)."""
        if hasattr(self.llm, "exchange_chat"):
            return self._exchange(messages, source, context, on_request)
        from llama_index.core.llms import ChatMessage

        chat = [ChatMessage(role=m["role"], content=m["content"]) for m in messages]
        log: list[dict[str, Any]] = [dict(m) for m in messages]
        error = "no attempt made"
        for attempt in range(1, ATTEMPTS + 1):
            started = time.monotonic()
            try:
                reply = self.llm.chat(chat)
                text = reply.message.content or ""
            except Exception as exc:  # unreachable, timed out, HTTP error, unparsable response
                error = f"attempt {attempt}: the LLM call failed: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
                log.append({"role": "error", "content": error, "seconds": round(time.monotonic() - started, 2)})
                time.sleep(BACKOFF_S * attempt)
                continue
            log.append({"role": "assistant", "content": text, "seconds": round(time.monotonic() - started, 2)})
            try:
                candidate, summary = parse_reply(text, source)
            except ValueError as exc:
                error = f"attempt {attempt}: unusable reply: {exc}"
                log.append({"role": "error", "content": error})
                retry = (f"Your reply was not usable: {exc}. Reply again: a 'Change:' line, then the complete task file "
                         "in one ```python block.")
                chat += [ChatMessage(role="assistant", content=text), ChatMessage(role="user", content=retry)]
                log.append({"role": "user", "content": retry})
                continue
            return LLMReply(candidate, summary, None, self._transcript(self.model, log), self.model)
        return LLMReply(None, "", f"{ATTEMPTS} attempts failed; last: {error}", self._transcript(self.model, log),
                        self.model)

    def _exchange(self, messages: list[dict[str, str]], source: str, context: dict[str, Any] | None,
                  on_request: Callable[[dict[str, Any]], None] | None) -> LLMReply:
        """One request, one reply: an unusable reply fails the round (`unparsable`), it is not asked again."""
        reply = self.llm.exchange_chat(messages, context, on_request)
        log: list[dict[str, Any]] = [dict(m) for m in messages] + [{"role": "assistant", "content": reply.text}]
        exchange = {"request_id": reply.request_id, "request": str(reply.request), "reply": str(reply.reply)}
        try:
            candidate, summary = parse_reply(reply.text, source)
        except ValueError as exc:
            log.append({"role": "error", "content": f"unusable reply: {exc}"})
            return LLMReply(None, "", f"unusable reply: {exc}", self._transcript(reply.model, log, exchange),
                            reply.model, unparsable=True)
        return LLMReply(candidate, summary, None, self._transcript(reply.model, log, exchange), reply.model)

    @staticmethod
    def _transcript(model: str, log: list[dict[str, Any]], exchange: dict[str, Any] | None = None) -> str:
        return json.dumps({"model": model, "messages": log, **({"exchange": exchange} if exchange else {})}, indent=1)
