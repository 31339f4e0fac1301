"""The LLM proposer: one candidate kernel file from a llama-index LLM (kopt.llm.make_llm: an
OpenAI-compatible server, OpenAI or Anthropic), grounded in the diagnosis.

The prompt holds the current kernel, the finding to act on with its evidence (compiler source and
pass notes from L4 included), the other findings, the catalog patterns that address it, and every
earlier round with its outcome, failures included. The reply must be the complete task file in one
```python block; it is parsed and checked like any candidate (reference, inputs, cases and tolerances
unchanged). An unreachable or slow server, or a garbage reply, is retried up to ATTEMPTS times; then
the round fails with the reason. Every message and reply goes into the transcript artifact.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

from kopt.diagnose.findings import Finding
from kopt.errors import KoptError
from kopt.rewrite.guard import PROTECTED, check_candidate

ATTEMPTS = 3
BACKOFF_S = 0.5
MAX_EVIDENCE = 6

SYSTEM = f"""You are a GPU kernel engineer optimizing a Triton kernel task file.
Rewrite the kernels and their launch to remove the diagnosed root cause; keep results within the task's tolerance.
Rules:
- Reply with one line starting "Change:" that says what you changed, then the COMPLETE file in ONE ```python block.
- Keep {', '.join(PROTECTED[:8])} exactly as they are: the candidate is judged by them.
- Keep the `entry` function's signature; it may launch different kernels.
- Do not repeat a change that an earlier round already tried and that failed or was slower."""


@dataclass
class LLMReply:
    source: str | None  # the candidate file, None when every attempt failed
    summary: str  # the reply's "Change:" line
    error: str | None  # why no candidate came back
    transcript: str  # JSON: the messages, replies and errors, in order


def build_prompt(source: str, finding: Finding, findings: list[Finding], patterns: list[Any],
                 history: list[dict[str, Any]]) -> str:
    """The user message: kernel, target finding with evidence, other findings, patterns, round history."""
    parts = ["## The task file (current best version)", "```python", source.rstrip(), "```", "",
             f"## The finding to act on: {finding.id} ({finding.level}, confidence {finding.confidence:.2f})",
             finding.message]
    if finding.kernel_lines:
        parts.append(f"Kernel lines: {', '.join(map(str, finding.kernel_lines))}")
    for ev in finding.evidence[:MAX_EVIDENCE]:
        where = f" @ {ev.location}" if ev.location else ""
        parts.append(f"- evidence [{ev.level} {ev.source}{where}]: {ev.summary}")
        excerpt = ev.data.get("excerpt") if isinstance(ev.data, dict) else None
        if excerpt:
            parts.append("  ```\n  " + "\n  ".join(str(excerpt).splitlines()[:12]) + "\n  ```")
    if finding.conditions:
        parts.append("A rewrite must satisfy: " + "; ".join(finding.conditions))
    others = [f for f in findings if f.id != finding.id]
    if others:
        parts += ["", "## Other findings"] + [f"- {f.id} ({f.level}, {f.confidence:.2f}): {f.message}" for f in others[:6]]
    if patterns:
        parts += ["", "## Known patterns for this finding"]
        for p in patterns[:3]:
            parts.append(f"- {p.id}: {p.title}")
            if p.recipe.get("guidance"):
                parts.append("  How: " + " ".join(str(p.recipe["guidance"]).split()))
            if p.preconditions:
                parts.append("  Preconditions: " + "; ".join(p.preconditions))
    parts += ["", "## Earlier rounds"]
    if history:
        for r in history:
            gain = f", x{r['speedup_initial']:.2f} vs initial" if r.get("speedup_initial") else ""
            parts.append(f"- round {r['n']} [{r['proposer']}] {r['hypothesis']} -> {r['outcome']}{gain}"
                         + (f": {r['message']}" if r.get("message") else ""))
    else:
        parts.append("- none yet")
    return "\n".join(parts)


def parse_reply(text: str, current: str) -> tuple[str, str]:
    """(source, summary) from a reply, or ValueError saying what is wrong with it."""
    blocks = re.findall(r"```(?:python|py)?[ \t]*\n(.*?)```", text, re.S)
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


class LLMProposer:
    """Asks the configured LLM for one candidate; see the module docstring for the retry policy."""

    def __init__(self, settings: Any, llm: Any = None):
        from kopt.llm import make_llm

        self.llm = llm or make_llm(settings)
        if self.llm is None:
            raise KoptError("no LLM configured: set llm_provider and llm_model (kopt.toml [llm] or KOPT_LLM_*)")
        self.model = settings.llm_model or getattr(self.llm, "model", "llm")

    def propose(self, source: str, finding: Finding, findings: list[Finding], patterns: list[Any],
                history: list[dict[str, Any]]) -> LLMReply:
        from llama_index.core.llms import ChatMessage

        messages = [ChatMessage(role="system", content=SYSTEM),
                    ChatMessage(role="user", content=build_prompt(source, finding, findings, patterns, history))]
        log: list[dict[str, Any]] = [{"role": m.role.value, "content": m.content} for m in messages]
        error = "no attempt made"
        for attempt in range(1, ATTEMPTS + 1):
            started = time.monotonic()
            try:
                reply = self.llm.chat(messages)
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
                messages += [ChatMessage(role="assistant", content=text), ChatMessage(role="user", content=retry)]
                log.append({"role": "user", "content": retry})
                continue
            return LLMReply(candidate, summary, None, json.dumps({"model": self.model, "messages": log}, indent=1))
        return LLMReply(None, "", f"{ATTEMPTS} attempts failed; last: {error}",
                        json.dumps({"model": self.model, "messages": log}, indent=1))
