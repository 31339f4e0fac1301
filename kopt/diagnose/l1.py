"""L1 pattern triage: the source signals (l1_detectors.py) matched against the pattern catalog.

L1 reads only the task file's Python source (no compile, no GPU), so it runs first and in
milliseconds. Each signal points at kernel lines; signals become Findings (the registry, kopt/signals.py,
says which finding, how confident and under what condition) whose `patterns` are the catalog entries that
list the signal (or the finding) as a symptom, ranked by how well the whole kernel matches them and by their
recorded win rate. An index, when given, adds similar patterns.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from kopt.diagnose.l1_detectors import Signal, detect_signals
from kopt.errors import KoptError
from kopt.patterns import Pattern, load_patterns
from kopt.signals import SIGNALS
from kopt.vocabulary import Evidence, Finding

# Kernel kinds (from the ops a kernel uses) -> the catalog's applies_to words they match.
KIND_WORDS: dict[str, set[str]] = {
    "dot": {"matmul", "batched_matmul", "attention", "linear", "conv", "small_matmul", "grouped_gemm",
            "split_k_matmul", "matmul_epilogue", "reduction_over_k", "fused_kernels"},
    "reduce": {"reduction", "norm", "softmax", "layernorm", "rmsnorm", "logsumexp", "cross_entropy", "loss",
               "norm_statistics", "dot_product", "rowwise", "fused_kernels"},
    "scan": {"scan"},
    "atomic": {"histogram", "scatter_add", "scatter", "reduction", "split_k_matmul"},
    "trans": {"transpose", "permute", "conv_layout_change"},
    "elementwise": {"elementwise", "activation", "copy", "broadcast", "gather", "elementwise_with_reuse",
                    "embedding", "large_tensors", "fused_kernels"},
}
PROVEN_CONFIDENCE = 0.7  # a proven pattern (won >= 2 and half its tries) on this kind of kernel: grounded at L1


def fits(pattern: Pattern, kinds: set[str]) -> bool:
    """Whether a pattern speaks about a kernel of these kinds: an applies_to word of theirs, a kind's own name (what
    synthesized L1 shortcuts name: the kinds they were validated on), or `any`."""
    words = set(kinds).union(*(KIND_WORDS[k] for k in kinds))
    return "any" in pattern.applies_to or bool(words & set(pattern.applies_to))


def _rank(patterns: list[Pattern], finding_id: str, own: set[str], present: set[str], kinds: set[str]
          ) -> list[tuple[float, float, Pattern]]:
    """(score, strength, pattern) best first.

    Strength: the finding's own signals are the pattern's symptoms (0.5), how many of the pattern's source
    symptoms the kernel shows (0.3), the finding id is the pattern's (0.2), scaled down when the pattern is
    for another kind of kernel. The score weighs strength by the recorded win rate and prefers patterns
    with a deterministic recipe (low risk) over guidance-only ones."""
    ranked = []
    for p in patterns:
        sources = set(p.source_signals)
        if not (own & sources or finding_id in p.finding_ids):
            continue
        coverage = len(sources & present) / len(sources) if sources else 0.0
        strength = (1.0 if fits(p, kinds) else 0.25) * (
            0.5 * bool(own & sources) + 0.3 * coverage + 0.2 * (finding_id in p.finding_ids))
        if strength >= 0.3:
            ranked.append((strength * (0.5 + p.win_rate) * (1.1 if p.recipe_name else 1.0), strength, p))
    ranked.sort(key=lambda t: (-t[0], t[2].id))
    return ranked


def _where(pattern: Pattern) -> str:
    """Where a pattern's file is: the shipped catalog's, or the synthesized one under KOPT_HOME."""
    synthesized = pattern.provenance["kind"] == "synthesized" and pattern.path
    return str(pattern.path) if synthesized else f"corpora/patterns/{pattern.id}.yaml"


def _findings_for_kernel(kernel: str, signals: list[Signal], kinds: set[str], patterns: list[Pattern],
                         path: str) -> list[Finding]:
    present = {s.name for s in signals}
    by_finding: dict[str, list[Signal]] = {}
    for signal in signals:
        by_finding.setdefault(SIGNALS[signal.name].finding, []).append(signal)
    findings = []
    for finding_id, group in by_finding.items():
        own = {s.name for s in group}
        ranked = _rank(patterns, finding_id, own, present, kinds)
        best = ranked[0][1] if ranked else 0.0
        base = max(SIGNALS[s.name].confidence * s.weight for s in group)
        evidence = [Evidence("L1", "source", sig.detail, {"signal": sig.name, "kernel": kernel, **sig.data},
                             f"{path}:{sig.lines[0]}") for sig in group]
        conditions = [SIGNALS[n].condition for n in sorted(own) if SIGNALS[n].condition]
        confidence = base * (0.6 + 0.4 * best)
        if ranked:
            top = ranked[0][2]
            evidence.append(Evidence("L1", "pattern", f"matches pattern {top.id} ({top.title}), strength {best:.2f}",
                                     {"pattern": top.id, "strength": round(best, 2), "win_rate": round(top.win_rate, 2)},
                                     _where(top)))
            conditions += [c for c in top.preconditions if c not in conditions]
            if top.proven and fits(top, kinds):  # validated rounds vouch for acting without a profile
                confidence = max(confidence, PROVEN_CONFIDENCE)
                evidence.append(Evidence("L1", "pattern", f"{top.id} won {top.stats['wins']} of {top.stats['tries']} "
                                         f"validated tries on {'/'.join(sorted(kinds))} kernels",
                                         {"pattern": top.id, "wins": top.stats["wins"], "tries": top.stats["tries"]},
                                         _where(top)))
        findings.append(Finding(
            id=finding_id, level="L1",
            message=f"{kernel}: " + "; ".join(dict.fromkeys(s.detail for s in group)),
            confidence=round(confidence, 2), evidence=evidence,
            kernel_lines=sorted({ln for s in group for ln in s.lines}), conditions=conditions,
            patterns=[p.id for _, _, p in ranked[:5]],
        ))
    return findings


def _retrieved(index: Any, kernel: str, kinds: set[str], signals: list[Signal], description: str,
               patterns: dict[str, Pattern], findings: list[Finding], line: int | None) -> None:
    """Add index hits over the pattern corpus: to a matching finding's patterns, or as a weak new finding."""
    seen = "; ".join(dict.fromkeys(SIGNALS[s.name].means for s in signals))
    query = f"{description} Triton {' '.join(sorted(kinds))} kernel {kernel}. {seen}".strip()
    try:
        hits = index.search(query, corpus="patterns", k=5)
    except KoptError:
        return  # no pattern corpus ingested: L1 stands on the catalog alone
    for rank, hit in enumerate(hits):
        pattern = patterns.get(hit.chunk.symbol)
        if pattern is None or not pattern.finding_ids or not fits(pattern, kinds):
            continue
        mine = [f for f in findings if f.id in pattern.finding_ids]
        if mine:
            if pattern.id not in mine[0].patterns:
                mine[0].patterns.append(pattern.id)
            continue
        findings.append(Finding(
            id=pattern.finding_ids[0], level="L1",
            message=f"{kernel}: similar to pattern {pattern.id} ({pattern.title})",
            confidence=round(0.3 - 0.04 * rank, 2),
            evidence=[Evidence("L1", "pattern", f"retrieved for the kernel's description (rank {rank + 1})",
                               {"pattern": pattern.id, "score": float(getattr(hit, "score", 0.0)), "query": query},
                               _where(pattern))],
            kernel_lines=[line] if line else [], conditions=list(pattern.preconditions), patterns=[pattern.id]))


def triage(task: Any, *, index: Any = None, patterns: list[Pattern] | None = None) -> list[Finding]:
    """L1 findings for a task (an object with `.path`, or a path to the task file), best first."""
    from kopt.task import read_source

    path = Path(getattr(task, "path", task))
    source = read_source(path)  # unreadable, empty, binary or not UTF-8: one TaskError line
    try:
        signals, kinds = detect_signals(source, str(path))
    except SyntaxError as exc:
        return [Finding("compile_failure", "L1", f"{path}:{exc.lineno}: {exc.msg}", 1.0,
                        [Evidence("L1", "source", f"SyntaxError: {exc.msg}", {"text": (exc.text or "").strip()},
                                  f"{path}:{exc.lineno}")], [exc.lineno or 0])]
    catalog = load_patterns() if patterns is None else patterns
    description = (ast.get_docstring(ast.parse(source)) or "").split("\n")[0]
    findings: list[Finding] = []
    for kernel, kernel_kinds in kinds.items():
        mine = [s for s in signals if s.kernel == kernel]
        found = _findings_for_kernel(kernel, mine, kernel_kinds, catalog, str(path))
        if index is not None:
            first_line = min((ln for s in mine for ln in s.lines), default=None)
            _retrieved(index, kernel, kernel_kinds, mine, description, {p.id: p for p in catalog}, found, first_line)
        findings.extend(found)
    findings.sort(key=lambda f: -f.confidence)
    return findings
