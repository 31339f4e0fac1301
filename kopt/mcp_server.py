"""kopt as an MCP server, so coding agents (Claude Code, Codex, Cursor, any MCP client) can drive the same
harness, diagnosis and rounds store as `kopt optimize`, with the same discipline.

Every tool has typed inputs and a typed (pydantic) result. Every path argument is resolved against the
workspace, symlinks followed, and refused when it lands outside. Heavy work runs in a worker thread while
the call reports progress; anything the user can act on (a KoptError) comes back as a one-line tool
error, and a bug comes back as a tool error naming it instead of killing the server.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable, Literal, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from kopt.errors import KoptError

log = logging.getLogger("kopt.mcp")
T = TypeVar("T")
HEARTBEAT_S = 2.0  # a long step reports progress at least this often
IR_LIMIT = 60_000  # characters of one IR stage returned per kernel (ask for a kernel to see all of it)
INSTRUCTIONS = (
    "kopt finds out why a Triton kernel is slow and makes it faster. Discipline: diagnose first (L1 -> L4, "
    "deeper only when the evidence is insufficient); one hypothesis per round, citing its evidence; every "
    "candidate goes through record_round, which validates and times it before it is recorded. Paths are "
    "relative to the workspace."
)

# --- typed results ---------------------------------------------------------------------------------


class Loose(BaseModel):
    model_config = {"extra": "ignore"}


class SearchHit(Loose):
    cite: str = Field(description="path:start-end@version of the chunk")
    score: float
    corpus: str | None = None
    kind: str | None = None
    symbol: str | None = None
    text: str


class SearchResult(Loose):
    query: str
    hits: list[SearchHit]


class KernelIR(Loose):
    name: str
    location: str = Field(description="task file:line of the kernel's def")
    target: str
    grid: list[int]
    num_warps: int | None = None
    num_stages: int | None = None
    registers: int | None = None
    spill_stores: int = 0
    spill_loads: int = 0
    shared_bytes: int = 0
    specialization: dict[str, list[str]] = {}
    stage: str | None = None
    ir: str | None = Field(None, description="the requested stage's text (truncated to IR_LIMIT characters)")
    truncated: bool = False


class CompileResult(Loose):
    task: str
    case: int
    kernels: list[KernelIR]


class EvidenceModel(Loose):
    level: str
    source: str
    summary: str
    data: dict[str, Any] = {}
    location: str | None = None


class FindingModel(Loose):
    id: str
    level: str
    message: str
    confidence: float
    evidence: list[EvidenceModel] = []
    kernel_lines: list[int] = []
    conditions: list[str] = []
    patterns: list[str] = []


class LevelModel(Loose):
    level: str
    status: str = Field(description="used | not_needed | skipped | unavailable")
    reason: str
    findings: int = 0
    seconds: float = 0.0


class DiagnoseResult(Loose):
    task: str
    target: str
    root_cause: FindingModel | None
    findings: list[FindingModel]
    levels: list[LevelModel]


class CaseCheckModel(Loose):
    case: dict[str, Any]
    held_out: bool
    ok: bool
    seed: int
    max_abs: float = 0.0
    max_rel: float = 0.0
    reason: str | None = None


class ValidateResult(Loose):
    ok: bool
    device: str
    reason: str | None = None
    message: str | None = None
    cases: list[CaseCheckModel] = []
    held_out_note: str | None = None
    elapsed_s: float = 0.0


class CaseTimingModel(Loose):
    case: dict[str, Any]
    kernel_ms: float
    kernel_ms_min: float
    kernel_ms_p90: float
    event_ms: float
    runs: int
    gbps: float | None = None
    tflops: float | None = None
    roofline_fraction: float | None = None
    bound: str | None = None


class BenchResult(Loose):
    ok: bool
    device: str = ""
    reason: str | None = None
    message: str | None = None
    cases: list[CaseTimingModel] = []
    ceilings: dict[str, Any] = {}


class ProfiledKernel(Loose):
    name: str
    grid: str = ""
    block: str = ""
    metrics: dict[str, Any] = {}
    rules: list[dict[str, Any]] = []


class ProfileResult(Loose):
    available: bool
    reason: str = ""
    kernels: list[ProfiledKernel] = []
    findings: list[FindingModel] = []


class EvidenceIn(BaseModel):
    """One observation an agent cites for its hypothesis."""

    level: Literal["L1", "L2", "L3", "L4"]
    source: str = Field(description="pattern | timing | ncu | ttir | ttgir | llir | ptx | sass | trajectory | "
                                    "compiler_source | pass_note | source | compile_log")
    summary: str
    location: str | None = Field(None, description="kernel file:line, or compiler path:line@version")


class RunModel(Loose):
    run_id: str
    task_path: str
    status: str
    stop_reason: str | None = None
    created: float
    baseline: list[float | None] = []
    timing: dict[str, Any] = {}
    initial: dict[str, Any] = {}


class RoundModel(Loose):
    run_id: str
    n: int
    level_reached: str | None = None
    hypothesis: str
    finding_ids: list[str] = []
    pattern_id: str | None = None
    proposer: str
    candidate: str | None = Field(None, description="artifact hash of the candidate source")
    outcome: str = Field(description="compile_error | incorrect | timeout | crash | slower | improved | untimed | rejected")
    message: str | None = None
    case_times: list[float | None] = []
    speedup_initial: float | None = None
    speedup_best: float | None = None
    evidence: dict[str, str] = Field({}, description="label -> artifact hash (candidate, validation, agent_evidence, ...)")
    roofline: list[float | None] = []


class RunsResult(Loose):
    runs: list[RunModel] = []
    rounds: list[RoundModel] = Field([], description="the rounds of the run asked for, in order")


class SynthesisAction(Loose):
    kind: str = Field(description="create | update | skip")
    pattern_id: str
    reason: str
    wins: int = 0
    tries: int = 0
    rounds: list[str] = []
    families: list[str] = []
    path: str | None = None


class SynthesizeResult(Loose):
    out: str
    dry_run: bool
    index: str
    actions: list[SynthesisAction]


class AskResult(Loose):
    question: str
    kernel: str | None = None
    line: int | None = None
    facts: list[str] = Field([], description="what the lowered code does at the line")
    findings_text: list[str] = []
    mechanism: list[str] = Field([], description="why the compiler does it (pass notes)")
    fix: list[str] = []
    citations: list[dict[str, Any]] = Field([], description="cite (path:lines@version), symbol, why, excerpt")
    symbols: list[str] = []
    prose: str | None = None
    llm: str | None = None
    notes: list[str] = []


# --- the workspace -------------------------------------------------------------------------------


class Workspace:
    """The one folder the server may read and write; paths from the client resolve inside it or are refused."""

    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise KoptError(f"{root}: workspace is not a directory")

    def path(self, arg: str, *, must_exist: bool = True) -> Path:
        raw = Path(arg).expanduser()
        real = (raw if raw.is_absolute() else self.root / raw).resolve()
        if not real.is_relative_to(self.root):
            raise ToolError(f"{arg}: outside the workspace {self.root} (symlinks resolved); refused")
        if must_exist and not real.is_file():
            raise ToolError(f"{arg}: no such file in the workspace {self.root}")
        return real

    def settings(self):
        from kopt.config import load_settings

        return load_settings(self.root)


# --- running work off the event loop ----------------------------------------------------------------

_IN_PROCESS = threading.Lock()  # compiling patches Triton's JIT globally: one in-process compile at a time


def _as_tool_error(exc: BaseException) -> ToolError:
    if isinstance(exc, ToolError):
        return exc
    if isinstance(exc, KoptError):
        return ToolError(str(exc))
    log.exception("tool failed")
    return ToolError(f"internal error: {type(exc).__name__}: {exc} (a kopt bug; the server keeps running)")


async def _step(ctx: Context, done: float, total: float, message: str, fn: Callable[[], T], *,
                exclusive: bool = False, phase: list[str] | None = None) -> T:
    """Run `fn` in a worker thread, reporting progress now and every HEARTBEAT_S until it finishes;
    `fn` may append to `phase` to say what it is doing now."""
    start = time.monotonic()

    def work() -> T:
        if not exclusive:
            return fn()
        with _IN_PROCESS:
            return fn()

    async def heartbeat() -> None:
        while True:
            now = phase[-1] if phase else message
            await ctx.report_progress(done, total, f"{now} ({time.monotonic() - start:.0f} s)")
            await anyio.sleep(HEARTBEAT_S)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(heartbeat)
            try:
                return await anyio.to_thread.run_sync(work)
            finally:
                tg.cancel_scope.cancel()
    except BaseException as exc:  # an ExceptionGroup from the task group, or the work's own error
        inner = exc.exceptions[0] if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1 else exc
        if isinstance(inner, Exception):
            raise _as_tool_error(inner) from inner
        raise


def _finding(f: Any) -> FindingModel:
    return FindingModel.model_validate(f.to_dict())


# --- the rounds store --------------------------------------------------------------------------


def _with_store(ws: Workspace, fn: Callable[[Any], T]) -> T:
    """Open the workspace's rounds store in the calling (worker) thread: SQLite handles stay in one thread."""
    from kopt.rounds.store import RoundsStore

    store = RoundsStore(ws.root / ".kopt")
    try:
        return fn(store)
    finally:
        store.close()


# --- the server --------------------------------------------------------------------------------------


def build_server(workspace: Path) -> MCPServer:
    """An MCPServer whose tools act on `workspace` and nothing outside it."""
    ws = Workspace(workspace)
    server = MCPServer("kopt", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool()
    async def search(query: str, ctx: Context, corpus: list[str] | None = None, k: int = 8,
                     mode: Literal["hybrid", "dense", "sparse"] = "hybrid", kind: str | None = None,
                     path: str | None = None) -> SearchResult:
        """Hybrid search over the ingested knowledge: compiler source, pass notes, the pattern catalog.
        Cite hits by their `cite` (path:lines@version). `path` may be a glob over compiler paths."""
        def run() -> SearchResult:
            from kopt.index import open_index

            index = open_index(ws.settings())
            try:
                hits = index.search(query, corpus=corpus or None, k=k, mode=mode, filters={"kind": kind, "path": path})
            finally:
                index.close()
            return SearchResult(query=query, hits=[
                SearchHit(cite=h.cite(), score=h.score, corpus=h.meta.get("corpus"), kind=h.meta.get("kind"),
                          symbol=h.meta.get("symbol"), text=h.text) for h in hits])

        return await _step(ctx, 0, 1, "searching the index", run, exclusive=True)

    @server.tool()
    async def ask(question: str, ctx: Context, kernel: str | None = None, target: str | None = None,
                  prose: bool = False) -> AskResult:
        """Answer a why-question about a kernel or the compiler from evidence: the L3 facts at a line, the
        mechanism from the pass notes, cited compiler source, the fix. `kernel` is TASK or TASK:LINE (a workspace
        path). `prose`: also have the configured LLM write it up (the structured evidence is always there)."""
        from kopt.ask import ask as kopt_ask, parse_kernel_arg

        path, line = parse_kernel_arg(kernel) if kernel else (None, None)
        path = ws.path(str(path)) if path else None

        def run() -> AskResult:
            from kopt.llm import make_llm

            settings = ws.settings()
            settings.target = target or settings.target
            llm = make_llm(settings) if prose else None
            answer = kopt_ask(question, kernel=path, line=line, settings=settings, llm=llm)
            return AskResult.model_validate(answer.to_dict())

        return await _step(ctx, 0, 1, "gathering evidence and compiler source", run, exclusive=True)

    @server.tool()
    async def compile_ir(task: str, ctx: Context, stage: Literal["ttir", "ttgir", "llir", "ptx", "sass"] | None = None,
                         target: str | None = None, case: int = 0, kernel: str | None = None) -> CompileResult:
        """AOT-compile a task's kernels for a GPU target (e.g. sm_90; no GPU needed): resource usage per kernel,
        and the text of one IR stage when `stage` is given (`kernel` narrows it to one kernel by name)."""
        path = ws.path(task)

        def run() -> CompileResult:
            from kopt.harness.compile import compile_task
            from kopt.task import load_task

            kernels = compile_task(load_task(path), case=case, target=target or ws.settings().target,
                                   stages=[stage] if stage else None, cache_dir=ws.root / ".kopt" / "cache" / "compile")
            if kernel:
                kernels = [k for k in kernels if k.name == kernel]
                if not kernels:
                    raise ToolError(f"{task}: no kernel named {kernel!r} launched for case {case}")
            out = []
            for k in kernels:
                text = k.asm.get(stage) if stage else None
                out.append(KernelIR(
                    name=k.name, location=f"{k.source_file}:{k.first_line}", target=k.target, grid=k.grid,
                    num_warps=k.options.get("num_warps"), num_stages=k.options.get("num_stages"),
                    registers=k.registers, spill_stores=k.spill_stores, spill_loads=k.spill_loads,
                    shared_bytes=k.shared_bytes, specialization=k.specialization, stage=stage,
                    ir=text[:IR_LIMIT] if text else text, truncated=bool(text and len(text) > IR_LIMIT)))
            return CompileResult(task=str(path), case=case, kernels=out)

        return await _step(ctx, 0, 1, f"compiling {path.name}", run, exclusive=True)

    @server.tool()
    async def diagnose(task: str, ctx: Context, level: Literal["auto", "L1", "L2", "L3", "L4"] = "auto",
                       gpu: bool = True, case: int | None = None, failed: list[str] | None = None) -> DiagnoseResult:
        """Why is this kernel slow? Escalates L1 -> L4 and stops at the first level with a grounded hypothesis
        (`level` forces a depth). `failed`: finding or pattern ids already tried without a win, to go deeper."""
        path = ws.path(task)

        def run() -> DiagnoseResult:
            from kopt.diagnose.escalate import diagnose as kopt_diagnose

            d = kopt_diagnose(path, level=level, gpu=gpu, case=case, failed=failed or (), settings=ws.settings())
            findings = [_finding(f) for f in d.findings]
            return DiagnoseResult(task=d.task, target=d.target, root_cause=findings[0] if findings else None,
                                  findings=findings, levels=[LevelModel.model_validate(vars(r)) for r in d.levels])

        return await _step(ctx, 0, 1, f"diagnosing {path.name}", run, exclusive=True)

    @server.tool()
    async def validate(task: str, ctx: Context, candidate: str | None = None, seed: int | None = None,
                       timeout_s: float = 600.0) -> ValidateResult:
        """Check the task's kernels (or a candidate file's entry) against the reference on every case, fresh
        inputs, outputs poisoned, held-out shapes; in a sandboxed child (CPU: the Triton interpreter)."""
        path, cand = ws.path(task), ws.path(candidate) if candidate else None

        def run() -> ValidateResult:
            from kopt.harness.validate import validate as kopt_validate

            return ValidateResult.model_validate(kopt_validate(path, cand, timeout_s=timeout_s, seed=seed).to_dict())

        return await _step(ctx, 0, 1, f"validating {(cand or path).name}", run)

    @server.tool()
    async def bench(task: str, ctx: Context, candidate: str | None = None, cases: list[int] | None = None,
                    timeout_s: float = 900.0) -> BenchResult:
        """Kernel-only GPU timing (L2 flushed, fresh inputs, median of many runs) on the device roofline.
        Needs a CUDA GPU; without one this is a tool error saying so."""
        path, cand = ws.path(task), ws.path(candidate) if candidate else None

        def run() -> BenchResult:
            from kopt.harness.bench import bench as kopt_bench

            return BenchResult.model_validate(kopt_bench(path, cand, timeout_s=timeout_s, cases=cases).to_dict())

        return await _step(ctx, 0, 1, f"timing {(cand or path).name}", run)

    @server.tool()
    async def profile(task: str, ctx: Context, case: int = 0) -> ProfileResult:
        """Nsight Compute metrics and rule messages for one call of the task (L2 evidence), with the findings
        they support. Without a GPU or ncu: available=false and the reason."""
        path = ws.path(task)

        def run() -> ProfileResult:
            from kopt.diagnose.escalate import gpu_unavailable

            why = gpu_unavailable()
            if why:
                return ProfileResult(available=False, reason=why)
            from kopt.diagnose.l2 import result_findings
            from kopt.diagnose.ncu import profile_task

            result = profile_task(path, case)
            return ProfileResult(
                available=result.available, reason=result.reason,
                kernels=[ProfiledKernel.model_validate({**vars(k), "rules": [vars(r) if not isinstance(r, dict) else r
                                                                             for r in k.rules]})
                         for k in result.kernels],
                findings=[_finding(f) for f in result_findings(result)])

        return await _step(ctx, 0, 1, f"profiling {path.name}", run)

    @server.tool()
    async def start_run(task: str, ctx: Context, note: str | None = None) -> RunModel:
        """Open an optimization run: validates the task's own kernel and times it (GPU) as the baseline.
        Then diagnose, and send every candidate through record_round, one hypothesis per round."""
        path = ws.path(task)
        phase: list[str] = []

        def create(store) -> RunModel:
            from kopt.optimize import start_run as kopt_start_run

            run = kopt_start_run(path, store, {"driver": "mcp", "note": note},
                                 lambda kind, data: phase.append(data.get("phase", kind)))
            return RunModel.model_validate(run.to_dict())

        return await _step(ctx, 0, 1, f"starting a run on {path.name}", lambda: _with_store(ws, create), phase=phase)

    @server.tool()
    async def record_round(run_id: str, hypothesis: str, evidence: list[EvidenceIn], candidate: str, ctx: Context,
                           finding_ids: list[str] | None = None, pattern_id: str | None = None,
                           level_reached: Literal["L1", "L2", "L3", "L4"] | None = None,
                           proposer: str = "llm:agent") -> RoundModel:
        """Record one round: ONE hypothesis, the evidence it rests on (cited), and the candidate file (a full
        task file; only kernels and their launch may change) that acts on it. The harness validates it on every
        case and the held-out shapes and times it (GPU) before the round is stored: a wrong candidate is
        recorded as incorrect, an untimed one (no GPU) as untimed, and only a measured gain as improved."""
        from kopt.diagnose.findings import FINDING_IDS
        from kopt.harness.validate import validate as kopt_validate
        from kopt.optimize import bench_times, judge, speedup, validation_summary
        from kopt.rewrite.guard import check_candidate
        from kopt.rounds.store import Round, best_round

        cand = ws.path(candidate)
        if not evidence:
            raise ToolError("a round needs evidence: cite at least one observation (level, source, summary)")
        unknown = [f for f in finding_ids or [] if f not in FINDING_IDS]
        if unknown:
            raise ToolError(f"unknown finding id(s) {', '.join(unknown)}; known: {', '.join(sorted(FINDING_IDS))}")
        try:
            source = cand.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise ToolError(f"{candidate}: cannot read the candidate ({exc})") from exc
        start = time.monotonic()

        def read(store):
            return store.run(run_id), store.get(store.run(run_id).task_hash)

        run, initial_source = await _step(ctx, 0, 4, "opening the run", lambda: _with_store(ws, read))
        task_path = Path(run.task_path)
        problem = check_candidate(initial_source, source)
        checked = timed = None
        if problem is None:
            checked = await _step(ctx, 1, 4, f"validating {cand.name}",
                                  lambda: kopt_validate(task_path, cand, timeout_s=300))
            if checked.ok and run.timing.get("available"):
                timed = await _step(ctx, 2, 4, f"timing {cand.name}", lambda: bench_times(task_path, cand))

        def commit(store) -> RoundModel:
            rounds = store.rounds(run.run_id)
            best = best_round(rounds)
            artifacts = {"candidate": store.put(source),
                         "agent_evidence": store.put_json([e.model_dump() for e in evidence])}
            validation = validation_summary(checked) if checked is not None else None
            base = best.case_times if best else run.baseline
            outcome, message = judge(problem, validation, timed, run.timing.get("reason"), base)
            times, roofline = (timed["times"], timed["roofline"]) if timed and timed["ok"] else ([], [])
            if checked is not None:
                artifacts["validation"] = store.put_json(checked.to_dict())
            rnd = Round(
                run_id=run.run_id, n=len(rounds) + 1, level_reached=level_reached, hypothesis=hypothesis.strip(),
                hypothesis_key=f"{finding_ids[0] if finding_ids else 'agent'}/{pattern_id or 'llm'}",
                finding_ids=finding_ids or [], pattern_id=pattern_id, proposer=proposer,
                candidate=artifacts["candidate"], outcome=outcome, message=message, case_times=times,
                speedup_initial=speedup(run.baseline, times) if times else None,
                speedup_best=speedup(base, times) if times else None,
                evidence=artifacts, roofline=roofline, seconds=round(time.monotonic() - start, 2))
            store.add_round(rnd)
            return RoundModel.model_validate(rnd.to_dict())

        return await _step(ctx, 3, 4, "recording the round", lambda: _with_store(ws, commit))

    @server.tool()
    async def runs(ctx: Context, run_id: str | None = None) -> RunsResult:
        """The workspace's optimization runs; with `run_id` (or a unique prefix), that run and its rounds."""
        def read(store) -> RunsResult:
            if run_id is None:
                return RunsResult(runs=[RunModel.model_validate(r.to_dict()) for r in store.runs()])
            one = store.run(run_id)
            return RunsResult(runs=[RunModel.model_validate(one.to_dict())],
                              rounds=[RoundModel.model_validate(r.to_dict()) for r in store.rounds(one.run_id)])

        return await _step(ctx, 0, 1, "reading the rounds store", lambda: _with_store(ws, read))

    @server.tool()
    async def synthesize(ctx: Context, runs: list[str] | None = None, dry_run: bool = False,
                         index: bool = True) -> SynthesizeResult:
        """The slow pass: group validated wins across runs into new or re-weighted catalog patterns (written to
        KOPT_HOME/patterns and, unless index=false, upserted into the index so L1 finds them next time)."""
        def run() -> SynthesizeResult:
            from kopt.config import kopt_home
            from kopt.synthesize import synthesize as kopt_synthesize, upsert_index

            if not (ws.root / ".kopt" / "rounds.sqlite").is_file():
                raise ToolError(f"{ws.root}: no rounds store in this workspace yet (start_run and record_round first)")
            out = kopt_home() / "patterns"
            actions = _with_store(ws, lambda store: kopt_synthesize(store, out, run_ids=runs, dry_run=dry_run))
            written = [Path(a.path) for a in actions if a.path and a.kind != "skip"]
            fresh = [p for p in written if "kind: synthesized" in p.read_text()] if not dry_run else []
            note = ("dry run: nothing written" if dry_run else
                    upsert_index(ws.settings(), fresh) if index else "index: skipped (index=false)")
            return SynthesizeResult(out=str(out), dry_run=dry_run, index=note,
                                    actions=[SynthesisAction.model_validate(a.to_dict()) for a in actions])

        return await _step(ctx, 0, 1, "synthesizing patterns from validated rounds", run, exclusive=True)

    return server


def serve(workspace: Path, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8765) -> None:
    """Run the server until the client goes away. The process works inside the workspace, so caches and
    the rounds store land under its .kopt/."""
    server = build_server(workspace)
    os.chdir(Path(workspace).resolve())
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port)
