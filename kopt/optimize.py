"""The optimization loop: diagnose -> propose one candidate -> validate (every case and the held-out
shapes) -> time -> record, as auditable, resumable rounds.

Each round diagnoses the current best kernel (escalate.diagnose stops at the cheapest level with a
grounded hypothesis, and is told which hypotheses already failed), takes the first untried
(finding, pattern) pair whose recipe applies (or asks the LLM: one request per round, its reply's
"Change:" line is the round's hypothesis), and commits the round to the store. It stops on the round
or time budget, when nothing is left to try, or within 10% of the roofline.

Grounding (the ablation): "full" gives the LLM the diagnosis as evidence; "none" gives it the same prompt
without the diagnosis, and the loop does not diagnose at all. With the prompt exchange
(kopt/exchange.py) a round whose request has no reply yet is not spent: the request and the round's
state are recorded (store.set_pending), the run stops `waiting`, and --resume goes on from there.

Without a GPU nothing can be timed: candidates are still proposed and validated through the
interpreter, and the round's outcome is `untimed` (validated, speed unknown), never a win.
"""

from __future__ import annotations

import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from kopt.config import Settings
from kopt.diagnose.escalate import SYMPTOMS
from kopt.diagnose.l1 import fits
from kopt.diagnose.l1_detectors import l1_view
from kopt.errors import KoptError
from kopt.llm import ExchangeWaiting
from kopt.patterns import Pattern
from kopt.rounds.store import Round, RoundsStore, Run, best_round, hypothesis_key
from kopt.vocabulary import Finding, Outcome

ROOFLINE_STOP = 0.9  # within 10% of the roofline: stop
MIN_GAIN = 1.02  # a candidate must beat the best by 2% (geomean) to count as improved: timing noise
# ...and may not be slower than the best on any one case by more than this: one case's median is noisier than
# a geomean over all of them, so its noise band is wider (a faster geomean that hides a 1.8x slower case is no win)
CASE_NOISE = 1.05
VALIDATION_TO_OUTCOME = {"compile_error": Outcome.COMPILE_ERROR, "incorrect": Outcome.INCORRECT,
                         "timeout": Outcome.TIMEOUT, "crash": Outcome.CRASH, "cuda_error": Outcome.CRASH,
                         "oom": Outcome.CRASH, "exception": Outcome.CRASH,
                         "cheat": Outcome.REJECTED}  # cheat: the integrity check or the harness caught a gamed result
Event = Callable[[str, dict[str, Any]], None]
# --policy (kopt eval suite's causal isolation): how deep each round's diagnosis goes.
# progressive: escalate as designed; profile-only: L2 (profiler) evidence only; always-deep: every level every round;
# static: escalate as designed but without the profiler (no ncu: the source, the IR and the compiler only).
POLICY_LEVEL = {"progressive": "auto", "profile-only": "L2", "always-deep": "L4", "static": "auto"}
POLICIES = tuple(POLICY_LEVEL)
GROUNDINGS = ("full", "none")  # what the LLM's prompt holds besides the kernel, its timings and the rounds


def pattern_order(finding: Finding, catalog: dict[str, Pattern], kinds: Iterable[str] | None = None) -> list[str]:
    """Patterns to try for a finding: the diagnosis' own ranking first, then every other catalog pattern for that
    finding id by recorded win rate (synthesis updates it; L2/L3 symptoms carry no ranking of their own). A
    synthesized pattern joins only for the kinds of kernel (`kinds`, L1's view) it was validated on."""
    def joins(p: Pattern) -> bool:
        return kinds is None or p.provenance["kind"] == "curated" or fits(p, set(kinds))

    rest = sorted((p for p in catalog.values() if finding.id in p.finding_ids and p.id not in finding.patterns
                   and joins(p)), key=lambda p: (-p.win_rate, p.id))
    return list(dict.fromkeys(finding.patterns + [p.id for p in rest]))


@dataclass
class Hypothesis:
    finding: Finding | None  # None: an LLM round, which weighs every finding itself
    pattern_id: str | None
    recipe: str | None  # None: the LLM proposes
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return hypothesis_key(self.finding.id if self.finding else None, self.pattern_id)


@dataclass
class Candidate:
    source: str
    label: str
    proposer: str
    summary: str
    transcript: str | None = None


@dataclass
class Evaluation:
    """What validating (and timing) one candidate found: the round's outcome and the variants tried."""

    outcome: str
    message: str | None
    times: list[float | None]
    roofline: list[float | None]
    trials: list[dict[str, Any]]  # every variant tried: label, validation, times
    source: str | None
    label: str = ""  # the variant the outcome is about


def geomean(values: Iterable[float | None]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def speedup(base: list[float | None], new: list[float | None]) -> float | None:
    return geomean([b / n for b, n in zip(base, new) if b and n])


@dataclass
class Validated:
    """What a round keeps of a harness ValidationResult (and what `judge` reads)."""

    ok: bool
    reason: str | None = None
    message: str | None = None
    cases: int = 0  # cases checked, held-out shapes included
    device: str = ""
    held_out: int = 0
    note: str | None = None  # why held-out shapes were not run, if they were not


@dataclass
class Timing:
    """A candidate's times through the sandboxed bench, per case in CASES order; or, when not ok, the outcome and
    message of the failure."""

    ok: bool
    times: list[float | None] = field(default_factory=list)  # kernel ms
    roofline: list[float | None] = field(default_factory=list)  # fraction of the roofline bound
    cases: list[Any] = field(default_factory=list)
    bound: list[str | None] = field(default_factory=list)  # memory | compute
    outcome: Outcome | None = None
    message: str | None = None


def validation_summary(r: Any) -> Validated:
    """What a round keeps of a harness ValidationResult."""
    return Validated(r.ok, r.reason, r.message, len(r.cases), r.device, sum(c.held_out for c in r.cases),
                     r.held_out_note)


def judge(problem: str | None, validation: Validated | None, timing: Timing | None,
          untimed_reason: str | None, base: list[float | None]) -> tuple[Outcome, str | None]:
    """(outcome, message) of one candidate, stage by stage: the one rule for the loop and MCP record_round.
    `problem`: the guard's objection; `validation`: validation_summary, or None if not run; `timing`: bench_times,
    or None if not timed; `base`: the case times to beat."""
    if problem:
        return Outcome.REJECTED, f"candidate rejected: {problem}"
    if not validation.ok:
        return VALIDATION_TO_OUTCOME.get(validation.reason or "", Outcome.CRASH), validation.message
    if timing is None:
        return Outcome.UNTIMED, f"validated on {validation.cases} cases; {untimed_reason}"
    if not timing.ok:
        return Outcome(timing.outcome), timing.message
    gain = speedup(base, timing.times) or 0
    if gain < MIN_GAIN:
        return Outcome.SLOWER, f"x{gain:.3f} vs the best so far (not faster)"
    regressed = regressions(base, timing.times, timing.cases)
    if regressed:
        return Outcome.SLOWER, (f"x{gain:.3f} geomean vs the best so far, but slower beyond noise on {len(regressed)} "
                                f"of {len(timing.times)} cases: {'; '.join(regressed)}; not a win (an entry that "
                                "dispatches by shape, this kernel only where it is faster, would keep both)")
    return Outcome.IMPROVED, f"x{gain:.3f} vs the best so far"


def regressions(base: list[float | None], new: list[float | None], cases: list | None = None) -> list[str]:
    """'case {...} x0.55' for each case the new times make slower than `base` by more than CASE_NOISE."""
    labels = cases or [f"#{i}" for i in range(len(new))]
    return [f"case {label} x{b / n:.2f}" for label, b, n in zip(labels, base, new) if b and n and n > b * CASE_NOISE]


def timing_available() -> tuple[bool, str]:
    try:
        import torch

        if torch.cuda.is_available():
            return True, f"CUDA: {torch.cuda.get_device_name()}"
        return False, "no CUDA GPU: candidates are validated through the Triton interpreter and recorded untimed"
    except ImportError:
        return False, "torch is not installed"


class Optimizer:
    """One run of the loop over a task; `run()` goes until a stop condition and returns the summary."""

    def __init__(self, task_path: Path, settings: Settings, store: RoundsStore, run: Run, on_event: Event | None = None,
                 out: Path | None = None):
        from kopt.patterns import load_patterns

        self.task_path, self.settings, self.store, self.run_row = task_path, settings, store, run
        self.emit = on_event or (lambda kind, data: None)
        self.out = out
        self.catalog = {p.id: p for p in load_patterns()}
        self.timed, self.timing_reason = run.timing["available"], run.timing["reason"]
        self.initial_source = store.get(run.task_hash)
        self.work = store.root / "work" / run.run_id
        self.work.mkdir(parents=True, exist_ok=True)
        self.llm: Any = None
        self.grounding = run.options.get("grounding", "full")
        self.proposal: Any = None  # the recipe Proposal behind the current candidate (None for the LLM)
        self._task: Any = None

    # --- state from the store ------------------------------------------------------------------

    def state(self) -> tuple[list[Round], Round | None]:
        rounds = self.store.rounds(self.run_row.run_id)
        return rounds, best_round(rounds)

    def best_source(self, best: Round | None) -> str:
        return self.store.get(best.candidate) if best else self.initial_source

    def best_times(self, best: Round | None) -> list[float | None]:
        return best.case_times if best else self.run_row.baseline

    # --- the loop ------------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        from kopt.task import task_import_path

        with task_import_path(self.task_path):  # the copies under .kopt/work import the task's siblings too
            return self._run()

    def _run(self) -> dict[str, Any]:
        opts = self.run_row.options
        started = time.monotonic()
        spent_before = sum(r.seconds for r in self.store.rounds(self.run_row.run_id))
        self.emit("run", {"run": self.run_row.to_dict()})
        stop = None
        while stop is None:
            rounds, best = self.state()
            n = len(rounds) + 1
            spent = spent_before + time.monotonic() - started
            stop = self.budget_stop(n, spent, opts, best)
            if stop:
                break
            try:
                stop = self.one_round(n, rounds, best)
            except ExchangeWaiting as wait:
                return self.waiting(wait)
        self.store.set_status(self.run_row.run_id, "done", stop)
        summary = self.summary("done", stop)
        self.emit("stop", summary)
        return summary

    def summary(self, status: str, stop: str | None) -> dict[str, Any]:
        rounds, best = self.state()
        written = self.write_best(best, rounds) if best else None
        return {"run_id": self.run_row.run_id, "task": str(self.task_path), "status": status, "stop_reason": stop,
                "options": self.run_row.options, "timing": self.run_row.timing,
                "initial": initial_cases(self.run_row), "rounds": [r.to_dict() for r in rounds],
                "best_round": best.n if best else None, "speedup": best.speedup_initial if best else None,
                "out": str(written) if written else None, "workspace": str(self.store.root.parent)}

    def waiting(self, wait: ExchangeWaiting) -> dict[str, Any]:
        """The round's request has no reply yet: nothing is spent; the run stops `waiting` until --resume."""
        stop = f"waiting for the LLM reply {wait.reply}"
        self.store.set_status(self.run_row.run_id, "waiting", stop)
        summary = self.summary("waiting", stop)
        summary["waiting"] = [{"request": str(wait.request), "reply": str(wait.reply)}]
        summary["resume"] = (f"kopt optimize --resume {self.run_row.run_id} "
                             f"--llm-exchange {self.settings.llm_exchange_dir}")
        self.emit("stop", summary)
        return summary

    def budget_stop(self, n: int, spent: float, opts: dict[str, Any], best: Round | None) -> str | None:
        if n > opts["rounds"]:
            return f"round budget spent ({opts['rounds']} rounds)"
        if opts.get("minutes") is not None and spent >= opts["minutes"] * 60:
            return f"time budget spent ({opts['minutes']:g} min)"
        roofline = geomean([x for x in (best.roofline if best else self.run_row.timing["roofline"]) if x])
        if roofline is not None and roofline >= ROOFLINE_STOP:
            return f"within {100 * (1 - ROOFLINE_STOP):.0f}% of the roofline ({100 * roofline:.0f}% of the bound)"
        return None

    def one_round(self, n: int, rounds: list[Round], best: Round | None) -> str | None:
        """Run round n; returns a stop reason when there is nothing left to try."""
        t0 = time.monotonic()
        current = self.work / "current.py"
        current.write_text(self.best_source(best))
        pending = next((p for p in self.store.pending(self.run_row.run_id) if p["n"] == n), None)
        if pending is not None:  # the request went out before: ask it again, do not diagnose again
            self.llm_round(n, rounds, best, current.read_text(), [], pending["state"], t0, pending["request"])
            return None
        if self.grounding == "none":  # the ablation's arm runs no diagnosis at all (it costs GPU time)
            self.llm_round(n, rounds, best, current.read_text(), [], self.llm_state([], None, [], None, t0), t0)
            return None
        tried = {r.hypothesis_key for r in rounds}
        failed = self.same_fix({r.pattern_id for r in rounds if r.pattern_id}) | self.exhausted(rounds)
        diag, levels, reached = self.diagnose(n, current, failed, self.performance(best))
        skipped: list[str] = []
        self.emit("phase", {"n": n, "phase": "proposing"})
        for hyp in self.hypotheses(diag.findings, tried, failed, l1_view(current.read_text())[0]):
            if hyp.recipe is None:
                state = self.llm_state(diag.findings, self.store.put_json(diag.to_dict()), levels, reached, t0, skipped)
                self.llm_round(n, rounds, best, current.read_text(), diag.findings, state, t0,
                               case_facts=self.case_facts(diag, best))
                return None
            candidate = self.propose(hyp, current.read_text(), skipped)
            if candidate is None:
                continue
            same = next((r.n for r in rounds if candidate.source and r.candidate == self.store.put(candidate.source)), None)
            if same is not None and self.proposal is not None and (len(self.proposal.variants) == 1 or not self.timed):
                skipped.append(f"{hyp.key}: the same candidate as round {same}")
                continue
            evidence = {"findings": self.store.put_json(diag.to_dict())}
            self.emit("phase", {"n": n, "phase": f"validating {candidate.label}"})
            result = self.evaluate(n, candidate, best)
            self.commit(n, hyp, candidate, result, best, evidence, levels, reached, skipped, t0)
            return None
        why = "; ".join(skipped[-6:])
        return "no untried hypothesis left" + (f" (passed over: {why})" if why else "")

    def diagnose(self, n: int, current: Path, failed: set[str], perf: dict[str, Any] | None = None
                 ) -> tuple[Any, list[dict], str | None]:
        """The diagnosis of the current kernel under the run's policy: (diagnosis, levels, deepest level used).
        `perf` (performance()): each case's roofline fraction, so causes that slow the slow cases rank first."""
        from kopt.diagnose.escalate import diagnose

        self.emit("phase", {"n": n, "phase": "diagnosing"})
        try:
            policy = self.run_row.options.get("policy", "progressive")
            index = self.open_index()
            try:
                roofline = [c["roofline"] for c in perf["cases"]] if perf and perf.get("available") else None
                diag = diagnose(current, level=POLICY_LEVEL[policy], gpu=self.timed and policy != "static", failed=failed,
                                settings=self.settings, index=index, roofline=roofline)
            finally:
                if index is not None:
                    index.close()
            if policy == "profile-only":
                diag.findings = [f for f in diag.findings if f.level == "L2"]
        except KoptError as exc:
            raise KoptError(f"round {n}: diagnosing the current kernel failed: {exc}") from exc
        levels = [vars(lv) for lv in diag.levels]
        return diag, levels, next((lv["level"] for lv in reversed(levels) if lv["status"] == "used"), None)

    @staticmethod
    def llm_state(findings: list[Finding], diagnosis: str | None, levels: list[dict], reached: str | None, t0: float,
                  skipped: list[str] = ()) -> dict[str, Any]:
        """What an LLM round needs to be committed later without diagnosing again (kept with a pending request)."""
        return {"finding_ids": [f.id for f in findings], "findings": diagnosis, "levels": levels, "reached": reached,
                "skipped": list(skipped), "diagnosis_s": round(time.monotonic() - t0, 2)}

    def same_fix(self, tried: set[str]) -> set[str]:
        """The tried patterns and every pattern with the same recipe and parameters (a synthesized L1 shortcut and
        its curated pattern): they propose the same candidate, so trying one tries them all."""
        def fix(p: Pattern) -> str | None:
            return repr((p.recipe_name, sorted((p.recipe.get("params") or {}).items()))) if p.recipe_name else None

        fixes = {fix(self.catalog[pid]) for pid in tried if pid in self.catalog} - {None}
        return tried | {p.id for p in self.catalog.values() if fix(p) in fixes}

    def exhausted(self, rounds: list[Round]) -> set[str]:
        """Finding ids whose every catalog pattern has been tried: tell the diagnosis they failed."""
        tried = {r.pattern_id for r in rounds if r.pattern_id}
        out = set()
        for fid in {f for r in rounds for f in r.finding_ids}:
            patterns = {p.id for p in self.catalog.values() if fid in p.finding_ids}
            if patterns and patterns <= tried:
                out.add(fid)
        return out

    def open_index(self) -> Any:
        """The knowledge index for one diagnosis, or None. Opened per round and closed after it: the embedded
        engine locks its files, and a run of many minutes must not lock out `kopt search` or `kopt ingest`."""
        try:
            from kopt.index import open_index

            return open_index(self.settings)
        except Exception:  # no index is a normal offline state; L1/L3 still work
            return None

    def hypotheses(self, findings: list[Finding], tried: set[str], done: set[str] = frozenset(),
                   kinds: Iterable[str] | None = None) -> list[Hypothesis]:
        """Untried (finding, pattern) pairs in the diagnosis' order: root causes first, recipes before the LLM (one
        LLM hypothesis, always untried: it weighs every finding itself). `done`: patterns whose fix was already
        tried under any finding; `kinds`: the current kernel's (L1's view)."""
        from kopt.rewrite.recipes import RECIPES

        mode = self.run_row.options["proposer"]
        recipe_hyps, llm_hyps = [], [Hypothesis(None, None, None)]
        for f in findings:
            if f.id in SYMPTOMS and not f.patterns:
                continue
            for pid in pattern_order(f, self.catalog, kinds):
                pattern = self.catalog.get(pid)
                if pattern and pattern.recipe_name in RECIPES and pid not in done:
                    recipe_hyps.append(Hypothesis(f, pid, pattern.recipe_name, dict(pattern.recipe.get("params") or {})))
        recipe_hyps = [h for h in recipe_hyps if h.key not in tried]
        return {"recipes": recipe_hyps, "llm": llm_hyps, "auto": recipe_hyps + (llm_hyps if self.llm_ready() else [])}[mode]

    def llm_ready(self) -> bool:
        return bool(self.settings.llm_provider)

    def propose(self, hyp: Hypothesis, source: str, skipped: list[str]) -> Candidate | None:
        from kopt.rewrite.cst import NotApplicable
        from kopt.rewrite.recipes import Context, propose

        task = self.task()
        ctx = Context(params=hyp.params, kernel_lines=hyp.finding.kernel_lines, tolerance=task.tolerance,
                      cases=task.cases + task.held_out)
        try:
            proposal = propose(hyp.recipe, source, ctx)
        except NotApplicable as exc:
            skipped.append(f"{hyp.key} ({hyp.recipe}): {exc}")
            return None
        self.proposal = proposal
        return Candidate(proposal.variants[0].source, proposal.variants[0].label, f"recipe:{hyp.recipe}",
                         proposal.summary)

    def llm_round(self, n: int, rounds: list[Round], best: Round | None, source: str, findings: list[Finding],
                  state: dict[str, Any], t0: float, request: dict[str, Any] | None = None,
                  case_facts: list[str] | None = None) -> None:
        """One LLM request, its candidate validated and timed, committed as round n. `request`: the pending one
        to ask again (a resumed run); otherwise the prompt is built for the run's grounding (`case_facts`: the
        diagnosis' per-case launch lines, full grounding only). ExchangeWaiting passes through, after the request
        and `state` are recorded."""
        from kopt.rewrite.llm import LLMProposer, build_prompt, chat_messages

        if self.llm is None:
            self.llm = LLMProposer(self.settings)
        self.proposal = None
        if request is None:
            history = [{"n": r.n, "hypothesis": r.hypothesis, "proposer": r.proposer, "outcome": r.outcome,
                        "message": r.message, "speedup_initial": r.speedup_initial} for r in rounds]
            patterns = {f.id: [self.catalog[p] for p in f.patterns if p in self.catalog] for f in findings}
            grounded = self.grounding == "full"
            prompt = build_prompt(source, self.performance(best), history, findings if grounded else None,
                                  patterns if grounded else None, case_facts if grounded else None)
            messages = chat_messages(prompt)
        else:
            messages = request["messages"]
        context = {"run_id": self.run_row.run_id, "round": n, "task": self.task_path.name, "grounding": self.grounding}

        def record(req: dict[str, Any], reply_path: Path) -> None:
            self.store.set_pending(self.run_row.run_id, n, req, str(reply_path), state)

        self.emit("phase", {"n": n, "phase": "asking the LLM"})
        reply = self.llm.propose(messages, source, context, record)
        candidate = Candidate(reply.source or "", "llm", f"llm:{reply.model}",
                              reply.summary or f"LLM gave no usable kernel: {reply.error}", reply.transcript)
        evidence = {"transcript": self.store.put(reply.transcript)}
        if state.get("findings"):
            evidence["findings"] = state["findings"]
        if not reply.source:
            result = Evaluation(Outcome.UNPARSABLE if reply.unparsable else Outcome.PROPOSER_ERROR, reply.error, [], [], [], None)
        else:
            self.emit("phase", {"n": n, "phase": "validating llm"})
            result = self.evaluate(n, candidate, best)
        self.commit(n, None, candidate, result, best, evidence, state["levels"], state["reached"], state["skipped"],
                    t0 - state["diagnosis_s"] if request is not None else t0, state["finding_ids"])

    def case_facts(self, diag: Any, best: Round | None) -> list[str] | None:
        """The diagnosis' launches per case, each beside its measured roofline fraction, for the full prompt."""
        from kopt.diagnose.launch_facts import case_lines

        if diag.launch_facts is None:
            return None
        perf = self.performance(best)
        roofline = {i: c["roofline"] for i, c in enumerate(perf["cases"]) if c.get("roofline")} \
            if perf.get("available") else None
        return case_lines(diag.launch_facts, roofline)

    def performance(self, best: Round | None) -> dict[str, Any]:
        """The current best version's time and roofline fraction per case, for the prompt (both groundings)."""
        if not self.timed:
            return {"available": False, "reason": self.timing_reason}
        initial = initial_cases(self.run_row)
        times = self.best_times(best)
        roofline = best.roofline if best else [c["roofline"] for c in initial]
        return {"available": True, "cases": [{"case": c["case"], "ms": ms, "roofline": roof, "bound": c["bound"]}
                                             for c, ms, roof in zip(initial, times, roofline)]}

    def task(self):
        from kopt.task import load_task

        if self._task is None:
            self._task = load_task(self.task_path)
        return self._task

    # --- validation and timing -----------------------------------------------------------------

    def evaluate(self, n: int, candidate: Candidate, best: Round | None) -> Evaluation:
        """Validate (and time, with a GPU) the candidate, or each launch-config variant and keep the best.
        Several variants on a GPU are timed first and validated fastest first, until one passes: only the
        winner needs validating, and it is validated on every case before it can win."""
        from kopt.harness.guard import check_candidate

        proposal = self.proposal
        variants = [(v.label, v.source) for v in proposal.variants] if proposal else [(candidate.label, candidate.source)]
        fixed_launches = bool(proposal and proposal.recipe == "autotune" and len(proposal.variants) > 1)
        if not self.timed:
            # the interpreter runs only an autotuner's first config: validate new configs as fixed launches instead
            variants = variants[1:] if fixed_launches else variants[:1]
        trials: list[dict[str, Any]] = []
        staged: list[tuple[dict[str, Any], str, Path]] = []
        base = self.best_times(best)
        for i, (label, source) in enumerate(variants):
            trial: dict[str, Any] = {"label": label}
            trials.append(trial)
            problem = check_candidate(self.initial_source, source)
            if problem:
                trial["outcome"], trial["message"] = judge(problem, None, None, self.timing_reason, base)
                continue
            path = self.work / f"round{n}-{i}.py"
            path.write_text(source)
            staged.append((trial, source, path))
        if self.timed and len(staged) > 1:
            best_trial = self.time_then_validate(n, staged, base)
        else:
            best_trial = self.validate_then_time(n, staged, base)
        if fixed_launches and not self.timed:
            failed = [t for t in trials if t["outcome"] != Outcome.UNTIMED]
            pick = failed[0] if failed else dict(trials[0], outcome=Outcome.UNTIMED, message=(
                f"autotune needs a GPU to run; its {len(trials)} configs validated as fixed launches "
                f"({self.timing_reason})"))
            return Evaluation(pick["outcome"], pick["message"], [], [], trials, proposal.variants[0].source,
                           proposal.variants[0].label)
        if best_trial is None:
            first = trials[0]
            return Evaluation(first["outcome"], first["message"], [], [], trials, variants[0][1], first["label"])
        return Evaluation(best_trial["outcome"], f"{best_trial['label']}: {best_trial['message']}", best_trial["times"],
                       best_trial["roofline"], trials, best_trial["source"], best_trial["label"])

    def validate_then_time(self, n: int, staged: list, base: list[float | None]) -> dict[str, Any] | None:
        """Each variant validated, then timed when it passed; the fastest timed one (or None)."""
        best_trial = None
        for trial, source, path in staged:
            with ThreadPoolExecutor(max_workers=1) as pool:  # bench's reference outputs, made beside the validation
                seed = int.from_bytes(os.urandom(4), "little")
                ahead = pool.submit(bench_reference_or_none, self.task_path, seed) if self.timed else None
                v = self.validate(path)
                t = None
                trial.update(validation=asdict(v))
                if v.ok and self.timed:
                    self.emit("phase", {"n": n, "phase": f"timing {trial['label']}"})
                    t = bench_times(self.task_path, path, ahead.result(), seed)
                    trial.update(times=t.times, roofline=t.roofline)
            trial["outcome"], trial["message"] = judge(None, v, t, self.timing_reason, base)
            if not (t and t.ok):  # failed or untimed: no gain to compare
                continue
            trial["speedup_best"] = speedup(base, t.times)
            if best_trial is None or (trial["speedup_best"] or 0) > (best_trial["speedup_best"] or 0):
                best_trial = dict(trial, source=source)
        return best_trial

    def time_then_validate(self, n: int, staged: list, base: list[float | None]) -> dict[str, Any] | None:
        """Every variant timed, then validated fastest first until one passes; that one (or None)."""
        timed = []
        for trial, source, path in staged:
            self.emit("phase", {"n": n, "phase": f"timing {trial['label']}"})
            t = self.bench(path)
            trial.update(times=t.times, roofline=t.roofline)
            if not t.ok:
                trial["outcome"], trial["message"] = t.outcome, t.message
                continue
            trial["speedup_best"] = speedup(base, t.times)
            timed.append((trial, source, path, t))
        timed.sort(key=lambda x: x[0]["speedup_best"] or 0, reverse=True)
        for k, (trial, source, path, t) in enumerate(timed):
            self.emit("phase", {"n": n, "phase": f"validating {trial['label']}"})
            v = self.validate(path)
            trial.update(validation=asdict(v))
            trial["outcome"], trial["message"] = judge(None, v, t, self.timing_reason, base)
            if v.ok:
                for slower, *_ in timed[k + 1:]:
                    slower["outcome"], slower["message"] = Outcome.NOT_VALIDATED, f"slower than {trial['label']}"
                return dict(trial, source=source)
        return None

    def validate(self, path: Path) -> Validated:
        from kopt.harness.validate import validate

        return validation_summary(validate(self.task_path, path, timeout_s=300))

    def bench(self, path: Path) -> Timing:
        return bench_times(self.task_path, path)

    # --- recording -----------------------------------------------------------------------------

    def commit(self, n: int, hyp: Hypothesis | None, cand: Candidate, result: Evaluation, best: Round | None,
               evidence: dict[str, str], levels: list[dict], reached: str | None, skipped: list[str], t0: float,
               finding_ids: list[str] | None = None) -> None:
        """Store round n. `hyp` None: an LLM round, whose hypothesis is its reply's Change line and whose
        `finding_ids` are the findings its prompt showed (its key names the top one, for synthesis)."""
        evidence["trials"] = self.store.put_json(result.trials)
        f = hyp.finding if hyp else None
        label = result.label or cand.label
        hypothesis = cand.summary + (f" [{label}]" if label not in ("llm", "") else "")
        if f:
            where = f"{f.level} {f.id}" + (f" at line {', '.join(map(str, f.kernel_lines[:3]))}" if f.kernel_lines else "")
            hypothesis = f"{where}: {hypothesis}"
        rnd = record_round(self.store, self.run_row, n=n, hypothesis=hypothesis,
                           finding_ids=[f.id] if f else list(finding_ids or []),
                           pattern_id=hyp.pattern_id if hyp else None, proposer=cand.proposer, source=result.source,
                           outcome=result.outcome, message=result.message, times=result.times,
                           roofline=result.roofline, base=self.best_times(best), evidence=evidence,
                           level_reached=reached, levels=levels, skipped=skipped, seconds=time.monotonic() - t0)
        self.emit("round", {"round": rnd.to_dict()})

    def write_best(self, best: Round, rounds: list[Round]) -> Path:
        out = self.out or self.task_path.with_name(f"{self.task_path.stem}_kopt.py")
        header = best_header(self.run_row, best, rounds)
        out.parent.mkdir(parents=True, exist_ok=True)  # --out may name a folder that does not exist yet
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(header + self.store.get(best.candidate))
        os.replace(tmp, out)
        return out


def record_round(store: RoundsStore, run: Run, *, n: int, hypothesis: str, finding_ids: list[str],
                 pattern_id: str | None, proposer: str, source: str | None, outcome: str, message: str | None,
                 times: list[float | None], roofline: list[float | None], base: list[float | None],
                 evidence: dict[str, str], level_reached: str | None, seconds: float,
                 levels: list[dict] | None = None, skipped: list[str] | None = None) -> Round:
    """Store round n of `run`: the one way a round is recorded, for the loop and MCP `record_round` alike (one
    hypothesis key, one outcome list, speedups against the initial kernel and against `base`, the best so far)."""
    rnd = Round(
        run_id=run.run_id, n=n, level_reached=level_reached, hypothesis=hypothesis,
        hypothesis_key=hypothesis_key(finding_ids[0] if finding_ids else None, pattern_id),
        finding_ids=finding_ids, pattern_id=pattern_id, proposer=proposer,
        candidate=store.put(source) if source else None, outcome=Outcome(outcome).value, message=message,
        case_times=times, speedup_initial=speedup(run.baseline, times) if times else None,
        speedup_best=speedup(base, times) if times else None, evidence=evidence, levels=levels or [],
        skipped=skipped or [], roofline=roofline, seconds=round(seconds, 2))
    store.add_round(rnd)
    return rnd


def best_header(run: Run, best: Round, rounds: list[Round]) -> str:
    """A short comment on top of the written kernel: the speedup, the rounds that got there, their evidence."""
    wins = [r for r in rounds if r.outcome == Outcome.IMPROVED and r.n <= best.n]
    lines = [f"# Optimized by kopt (run {run.run_id}) from {Path(run.task_path).name}: "
             f"x{best.speedup_initial:.2f} geomean speedup over {len(best.case_times)} cases vs the original.",
             f"# {len(rounds)} rounds tried; the improvements that got here:"]
    for r in wins:
        lines.append(f"#   round {r.n} ({r.proposer}, diagnosis reached {r.level_reached}): {r.hypothesis[:150]}"
                     f" -> x{r.speedup_initial:.2f}")
    lines.append(f"# Details: kopt runs show {run.run_id}")
    return "\n".join(lines) + "\n"


def bench_reference_or_none(task_path: Path, seed: int) -> Any:
    """bench's reference outputs made ahead, or None when they fail (bench then runs and reports it itself)."""
    from kopt.harness.bench import bench_reference
    from kopt.harness.validate import ReferenceFailed

    try:
        return bench_reference(task_path, seed, 600)
    except (ReferenceFailed, KoptError):
        return None


def bench_times(task_path: Path, candidate: Path | None, reference: Any = None, seed: int | None = None) -> Timing:
    """Kernel ms and roofline fraction per case, through the sandboxed bench (`reference`: made ahead for `seed`)."""
    from kopt.harness.bench import bench

    try:  # callers validate what they accept
        r = bench(task_path, candidate, timeout_s=600, validate_first=False, reference=reference, seed=seed)
    except KoptError as exc:
        return Timing(False, outcome=Outcome.CRASH, message=str(exc))
    if not r.ok:
        return Timing(False, outcome=VALIDATION_TO_OUTCOME.get(r.reason or "", Outcome.CRASH), message=r.message)
    return Timing(True, [c.kernel_ms for c in r.cases], [c.roofline_fraction for c in r.cases], [c.case for c in r.cases],
                  [c.bound for c in r.cases])


def initial_cases(run: Run) -> list[dict[str, Any]]:
    """The initial kernel per case: the case, its ms, roofline fraction and bound (None where untimed)."""
    cases = run.initial.get("cases") or [{"case": i} for i in range(len(run.baseline))]
    bench = run.initial.get("bench") or [{} for _ in cases]
    return [{"case": c, "ms": ms, "roofline": b.get("roofline"), "bound": b.get("bound")}
            for c, ms, b in zip(cases, run.baseline, bench)]


def start_run(task_path: Path, store: RoundsStore, options: dict[str, Any], emit: Event) -> Run:
    """Validate (and time) the task's own kernel, then record a new run."""
    from kopt.harness.validate import validate
    from kopt.task import load_task

    load_task(task_path)  # a broken task file is a TaskError naming file:line
    timed, reason = timing_available()
    emit("phase", {"n": 0, "phase": "validating the initial kernel"})
    v = validate(task_path, timeout_s=300)
    if not v.ok:
        raise KoptError(f"{task_path}: the task's own kernel fails validation ({v.reason}): {v.message}")
    cases = load_task(task_path).cases
    baseline, roofline, bench = [None] * len(cases), [], []
    if timed:
        emit("phase", {"n": 0, "phase": "timing the initial kernel"})
        baseline, roofline, bench = time_initial(task_path)
    timing = {"available": timed, "reason": reason, "roofline": [x for x in roofline if x is not None]}
    initial = {"validated_cases": len(v.cases), "device": v.device, "note": v.held_out_note, "cases": cases,
               "bench": bench}
    return store.create_run(task_path, task_path.read_text(), options, baseline, timing, initial)


def time_initial(task_path: Path) -> tuple[list, list, list[dict[str, Any]]]:
    """(case times, roofline fractions, per-case bench facts) of the task's own kernel; a failure is a KoptError."""
    t = bench_times(task_path, None)
    if not t.ok:
        raise KoptError(f"{task_path}: timing the task's own kernel failed: {t.message}")
    return t.times, t.roofline, [{"roofline": x, "bound": b} for x, b in zip(t.roofline, t.bound)]


def time_untimed_baseline(store: RoundsStore, run: Run, emit: Event) -> Run:
    """A run started without a GPU and resumed on one: time its initial kernel now, so the rounds to come are
    timed against it (untimed rounds stay untimed). Runs of the same task in the store (the other arm of an
    ablation) share one measurement, taken under a lock."""
    import fcntl

    timed, reason = timing_available()
    if run.timing.get("available") or not timed:
        return run
    lock = store.root / "work" / f"baseline-{run.task_hash[:16]}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        twin = next((r for r in store.runs() if r.task_hash == run.task_hash and r.timing.get("available")
                     and r.initial.get("bench")), None)
        if twin is not None:
            baseline, bench = twin.baseline, twin.initial["bench"]
            roofline = [b["roofline"] for b in bench]
        else:
            emit("phase", {"n": 0, "phase": "timing the initial kernel (the run started without a GPU)"})
            baseline, roofline, bench = time_initial(Path(run.task_path))
        timing = {"available": True, "reason": reason, "roofline": [x for x in roofline if x is not None],
                  "from_run": twin.run_id if twin else None}
        store.set_baseline(run.run_id, baseline, timing, {**run.initial, "bench": bench})
    return store.run(run.run_id)


def _need_llm(options: dict[str, Any], settings: Settings) -> None:
    recorded = options.get("llm_exchange")
    if recorded and not settings.llm_provider and options["proposer"] != "recipes":
        raise KoptError(f"this run answers the LLM through the prompt exchange {recorded}: resume it with "
                        f"--llm-exchange {recorded} (or another LLM provider setting)")
    if options["proposer"] == "llm" and not settings.llm_provider:
        raise KoptError("--proposer llm needs an LLM: set llm_provider (and llm_model, llm_base_url) in kopt.toml "
                        "or KOPT_LLM_PROVIDER / KOPT_LLM_MODEL, or answer its requests as files with --llm-exchange DIR")
    if options.get("grounding", "full") == "none" and options["proposer"] != "llm":
        raise KoptError("--grounding none leaves the diagnosis out of the LLM's prompt: use it with --proposer llm "
                        "(recipes need the diagnosis)")


def use_exchange(settings: Settings, folder: str | Path | None) -> None:
    """--llm-exchange DIR: the LLM is the prompt exchange in DIR (kopt/exchange.py)."""
    if folder is not None:
        settings.llm_provider, settings.llm_exchange_dir = "exchange", Path(folder).resolve()


def optimize(task: str | Path | None = None, *, rounds: int | None = None, minutes: float | None = None,
             proposer: str | None = None, model: str | None = None, resume: str | None = None,
             out: str | Path | None = None, settings: Settings | None = None, on_event: Event | None = None,
             policy: str | None = None, tags: dict[str, Any] | None = None, grounding: str | None = None,
             llm_exchange: str | Path | None = None, more: int | None = None) -> dict[str, Any]:
    """Optimize a task (or --resume a run) and return the run summary; see the module docstring.
    `more` (with `resume`) runs that many rounds beyond the run's committed ones; `rounds` is a total.
    Ctrl-C (KeyboardInterrupt) marks the run `interrupted`, resumable, and propagates.
    `policy` is a POLICY_LEVEL key; `tags` (e.g. campaign, op, family) are kept in the run's options;
    `grounding` is a GROUNDINGS value (kept in the run; a resumed run keeps its own); `llm_exchange` a folder."""
    if policy is not None and policy not in POLICY_LEVEL:
        raise KoptError(f"unknown policy {policy!r}; use {', '.join(POLICY_LEVEL)}")
    if grounding is not None and grounding not in GROUNDINGS:
        raise KoptError(f"unknown grounding {grounding!r}; use {', '.join(GROUNDINGS)}")
    from kopt.config import load_settings
    from kopt.task import task_workspace

    # a new run's .kopt/ (rounds, work files) lives in its task's workspace, wherever kopt is started from
    settings = settings or load_settings(task_workspace(task) if task else None)
    if model:
        settings.llm_model = model
    use_exchange(settings, llm_exchange)
    exchange = str(settings.llm_exchange_dir) if settings.llm_provider == "exchange" else None
    emit = on_event or (lambda kind, data: None)
    if not resume and task is None:
        raise KoptError("give a TASK file, or --resume RUN")
    if not resume and not Path(task).is_file():
        raise KoptError(f"{task}: no such task file")
    store = RoundsStore(settings.state_dir)
    try:
        if resume:
            run = store.run(resume)
            task_path = Path(run.task_path)
            if task and Path(task).resolve() != task_path:
                raise KoptError(f"run {run.run_id} optimizes {task_path}, not {task}")
            if not task_path.is_file() or store.put(task_path.read_text()) != run.task_hash:
                raise KoptError(f"{task_path}: the task file changed (or is gone) since run {run.run_id} started; "
                                "start a new run")
            if grounding is not None and grounding != run.options.get("grounding", "full"):
                raise KoptError(f"run {run.run_id} has grounding {run.options.get('grounding', 'full')}; an arm "
                                "cannot change mid-run (start a new run)")
            if more is not None:
                rounds = len(store.rounds(run.run_id)) + more
            options = {**run.options, **{k: v for k, v in (("rounds", rounds), ("minutes", minutes),
                                                           ("proposer", proposer), ("policy", policy))
                                           if v is not None}}
            _need_llm(options, settings)
            if settings.llm_provider:  # the LLM this resume answers with (the exchange folder, or a live one)
                options["llm_exchange"] = exchange
            store.set_status(run.run_id, "running", None, options)
            run = time_untimed_baseline(store, store.run(run.run_id), emit)
        else:
            task_path = Path(task).resolve()
            options = {**(tags or {}), "rounds": rounds or 5, "minutes": minutes, "proposer": proposer or "auto",
                       "model": settings.llm_model, "policy": policy or "progressive", "grounding": grounding or "full",
                       "llm_exchange": exchange}
            _need_llm(options, settings)
            run = start_run(task_path, store, options, emit)
        optimizer = Optimizer(task_path, settings, store, run, emit, Path(out).resolve() if out else None)
        try:
            return optimizer.run()
        except KeyboardInterrupt:  # the committed rounds stay; --resume goes on from the last one
            store.set_status(run.run_id, "interrupted", "interrupted (Ctrl-C)")
            raise
    finally:
        store.close()
