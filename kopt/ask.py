"""`kopt ask`: answer a question about a kernel (or the compiler) from evidence, with citations.

With a kernel, the L3 facts for the asked line come first (what the lowered code does there and why),
then L4 explains the relevant findings from the pass notes and the compiler source. With an LLM
configured the answer is prose grounded only in that evidence, and the LLM first reranks the retrieved compiler
source (kopt.index.llm_rerank); without one it is the evidence itself, structured: facts, mechanism, cited source, fix.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kopt.errors import KoptError
from kopt.vocabulary import FINDING_IDS, Finding

SYSTEM = ("You explain why a Triton kernel (NVIDIA GPU or Ascend NPU) performs as it does. Use ONLY the facts and sources given; cite "
          "sources as [n]; say plainly when they do not answer the question. End with the concrete fix.")


@dataclass
class Answer:
    question: str
    kernel: str | None = None
    line: int | None = None
    facts: list[str] = field(default_factory=list)
    findings_text: list[str] = field(default_factory=list)
    mechanism: list[str] = field(default_factory=list)
    fix: list[str] = field(default_factory=list)
    citations: list[dict[str, Any]] = field(default_factory=list)
    symbols: list[str] = field(default_factory=list)  # compiler symbols the pass notes point at (path:symbol@version)
    prose: str | None = None
    llm: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_kernel_arg(value: str) -> tuple[Path, int | None]:
    """TASK[:LINE] -> (path, line)."""
    path, sep, line = value.rpartition(":")
    if sep and line.isdigit():
        return Path(path), int(line)
    if sep and Path(path).suffix == ".py":
        raise KoptError(f"{value}: {line!r} is not a line number (give TASK or TASK:LINE)")
    return Path(value), None


def _close(a: str, b: str) -> bool:
    return a == b or (min(len(a), len(b)) >= 5 and (a.startswith(b) or b.startswith(a)))


def relevance(question: str, finding: Finding) -> float:
    """Words the question shares with the finding's id and meaning (prefix match on stems), plus its confidence."""
    from kopt.diagnose.l4 import words

    asked = words(question)
    about = words(finding.id.replace("_", " ") + " " + FINDING_IDS[finding.id])
    return sum(1 for q in asked if any(_close(q, w) for w in about)) + finding.confidence


def _fact_lines(facts: list[dict[str, Any]]) -> list[str]:
    out = []
    for fact in facts:
        text = fact.get("summary") or f"{fact.get('kind', 'op')}: {fact.get('source', '')}"
        if fact.get("why"):
            text += "; narrower than 16 B because: " + "; ".join(fact["why"])
        if fact.get("stride_args"):
            text += "; stride args (known divisibility): " + ", ".join(
                f"{k}={v['divisibility']}" for k, v in fact["stride_args"].items())
        if fact.get("pointer_args"):
            text += "; pointer args (known divisibility): " + ", ".join(f"{k}={v}" for k, v in fact["pointer_args"].items())
        out.append(text)
    return out


def _checked_kernel(path: Path, line: int | None) -> Path:
    """The task file, resolved; a missing file or a line outside it is the user's error, said before any work."""
    from kopt.task import require_file

    require_file(path, "task file")
    path = path.resolve()
    n_lines = len(path.read_text().splitlines())
    if line is not None and not 1 <= line <= n_lines:
        raise KoptError(f"{path}:{line}: no such line; the file has {n_lines} lines")
    return path


def _kernel_evidence(answer: Answer, path: Path, line: int | None, lowering: _InBackground) -> list[Finding]:
    """L3 facts at the line into `answer`; returns the L3 findings there, most relevant first."""
    from kopt.diagnose.escalate import compile_failure
    from kopt.errors import CompileError

    try:
        report = lowering.result()
    except CompileError as exc:
        return [compile_failure(exc)]
    if line is None and report.findings:
        line = report.findings[0].kernel_lines[0] if report.findings[0].kernel_lines else None
    answer.line = line
    facts = report.facts_at(line, str(path)) if line else []
    answer.facts = _fact_lines(facts)
    if line and not facts:
        lines = sorted({int(k.rpartition(":")[2]) for k in report.lines})
        answer.notes.append(f"no load, store, dot or loop fact at line {line}; lines with facts: {lines}")
    here = [f for f in report.findings if line in f.kernel_lines] or report.findings
    return sorted(here, key=lambda f: -relevance(answer.question, f))


class _InBackground:
    """`fn()` in a daemon thread, its result (or exception) at `result()`. The compile is a wait on the compile
    worker's socket, so the index, the pass notes and the catalog load meanwhile; a daemon, so an interrupted
    ask does not wait for the compile to end."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._outcome: tuple[bool, Any] = (False, None)
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True, name="kopt-ask-compile")
        self._thread.start()

    def _run(self, fn: Callable[[], Any]) -> None:
        try:
            self._outcome = (True, fn())
        except BaseException as exc:  # handed to the caller, who decides what it means
            self._outcome = (False, exc)

    def result(self) -> Any:
        self._thread.join()
        ok, value = self._outcome
        if not ok:
            raise value
        return value


def _lower(path: Path, target: str | None) -> Any:
    """The L3 report of the task's kernels, compiled so that the task's code never runs in kopt's own process.
    Without the SASS of a kernel that uses no local memory (~0.4 s): there it only adds opcode counts to the
    findings' evidence, which an answer does not show; its LDL/STL, which can make a finding, are read."""
    from kopt.diagnose.targets import target_for

    return target_for(target).sandboxed_report(path, target, sass=False)


class _Served:
    """The index opened here, its searches answered by the index's warm search worker while one runs (a few ms a
    query; embedding here costs ~1 s for the first one); after one miss (none runs: that call starts one), here."""

    OPS = ("search", "lookup_symbol", "find_emitter")

    def __init__(self, index: Any, settings: Any) -> None:
        self._index, self._settings, self._worker_up = index, settings, True

    def __getattr__(self, name: str) -> Any:
        here = getattr(self._index, name)
        if name not in self.OPS:
            return here

        def call(*args: Any, **kwargs: Any) -> Any:
            from kopt.index import worker

            hits = worker.call(self._settings, name, *args, **kwargs) if self._worker_up else None
            self._worker_up = hits is not None
            return here(*args, **kwargs) if hits is None else hits

        return call


def _source_key(cite: str, symbol: str | None) -> str:
    """One citation per function: the parts a long function was chunked into are one source to a reader."""
    return f"{cite.partition(':')[0]}::{symbol}" if symbol else cite


def _cite(evidence, seen: set[str]) -> list[dict[str, Any]]:
    out = []
    for e in evidence:
        if e.source != "compiler_source" or not e.location:
            continue
        key = _source_key(e.location, e.data.get("symbol"))
        if key not in seen:
            seen.add(key)
            out.append({"cite": e.location, "symbol": e.data.get("symbol"), "corpus": e.data.get("corpus"),
                        "why": e.summary, "excerpt": e.data.get("excerpt", "")})
    return out


def ask(question: str, *, kernel: str | Path | None = None, line: int | None = None, settings: Any = None,
        index: Any = None, llm: Any = None, step: Callable[[str], None] | None = None) -> Answer:
    """Answer from evidence; `llm` None means the structured offline answer. `step` hears the name of each step
    as it starts (the CLI's spinner)."""
    from kopt.config import load_settings

    if not question.strip():
        raise KoptError("empty question")
    step = step or (lambda _text: None)
    settings = settings or load_settings()
    path = _checked_kernel(Path(kernel), line) if kernel else None
    lowering = _InBackground(lambda: _lower(path, settings.target)) if path else None  # first: the rest loads meanwhile
    from kopt.diagnose.escalate import catalog_patterns, open_index_or_problem
    from kopt.diagnose.l4 import compiler_corpus, escalate_l4, mechanism_of, notes_for
    from kopt.diagnose.targets import TARGETS
    from kopt.patterns import load_patterns
    from kopt.toolchain import target_family

    if index is None:
        step("opening the index")
        index, problem = open_index_or_problem(settings)
        if problem:
            answer_note = problem
        elif index is not None:
            index = _Served(index, settings)
    answer = Answer(question, str(kernel) if kernel else None, line)
    if index is None:
        answer.notes.append(answer_note)
    family = target_family(settings.target)
    compiler = TARGETS[family].compiler
    corpus, stale = compiler_corpus(index, compiler)
    if stale:
        answer.notes.append(stale)
    catalog = {p.id: p for p in load_patterns()}
    findings = []
    if path and lowering:
        step(f"compiling {path.name} and reading its lowered code")
        findings = _kernel_evidence(answer, path, line, lowering)
    seen: set[str] = set()
    for f in findings[:2]:
        step(f"reading the compiler's reasons for {f.id}")
        answer.findings_text.append(f"{f.id} ({f.confidence:.2f}): {f.message}")
        deep = escalate_l4(f, index, settings, family=compiler) if f.id != "compile_failure" else f
        answer.mechanism += [m for m in mechanism_of(deep) if m not in answer.mechanism]
        answer.fix += [c for c in deep.conditions if c not in answer.fix]
        answer.citations += _cite(deep.evidence, seen)
        for pid in f.patterns or catalog_patterns(f.id, set(), list(catalog.values()), family, f.message):
            if pid in catalog and f"pattern {pid}: {catalog[pid].title}" not in answer.fix:
                answer.fix.append(f"pattern {pid}: {catalog[pid].title}")
        for note in notes_for(f, corpus=compiler)[:1]:
            answer.symbols += [s for a in note.anchors[:4]
                               if (s := f"{a['path']}:{a['symbol']}@{note.version}") not in answer.symbols]
    if corpus:
        query = question + " " + " ".join(FINDING_IDS[f.id] for f in findings[:2])
        step("searching the compiler source" + (" (the LLM reranks)" if llm is not None else ""))
        try:
            hits = _retrieve(index, query, corpus, llm, answer.notes)
        except KoptError as exc:
            hits, _ = [], answer.notes.append(str(exc))
        for h in hits:
            key = _source_key(h.cite(), h.chunk.symbol)
            if key not in seen:
                seen.add(key)
                answer.citations.append({"cite": h.cite(), "symbol": h.chunk.symbol, "corpus": corpus,
                                         "why": "retrieved for the question", "excerpt": h.text[:400]})
    if index is not None and not path:  # a plain question: what kopt's pass notes say too, not the source alone
        step("searching the pass notes")
        _add_pass_notes(answer, index, question, seen)
    if llm is not None:
        from kopt.llm import complete

        step(f"asking {getattr(llm, 'model', 'the LLM')}")
        try:
            answer.prose = complete(llm, SYSTEM, _prompt(answer))
            answer.llm = getattr(llm, "model", type(llm).__name__)
        except KoptError as exc:  # the evidence is already gathered: keep it, say why there is no prose
            answer.notes.append(f"{str(exc).rstrip('.')}; this is the evidence answer without prose (--offline skips the LLM)")
    return answer


NOTE_HITS = 2  # pass-note sections a plain question shows beside its source hits


def _add_pass_notes(answer: Answer, index: Any, question: str, seen: set[str]) -> None:
    """The pass-note sections nearest the question: each one's heading joins the mechanism, its file the sources."""
    if "passes" not in {c["name"] for c in index.corpora()}:
        answer.notes.append("no pass notes in the index: run `kopt ingest passes` (offline, seconds)")
        return
    try:
        hits = index.search(question, corpus="passes", k=NOTE_HITS)
    except KoptError as exc:
        answer.notes.append(str(exc))
        return
    for h in hits:
        first = " ".join(h.text.splitlines()[2:]).strip()  # past the chunk's header and section title lines
        answer.mechanism.append(f"{h.chunk.qualname or h.chunk.symbol}: {first[:300]}")
        key = _source_key(h.cite(), h.chunk.symbol)
        if key not in seen:
            seen.add(key)
            answer.citations.append({"cite": h.cite(), "symbol": h.chunk.symbol, "corpus": "passes",
                                     "why": "pass note retrieved for the question", "excerpt": h.text[:400]})


def _retrieve(index: Any, query: str, corpus: str, llm: Any, notes: list[str]) -> list[Any]:
    """The top 3 in the learned ranker's order; with an LLM, the top 3 after it reranked the hybrid top RERANK_DEPTH."""
    if llm is None:
        return index.search(query, corpus=corpus, k=3, mode="hybrid+ltr")
    from kopt.index.llm_rerank import search_reranked

    hits, fallback = search_reranked(index, llm, query, 3, corpus=corpus)
    if fallback:
        notes.append(fallback)
    return hits


def _prompt(answer: Answer) -> str:
    parts = [f"Question: {answer.question}"]
    if answer.kernel:
        parts.append(f"Kernel: {answer.kernel} line {answer.line}")
    for title, items in (("Facts from the compiled kernel", answer.facts), ("Findings", answer.findings_text),
                         ("Mechanism (pass notes)", answer.mechanism), ("Conditions for a fix", answer.fix)):
        if items:
            parts.append(title + ":\n" + "\n".join(f"- {i}" for i in items))
    if answer.citations:
        parts.append("Sources:\n" + "\n".join(f"[{i}] {c['cite']} {c.get('symbol') or ''}\n{c.get('excerpt', '')[:600]}"
                                               for i, c in enumerate(answer.citations, 1)))
    return "\n\n".join(parts)
