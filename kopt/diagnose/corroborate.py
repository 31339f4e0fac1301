"""Observed facts beside findings read from the source alone: what the compiler made of the finding's lines (L3),
else its kernel's compiled resources, and what the profiler measured on that kernel (L2). A hypothesis from the
text (an atomic accumulation, a broadcast-sum matmul, a hard-coded config) then shows the reader, and the LLM,
the compiled or measured fact that bears on it. The evidence is added, never weighed: no confidence moves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kopt.vocabulary import Evidence, Finding

LINE_FACTS = 3  # compiled facts cited per finding
BOUNDS = ("memory_bound", "compute_bound", "latency_bound")


def corroborate(findings: list[Finding], report: Any, task_path: str | Path) -> list[Finding]:
    """Add compiled (report: the L3Report, or None) and measured (the L2 bound findings among `findings`) facts to
    every finding that observes nothing yet. Returns the same list."""
    kernels = {k["kernel"]: k for k in (report.kernels if report is not None else [])}
    profiled = {f.kernel(): f for f in findings if f.id in BOUNDS and f.level == "L2"}
    for f in [f for f in findings if not f.observed]:
        kernel = f.kernel()
        compiled = _line_facts(f, report, task_path) if report is not None else []
        if not compiled and (resources := _only_or(kernels, kernel)):
            compiled = [_resources(resources)]
        f.evidence += compiled + _measured(_only_or(profiled, kernel))
    return findings


def _only_or(by_kernel: dict, kernel: str | None) -> Any:
    """The entry for the finding's kernel; for a finding that names none, the only entry there is."""
    if kernel is None:
        return next(iter(by_kernel.values())) if len(by_kernel) == 1 else None
    return by_kernel.get(kernel)


def _line_facts(f: Finding, report: Any, task_path: str | Path) -> list[Evidence]:
    """The compiled facts (a load's width, a dot's lowering, an atomic, a loop's pipelining) at the finding's lines."""
    out = []
    for line in f.kernel_lines:
        for fact in report.facts_at(line, str(task_path)):
            if not fact.get("summary"):
                continue
            source = "ptx" if fact.get("ptx_bytes") or fact.get("ptx") else "ttgir"
            out.append(Evidence("L3", source, f"compiled: {fact['summary']}",
                                {"kernel": fact.get("kernel"), "kind": fact.get("kind")}, f"{Path(task_path).name}:{line}"))
    return list({e.summary: e for e in out}.values())[:LINE_FACTS]


def _resources(kernel: dict[str, Any]) -> Evidence:
    """A kernel's compiled shape: warps, registers, occupancy and the SASS instruction families that say how it runs
    (on Ascend: the adapter's core mix and on-chip buffer use)."""
    if "num_warps" not in kernel:
        return Evidence("L3", "ttadapter", f"{kernel['kernel']} compiled for {kernel['target']}: mix mode "
                        f"{kernel.get('mix_mode') or '?'}, on-chip buffers {kernel.get('buffer_bytes', '?')} of "
                        f"{kernel.get('ub_bytes', '?')} B", {"kernel": kernel["kernel"]})
    occ, sass = kernel.get("occupancy") or {}, kernel.get("sass") or {}
    parts = [f"{kernel['kernel']} compiled for {kernel['target']}: num_warps={kernel['num_warps']}, "
             f"num_stages={kernel['num_stages']}, {kernel.get('registers') or '?'} registers/thread"]
    if occ:
        parts.append(f"{occ.get('blocks_per_sm', '?')} blocks/SM resident ({occ.get('occupancy', 0):.0%} occupancy, "
                     f"limited by {occ.get('limiter', '?')})")
    if sass:
        parts.append(f"SASS {sass.get('ldg_128', 0)} LDG.128, {sass.get('ldg_narrow', 0)} narrower LDG, "
                     f"{sass.get('hgmma', 0) + sass.get('hmma', 0)} tensor-core MMA, {sass.get('ffma', 0)} FFMA")
    return Evidence("L3", "sass" if sass else "ttgir", "; ".join(parts), {"kernel": kernel["kernel"]})


def _measured(bound: Finding | None) -> list[Evidence]:
    """The profiler's roofline figures for the finding's kernel: how far from its ceilings it runs."""
    if bound is None:
        return []
    return [e for e in bound.evidence if e.source in ("ncu", "timing") and not e.data.get("rule")][:2]
