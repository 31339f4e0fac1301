"""The escalation policy: run L1 -> L2 -> L3 -> L4 and stop at the first level that yields a grounded,
actionable hypothesis (at L1, one standing on an observed launch, not on the source text alone), so a cheap answer
costs nothing deeper; go deeper when the evidence is weak or the hypothesis at this level was already tried and
failed. Every level's outcome (used, not needed, skipped, unavailable) is recorded with its reason, so the report
can say why it stopped where it did.

The target picks the toolchain and the evidence: NVIDIA Triton (TTGIR/PTX/SASS, Triton's source) or
triton-ascend (the adapter's IR, triton-ascend's source and the Ascend pass notes). On Ascend without an NPU
no rewrite can be measured, so `auto` does not stop at a grounded L1/L3 hypothesis: it goes on to L4 for
the compiler's own conditions.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from kopt.config import Settings
from kopt.diagnose.corroborate import corroborate
from kopt.diagnose.launch_facts import (
    chain_lengths,
    cite_launches,
    dot_loop_trips,
    grid_extents,
    kernel_shares,
    stride_values,
)
from kopt.diagnose.targets import TARGETS, target_for
from kopt.errors import CompileError, KoptError
from kopt.vocabulary import LEVELS, Evidence, Finding

GROUNDED = 0.6  # confidence a hypothesis needs to stop the escalation
SYMPTOMS = {"memory_bound", "compute_bound", "latency_bound"}  # L2 says what, never why
# Triton code never addresses shared memory: the compiler picks its layouts (for a layout conversion, a dot operand,
# a cross-warp reduction), so a profiler's count of bank conflicts says what, and the cause is the op needing them.
LAYOUT_SYMPTOMS = {"bank_conflicts"}
# Vector-width causes: only the compiled code shows whether the width was lost, so at L1 they do not stop escalation.
WIDTH_CAUSES = {"misaligned_access", "masked_access", "modulo_indexing"}
RESTATED_ALONE = 0.5  # an L2 figure of the compiled kernel and grid (occupancy, waves) with no static finding beside it
UNCOMPILED_WIDTH = GROUNDED - 0.01  # a width cause L3 did not examine ranks just below the grounded findings
NARROW_ANYWAY = {"uncoalesced_access", "scalar_loop"}  # causes under which alignment cannot widen an access
L4_TOP = 3  # L3 findings explained from the compiler source
SIDE_KERNEL_SHARE = 0.1  # a kernel with less than this share of the task's estimated memory time is a side kernel
SIDE_KERNEL_FLOOR = 0.3  # ... and its findings keep at least this share of their confidence
NOT_LAUNCHED = 0.1  # a finding about a kernel the source launches but no case reaches keeps this share
LEVEL_ORDER = {lvl: i for i, lvl in enumerate(LEVELS)}
LEVEL_STATUSES = ("used", "not_needed", "skipped", "unavailable")  # what became of a level in one diagnosis


@dataclass
class LevelRun:
    level: str
    status: str  # one of LEVEL_STATUSES
    reason: str
    findings: int = 0
    seconds: float = 0.0


@dataclass
class Diagnosis:
    task: str
    target: str
    findings: list[Finding] = field(default_factory=list)
    levels: list[LevelRun] = field(default_factory=list)
    l3: Any = None  # the L3Report, for `kopt ask` (facts per source line)
    launch_facts: Any = None  # launch_facts.LaunchFacts: every case's launches (the LLM prompt shows them per case)

    @property
    def root_cause(self) -> Finding | None:
        return self.findings[0] if self.findings else None

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "target": self.target, "findings": [f.to_dict() for f in self.findings],
                "levels": [vars(r) for r in self.levels]}


def symptom(finding: Finding) -> bool:
    """A bare symptom says what, not why (L2's memory_bound, a bank-conflict count only the profiler saw). One a
    static level names the mechanism of (fp64 arithmetic for compute_bound) is a cause."""
    if finding.id in LAYOUT_SYMPTOMS:
        return all(e.level == "L2" for e in finding.evidence)
    return finding.id in SYMPTOMS and not any(e.source == "source" for e in finding.evidence)


def width_claim(finding: Finding) -> bool:
    """A width cause whose cost is the vector width only the compiled code shows; one whose evidence is its
    integer work (runtime divisions per element) is not."""
    return finding.id in WIDTH_CAUSES and not any(e.data.get("cost") == "alu" for e in finding.evidence)


def grounded(finding: Finding, failed: set[str]) -> bool:
    """A hypothesis worth acting on: a root cause (not a symptom), confident, with a fix to try, not tried already."""
    return (finding.id not in failed and not symptom(finding) and finding.confidence >= GROUNDED
            and bool(finding.patterns or finding.conditions)
            and not (finding.level == "L1" and width_claim(finding)))


def causes_first(findings: list[Finding], failed: set[str]) -> None:
    """A finding whose evidence says which findings it explains (data `explains`: ids; `others`: kernels whose
    findings it does not explain; `via`: only findings whose launch evidence names one of these arguments) ranks
    above them: the cause takes the consequence's confidence if it is higher, the consequence one step below, and
    both messages say so."""
    for cause in [f for f in findings if f.id not in failed]:
        explained = []
        for claim in [e.data for e in cause.evidence if isinstance(e.data, dict) and e.data.get("explains")]:
            others, via = set(claim.get("others") or ()), set(claim.get("via") or ())
            for f in findings:
                if f is cause or f.id not in claim["explains"] or f.id in explained or f.kernel(others) in others:
                    continue
                if via and not via & {a for e in f.evidence for a in e.data.get("args", [])}:
                    continue
                if f.confidence >= cause.confidence:
                    cause.confidence = f.confidence
                    f.confidence = round(max(0.0, f.confidence - 0.01), 2)
                f.message += f" (secondary to {cause.id})"
                explained.append(f.id)
        if explained:
            cause.message += f" (explains {', '.join(explained)})"


def explained_by(width_findings: list[Finding], causes: list[Finding]) -> list[Finding]:
    """Width causes sink below a cause that already makes the same accesses narrow: a strided fastest dim or a
    scalar loop loses vector width whatever the alignment, so fixing alignment first would change nothing."""
    deeper = [f for f in causes if f.id in NARROW_ANYWAY]
    for f in width_findings:
        if f.id in WIDTH_CAUSES and deeper:
            f.confidence = round(f.confidence * 0.5, 2)
            f.message += f" (secondary: {deeper[0].id} makes these accesses narrow whatever their alignment)"
    return width_findings


def block_sizes_programs(launch: list[Finding], source: list[Finding]) -> list[Finding]:
    """Many tiny programs over a grid tiled by a hard-coded small block come from that block: raising it is the fix
    (small_block explains too_many_programs). A grid of one program per item (the launch finding then claims the
    small tile itself) is the other way round."""
    for many in [f for f in launch if f.id == "too_many_programs"
                 and not any(isinstance(e.data, dict) and e.data.get("explains") for e in f.evidence)]:
        kernel = many.message.split(":", 1)[0]
        for small in [f for f in source if f.id == "small_block" and f.evidence and f.kernel({kernel}) == kernel]:
            claim = small.evidence[0].data
            claim["explains"] = list(dict.fromkeys([*claim.get("explains", []), "too_many_programs"]))
    return launch


def on_side_kernel(finding: Finding, shares: dict[str, float], unlaunched: Iterable[str] = ()) -> Finding:
    """A finding about a kernel with a few percent of the task's estimated memory time (a finalize or reduce step
    beside the main pass) sinks in proportion: the LLM rounds set such findings aside as costing little. One about
    a kernel no case launches (the other branch of a size dispatch) sinks further: it costs nothing here."""
    unlaunched = set(unlaunched)
    kernel = finding.kernel(set(shares) | unlaunched)
    if kernel in unlaunched:
        finding.confidence = round(finding.confidence * NOT_LAUNCHED, 2)
        finding.message += f" (no case launches {kernel}: the task's shapes take another path)"
        return finding
    share = shares.get(kernel, 1.0) if kernel and len(shares) > 1 else 1.0
    if share < SIDE_KERNEL_SHARE:
        finding.confidence = round(finding.confidence * max(SIDE_KERNEL_FLOOR, share / SIDE_KERNEL_SHARE), 2)
        finding.message += f" (side kernel: {kernel} has ~{share:.1%} of the task's estimated memory time)"
    return finding


def transpose_is_view(finding: Finding, report: Any, path: Path) -> bool:
    """An L1 transpose_before_dot whose dot compiled to wgmma: wgmma reads the operand from shared memory, where
    tl.trans is a descriptor view, so no register shuffle is left to remove (TTGIR: ttg.memdesc_trans). A dot in
    an inlined @triton.jit helper is attributed to its call site: then every compiled dot must be a wgmma."""
    dots = [f for line in finding.kernel_lines for f in report.facts_at(line, str(path)) if f.get("kind") == "dot"]
    dots = dots or [f for facts in report.lines.values() for f in facts if f.get("kind") == "dot"]
    return bool(dots) and all(str(f.get("lowering", "")).startswith("wgmma") for f in dots)


def for_target(catalog: list, family: str) -> list:
    """The patterns that speak about the target family (Target.covers)."""
    return [p for p in catalog if TARGETS[family].covers(p)]


def lower_and_attribute(path: Path, target: str | None, case: int | None = None) -> tuple[list, Any]:
    """Compile through the target's toolchain and attribute the lowered code to source lines: (kernels, L3Report).
    Raises CompileError when the kernel does not compile."""
    return target_for(target).lower_and_attribute(path, target, case)


def catalog_patterns(finding_id: str, failed: set[str], catalog: list, family: str = "nvidia", about: str = "") -> list[str]:
    """The target's catalog patterns that list the finding as a symptom, proven ones first, minus those tried.
    `about` (the finding's message) breaks ties: the pattern whose title shares most words with it, counting
    only words no other fitting title has (a gather finding picks the gather pattern), wins."""
    from collections import Counter

    from kopt.diagnose.l4 import words

    fitting = [p for p in for_target(catalog, family) if finding_id in p.finding_ids and p.id not in failed]
    titles = {p.id: words(p.title) for p in fitting}
    seen = Counter(w for t in titles.values() for w in t)
    said = words(about) if about else set()
    fitting.sort(key=lambda p: (p.finding_ids.index(finding_id), -p.win_rate,
                                -sum(1 for w in said & titles[p.id] if seen[w] == 1), p.recipe_name is None, p.id))
    return [p.id for p in fitting[:3]]


def restates(finding: Finding) -> bool:
    """An L2 finding whose own figure (its first evidence) is one the compiled kernel and the grid fix (theoretical
    occupancy, waves per SM, ncu's occupancy and launch rules): the profiler computing what L1's launches and L3's
    resources already give, not a measurement of its own. ncu rules that joined it by their wording (a barrier
    stall that mentions occupancy) do not make it one."""
    return finding.level == "L2" and bool(finding.evidence) and bool(finding.evidence[0].data.get("static"))


def merge(findings: Iterable[Finding], failed: set[str]) -> list[Finding]:
    """One finding per id: the deepest level speaks, the others add evidence; agreement across levels
    raises confidence, a hypothesis already tried sinks. A profiler restating a static figure another level
    judged adds evidence only (ncu's estimated speedups for a tail or an occupancy limit are upper bounds); one that
    no static level made a finding of is a hint at half its confidence."""
    by_id: dict[str, list[Finding]] = {}
    for f in findings:
        by_id.setdefault(f.id, []).append(f)
    merged = []
    for fid, group in by_id.items():
        group.sort(key=lambda f: (-LEVEL_ORDER[f.level], -f.confidence))
        lead = group[0]
        witnesses = [f for f in group if not restates(f)]
        levels = {"L3" if f.level == "L4" else f.level for f in witnesses}  # L4 explains L3; it is not a new witness
        if witnesses:
            confidence = min(0.97, max(f.confidence for f in witnesses) + 0.05 * (len(levels) - 1))
            message = lead.message
        else:  # only the profiler restating a static figure: the launches and resources it follows from made no case
            confidence = max(f.confidence for f in group) * RESTATED_ALONE
            message = f"{lead.message} (the profiler's figure for the compiled kernel and grid; no static level found it a cause: a hint)"
        if fid in failed:
            confidence *= 0.5
            message = f"(already tried, failed) {message}"
        evidence = list({(e.level, e.source, e.summary, e.location): e for f in group for e in f.evidence}.values())
        merged.append(Finding(
            fid, lead.level, message, round(confidence, 2), evidence,
            sorted({ln for f in group for ln in f.kernel_lines}),
            list(dict.fromkeys(c for f in group for c in f.conditions)),
            [p for p in dict.fromkeys(p for f in group for p in f.patterns) if p not in failed]))
    causes_first(merged, failed)
    merged.sort(key=lambda f: (symptom(f), f.id in failed, -f.confidence, -LEVEL_ORDER[f.level]))
    return merged


def compile_failure(exc: CompileError) -> Finding:
    """The compiler's own message, at the kernel line it names."""
    text = str(exc)
    where = re.match(r"^(.+?):(\d+): ", text)
    line = int(where.group(2)) if where else 0
    return Finding("compile_failure", "L3", text, 1.0,
                   [Evidence("L3", "compile_log", text, {}, f"{where.group(1)}:{line}" if where else None)],
                   [line] if line else [], ["the kernel must compile: fix the error the compiler names at that line"])


def emitter_evidence(finding: Finding, index: Any) -> Finding:
    """L4 for a compile failure: the compiler code that emits the message."""
    try:
        hits = index.find_emitter(finding.message.split(": ", 2)[-1], k=3)
    except KoptError:
        return finding
    if not hits:
        return finding
    cited = [Evidence("L4", "compiler_source", f"emits: {h.chunk.matched_diagnostic[:200]}",
                      {"symbol": h.chunk.symbol}, h.cite()) for h in hits]
    return Finding(finding.id, "L4", finding.message, finding.confidence, finding.evidence + cited,
                   finding.kernel_lines, finding.conditions, finding.patterns)


def gpu_unavailable() -> str | None:
    """Why L2 cannot run here, or None when a CUDA GPU and ncu are both present."""
    try:
        import torch

        if not torch.cuda.is_available():
            return "no CUDA GPU visible (torch.cuda.is_available() is False)"
    except ImportError:
        return "torch is not installed"
    from kopt.diagnose.ncu import find_ncu

    if find_ncu() is None:
        return "ncu (Nsight Compute) not found on PATH or under /usr/local/cuda/bin, /opt/nvidia/nsight-compute"
    return None


def open_index_or_problem(settings: Settings) -> tuple[Any, str | None]:
    """The knowledge index, or None and why not: diagnosis (and `kopt ask`) go on without it."""
    try:
        from kopt.index import open_index

        return open_index(settings), None
    except (KoptError, ImportError) as exc:
        return None, f"knowledge index unavailable: {exc}"


class _Run:
    """One diagnosis in progress: the levels run so far and their findings."""

    def __init__(self, task_path: Path, level: str, gpu: bool, case: int | None, failed: set[str], settings: Settings,
                 index: Any):
        from kopt.patterns import load_patterns

        self.path, self.level, self.gpu, self.case, self.failed = task_path, level, gpu, case, failed
        self.settings, self.index = settings, index
        self.target = target_for(settings.target)
        self.family = self.target.family
        self.catalog = [p for p in load_patterns() if self.target.covers(p)]
        self.found: list[Finding] = []
        self.diag = Diagnosis(str(task_path), settings.target or "sm_90")
        self.launch_facts = None
        self._unlaunched: set[str] | None = None  # kernels no case launches (unlaunched()), once launch_facts is known
        self.roofline: dict[int, float] | None = None  # case -> fraction of the roofline, when the caller measured it
        self.untestable = self.target.untestable()
        self.profiling: Any = None  # ncu.Profiling started before L1 (start_profile)

    def record(self, level: str, status: str, reason: str, findings: list[Finding] | None = None,
               started: float | None = None) -> None:
        self.diag.levels.append(LevelRun(level, status, reason, len(findings or []),
                                         round(time.perf_counter() - started, 2) if started else 0.0))
        shares = kernel_shares(self.launch_facts) if self.launch_facts is not None and level != "L4" else {}
        unlaunched = self.unlaunched() if shares else set()
        self.found += [on_side_kernel(f, shares, unlaunched) for f in findings or []]  # L4 explains L3's, already weighed

    def unlaunched(self) -> set[str]:
        """Kernels the task's source launches that no case reached (every case captured), e.g. a multi-block
        variant the cases' sizes never select; worked out once, from the launch facts L1 captured."""
        if self._unlaunched is None:
            from kopt.diagnose.launch_causes import _module

            facts, module = self.launch_facts, _module(str(self.path))
            launched = {l.kernel for l in facts.launches} if facts is not None else set()
            self._unlaunched = set() if facts is None or facts.skipped or module is None else {
                name for name, k in module.kernels.items() if k.launches and name not in launched}
        return self._unlaunched

    def deep_enough(self, done: str) -> str | None:
        """Why to stop after level `done`, or None to go on."""
        if self.level != "auto":
            return f"--level {self.level}" if LEVEL_ORDER[done] >= LEVEL_ORDER[self.level] else None
        if any(f.id == "compile_failure" for f in self.found):
            return "the kernel does not compile; the compile failure is the finding"
        best = next((f for f in merge(self.found, self.failed) if grounded(f, self.failed)), None)
        if best is None or done == "L2" or self.untestable:
            return None  # with no NPU a rewrite cannot be measured, so the compiler's own conditions are worth L4
        if done == "L1" and not best.observed:
            return None  # a source pattern alone: the compiled kernel (and a profile, with a GPU) must bear it out
        return (f"{done} yielded a grounded, actionable hypothesis: {best.id} (confidence {best.confidence:.2f}"
                f"{', patterns ' + ', '.join(best.patterns[:2]) if best.patterns else ''})")

    def skip_rest(self, after: str, reason: str) -> None:
        for lvl in LEVELS[LEVEL_ORDER[after] + 1:]:
            self.record(lvl, "not_needed", reason)

    # --- the levels ------------------------------------------------------------------------------

    def l1(self) -> None:
        from kopt.diagnose.l1 import triage

        t = time.perf_counter()
        untried = [p for p in self.catalog if p.id not in self.failed]  # L1's confidence rests on a fix still to try
        findings = triage(self.path, index=self.index, patterns=untried)
        reason = "source and launch-config signals matched against the pattern catalog"
        if self.target.captures_launches:
            launch, note = self.launch_findings()
            facts = self.launch_facts
            findings = dot_loop_trips(chain_lengths(grid_extents(stride_values(findings, facts), facts), facts), facts) + explained_by(
                block_sizes_programs(launch, findings), findings)
            reason += f"; {note}"
        self.record("L1", "used", reason, findings, t)

    def launch_findings(self) -> tuple[list[Finding], str]:
        """Every case's launches (grid, 16-divisibility of its arguments), captured without running a kernel."""
        from kopt.diagnose import launch_facts
        from kopt.task import load_task

        try:
            self.launch_facts = launch_facts.capture(load_task(self.path), self.settings.target)
        except Exception as exc:  # a task L1 cannot import is L3's to report; L1 stands on the source alone
            return [], f"per-case launches not captured ({type(exc).__name__}: {str(exc)[:160]})"
        facts = self.launch_facts
        found = launch_facts.findings(facts, str(self.path), self.roofline)
        skipped = f", {len(facts.skipped)} case(s) not captured" if facts.skipped else ""
        return found, f"per-case launches of {len(facts.cases)} case(s) captured on fake tensors{skipped}"

    def l2(self) -> None:
        if not self.gpu:
            return self.record("L2", "skipped", "--no-gpu")
        why = self.target.profiler_problem(self.untestable) or gpu_unavailable()
        if why:
            return self.record("L2", "unavailable", why)
        from kopt.diagnose.l2 import result_findings
        from kopt.diagnose.ncu import Profiling

        profiling, beside = self.profiling or Profiling(self.path, self.case or 0), self.profiling is not None
        result = profiling.result()
        t = profiling.started  # the level's time is the profile's, most of it beside L1
        if not result.available:
            return self.record("L2", "unavailable", result.reason or "ncu produced no result", None, t)
        findings = cite_launches(result_findings(result), self.launch_facts)
        self.record("L2", "used", "Nsight Compute symptoms (they say what, L3 says why)"
                    + ("; profiled while L1 ran" if beside else ""), findings, t)

    def start_profile(self) -> None:
        """Start L2's profile before L1 when L2 may run: its child's imports (torch, the task's packages) overlap
        L1's, the slowest part of both. `auto` cancels it when L1 stops the escalation."""
        from kopt.diagnose.ncu import Profiling

        if (self.gpu and self.level != "L1" and not self.target.profiler_problem(self.untestable)
                and gpu_unavailable() is None):
            self.profiling = Profiling(self.path, self.case or 0)

    def l3(self) -> None:
        t = time.perf_counter()
        problem = self.target.toolchain_problem()
        if problem:
            return self.record("L3", "unavailable", problem)
        try:
            compiled, report = lower_and_attribute(self.path, self.settings.target, self.case)
        except CompileError as exc:
            return self.record("L3", "used", "the kernel does not compile", [compile_failure(exc)], t)
        self.diag.l3 = report
        self.diag.target = compiled[0].target if compiled else self.diag.target
        for f in report.findings:
            f.patterns = f.patterns or catalog_patterns(f.id, self.failed, self.catalog, self.family, f.message)
        reason = self.target.l3_reason
        if report.notes:
            reason += "; " + "; ".join(report.notes)
        self.record("L3", "used", reason, report.findings + self.case_width_findings(report), t)
        confirmed = {f.id for f in self.found if f.level == "L3"}
        for f in self.found:
            if f.level == "L1" and f.id == "modulo_indexing" and width_claim(f) and f.id not in confirmed:
                f.confidence = round(f.confidence * 0.5, 2)  # the compiled loads kept their width despite the %
                f.message += " (not confirmed at L3: no load/store the modulo feeds is narrower than 16 B)"
            if f.level == "L1" and f.id == "transpose_before_dot" and transpose_is_view(f, report, self.path):
                f.confidence = round(f.confidence * 0.5, 2)
                f.message += (" (at L3 the dot is a wgmma, which reads operands from shared memory: the transpose is "
                              "a shared-memory view, not a register shuffle)")
        if self.launch_facts is not None and report.kernels:
            from kopt.diagnose.launch_facts import tail_findings

            resident = {k["kernel"]: k["occupancy"].get("blocks_per_sm", 1) for k in report.kernels}
            self.found += tail_findings(self.launch_facts, resident, str(self.path))

    def case_width_findings(self, report: Any) -> list[Finding]:
        """Compile the first case a launch finding says loses 16-divisibility and compare its load/store widths
        with the compiled case's: the narrowed accesses confirm the finding at L3, none refute it."""
        from kopt.diagnose.launch_facts import bad_cases, confirm

        compiled_case = self.case or 0
        out = []
        for f in [f for f in self.found if f.level == "L1" and f.id in ("misaligned_access", "masked_access")
                  and any(e.source == "launch" for e in f.evidence)]:
            cases = bad_cases(f)
            if not cases:
                continue
            case = cases[0]
            try:
                case_report = report if case == compiled_case else lower_and_attribute(
                    self.path, self.settings.target, case)[1]
            except KoptError:
                continue
            base = None if compiled_case in cases else report
            confirmed = confirm(f, self.launch_facts, case, case_report, base, compiled_case)
            if confirmed is None:
                f.confidence = round(f.confidence * 0.5, 2)
                f.message += (f" (not confirmed at L3: case {case} compiles no access narrower than the compiled "
                              "case's, or than its tile gives each thread)")
            else:
                out.append(confirmed)
        return out

    def l4(self) -> None:
        from kopt.diagnose.l4 import compiler_corpus, escalate_l4

        t = time.perf_counter()
        targets = [f for f in merge(self.found, self.failed) if f.level == "L3" and not symptom(f)]
        targets = targets[:L4_TOP]  # a failed hypothesis is explained too: its conditions say why the fix missed
        if not targets:
            return self.record("L4", "not_needed", "no L3 finding to explain from the compiler source")
        l3_by_id = {f.id: f for f in self.found if f.level == "L3"}
        explained = []
        for f in targets:
            base = l3_by_id.get(f.id, f)
            if f.id == "compile_failure":
                explained.append(emitter_evidence(base, self.index) if self.index else base)
            else:
                explained.append(escalate_l4(base, self.index, self.settings, family=self.compiler))
        problem = getattr(self, "index_problem", None) or compiler_corpus(self.index, self.compiler)[1]
        reason = f"explained {', '.join(f.id for f in targets)} from pass notes and compiler source"
        if self.untestable and self.level == "auto":
            reason += " (no NPU here to measure a rewrite, so the compiler's own conditions are the check)"
        self.record("L4", "used", reason + (f"; {problem}" if problem else ""), explained, t)

    @property
    def compiler(self) -> str:
        """The compiler family L4 reads: the Triton the target compiles with."""
        return self.target.compiler

    def run(self) -> Diagnosis:
        steps = {"L1": self.l1, "L2": self.l2, "L3": self.l3, "L4": self.l4}
        self.start_profile()
        try:
            for lvl in LEVELS:
                steps[lvl]()
                if lvl == "L1" and any(f.id == "compile_failure" for f in self.found):
                    self.skip_rest("L1", "the task file does not parse; fix the syntax error first")
                    break
                stop = self.deep_enough(lvl)
                if stop:
                    self.skip_rest(lvl, stop)
                    break
        finally:
            if self.profiling is not None:
                self.profiling.cancel()  # L1 stopped the escalation (or something failed): nothing of ncu outlives us
        if not any(r.level == "L3" and r.status == "used" for r in self.diag.levels):
            for f in self.found:  # never compiled: a width cause stays a hypothesis below any grounded finding
                if f.level == "L1" and width_claim(f) and f.confidence >= GROUNDED:
                    f.confidence = UNCOMPILED_WIDTH
                    f.message += " (not compiled: the access widths are unconfirmed)"
        self.diag.findings = corroborate(merge(self.found, self.failed), self.diag.l3, self.path)
        self.diag.launch_facts = self.launch_facts
        return self.diag


def diagnose(task_path: str | Path, *, level: str = "auto", gpu: bool = True, case: int | None = None,
             failed: Iterable[str] = (), settings: Settings | None = None, index: Any = None,
             roofline: Iterable[float | None] | None = None) -> Diagnosis:
    """Diagnose a task file; `failed` holds finding ids or pattern ids already tried without a win; `roofline`
    (each case's measured fraction of the roofline, in CASES order) ranks causes by the cases they slow down."""
    from kopt.config import load_settings

    if level != "auto" and level not in LEVELS:
        raise KoptError(f"unknown level {level!r}; use auto, {', '.join(LEVELS)}")
    path = Path(task_path).resolve()
    if not path.is_file():
        raise KoptError(f"{task_path}: no such task file")
    settings = settings or load_settings()
    problem = None
    if index is None:
        index, problem = open_index_or_problem(settings)
    run = _Run(path, level, gpu, case, set(failed), settings, index)
    run.index_problem = problem
    if roofline is not None:
        run.roofline = {i: r for i, r in enumerate(roofline) if r is not None}
    return run.run()
