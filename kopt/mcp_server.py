"""kopt as an MCP server, so coding agents (Claude Code, Codex, Cursor, any MCP client) can drive the same
harness, diagnosis and rounds store as `kopt optimize`, with the same discipline.

Every tool has typed, bounded inputs and a typed (pydantic) result. Every path argument is resolved against
the workspace, symlinks followed, and refused when it lands outside; nothing is written outside it. No task or
candidate code runs in this process: compile_ir, validate, bench and record_round go through the harness's
contained sandbox; diagnose, ask with a kernel and start_run (which need the index, the settings and the
rounds store) run in a child of this module (`python -m kopt.mcp_server`). A task that exits, crashes or
hangs at import fails that one call. Every tool has a time limit
and runs off the event loop, so no call can block the others; a bad argument or a user's mistake is a
one-line tool error naming it, and a bug is a tool error naming it instead of killing the server.
"""

from __future__ import annotations

import dataclasses
import functools
import hmac
import json
import logging
import operator
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import AfterValidator, BaseModel, Field, ValidationError, create_model

from kopt.diagnose.escalate import LEVEL_STATUSES, LevelRun
from kopt.errors import KoptError
from kopt.harness.bench import BenchResult as BenchOutcome
from kopt.harness.bench import CaseTiming
from kopt.harness.validate import CaseCheck, ValidationResult
from kopt.rounds.store import Round, Run
from kopt.vocabulary import EVIDENCE_SOURCES, ROUND_OUTCOMES, Evidence, Finding, Level

log = logging.getLogger("kopt.mcp")
T = TypeVar("T")
HEARTBEAT_S = 2.0  # a long step reports progress at least this often
IR_LIMIT = 60_000  # characters of one IR stage returned per kernel (ask for a kernel to see all of it)
# Seconds each tool may take before its call fails (its child is killed); `kopt mcp --tool-timeout` changes them.
TOOL_LIMITS_S: dict[str, float] = {
    "search": 120, "ask": 600, "compile_ir": 600, "diagnose": 1200, "validate": 1200, "bench": 1800,
    "profile": 1200, "start_run": 2400, "record_round": 3600, "runs": 60, "synthesize": 900}
HARNESS_GRACE_S = 30.0  # a sandboxed harness call ends this much before its tool's limit, to report its own timeout


def _no_nul(text: str) -> str:
    if "\0" in text:
        raise ValueError("contains a NUL byte")
    return text


def _bounded(limit: int, minimum: int = 0):
    return Annotated[str, Field(min_length=minimum, max_length=limit), AfterValidator(_no_nul)]


Query = _bounded(4_000, 1)  # a search query or a question: long enough for any real one, short enough to be fast
Prose = _bounded(20_000)  # a hypothesis, an evidence summary, a note
Name = _bounded(200, 1)  # an id, a target, a corpus, a kernel name
PathArg = _bounded(1_024, 1)  # a workspace path (Linux allows 4096; nobody needs more than a page)
MAX_ITEMS = 64  # entries of any list argument
NonNegative = Annotated[int, Field(ge=0)]
Names = Annotated[list[Name], Field(max_length=MAX_ITEMS)]
Indices = Annotated[list[NonNegative], Field(max_length=MAX_ITEMS)]
INSTRUCTIONS = (
    "kopt finds out why a Triton kernel is slow and makes it faster. Discipline: diagnose first (L1 -> L4, "
    "deeper only when the evidence is insufficient); one hypothesis per round, citing its evidence; every "
    "candidate goes through record_round, which validates and times it before it is recorded. Paths are "
    "relative to the workspace."
)

# --- typed results ---------------------------------------------------------------------------------


class Loose(BaseModel):
    model_config = {"extra": "ignore"}


def _swap(tp: Any, models: dict[type, type[BaseModel]]) -> Any:
    """`tp` with each domain dataclass in it replaced by its derived model (list[Evidence] -> list[EvidenceModel])."""
    if tp in models:
        return models[tp]
    args = get_args(tp)
    if not args:
        return tp
    swapped = tuple(_swap(a, models) for a in args)
    origin = get_origin(tp)
    return functools.reduce(operator.or_, swapped) if origin in (Union, types.UnionType) else origin[swapped]


_DERIVED: dict[type, type[BaseModel]] = {}


def schema_of(cls: type, name: str, *, base: type[BaseModel] = Loose, exclude: tuple[str, ...] = (),
              doc: str | None = None, **overrides: Any) -> type[BaseModel]:
    """The MCP schema of a domain dataclass: its fields, types and defaults, so the two cannot drift apart.
    `overrides`: field -> (type, default or Field(...)) where an argument needs bounds or a description."""
    hints = get_type_hints(cls)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name in exclude:
            continue
        default = (f.default if f.default is not dataclasses.MISSING
                   else Field(default_factory=f.default_factory) if f.default_factory is not dataclasses.MISSING
                   else ...)
        fields[f.name] = overrides.get(f.name, (_swap(hints[f.name], _DERIVED), default))
    model = create_model(name, __base__=base, __module__=__name__, __doc__=doc, **fields)
    _DERIVED.setdefault(cls, model)
    return model


EvidenceModel = schema_of(Evidence, "EvidenceModel")
FindingModel = schema_of(Finding, "FindingModel")
LevelModel = schema_of(LevelRun, "LevelModel", status=(str, Field(description=" | ".join(LEVEL_STATUSES))))
CaseCheckModel = schema_of(CaseCheck, "CaseCheckModel")
ValidateResult = schema_of(ValidationResult, "ValidateResult")
CaseTimingModel = schema_of(CaseTiming, "CaseTimingModel")
BenchResult = schema_of(BenchOutcome, "BenchResult")
RunModel = schema_of(Run, "RunModel")
RoundModel = schema_of(Round, "RoundModel", outcome=(str, Field(description=" | ".join(ROUND_OUTCOMES))),
                       candidate=(str | None, Field(None, description="artifact hash of the candidate source")),
                       evidence=(dict[str, str], Field({}, description="label -> artifact hash (candidate, validation, "
                                                                        "agent_evidence, ...)")))
EvidenceIn = schema_of(Evidence, "EvidenceIn", base=BaseModel, exclude=("data",), level=(Level, ...),
                       doc="One observation an agent cites for its hypothesis.",
                       source=(Name, Field(description=" | ".join(EVIDENCE_SOURCES))), summary=(Prose, ...),
                       location=(PathArg | None, Field(None, description="kernel file:line, or compiler "
                                                                          "path:line@version")))


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


class DiagnoseResult(Loose):
    task: str
    target: str
    root_cause: FindingModel | None
    findings: list[FindingModel]
    levels: list[LevelModel]


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


Evidences = Annotated[list[EvidenceIn], Field(max_length=MAX_ITEMS)]


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

    def path(self, arg: str, *, what: str = "path", must_exist: bool = True) -> Path:
        try:
            raw = Path(arg).expanduser()
            real = (raw if raw.is_absolute() else self.root / raw).resolve()
            is_dir, is_file = real.is_dir(), real.is_file()
        except (OSError, ValueError, RuntimeError) as exc:  # too long, a loop of symlinks, ~nobody
            raise ToolError(f"{what} {arg[:80]!r}: not a usable path ({type(exc).__name__}: {exc})") from None
        if not real.is_relative_to(self.root):
            raise ToolError(f"{what} {arg}: outside the workspace {self.root} (symlinks resolved); refused")
        if must_exist and is_dir:
            raise ToolError(f"{what} {arg}: is a directory, not a file")
        if must_exist and not is_file:
            raise ToolError(f"{what} {arg}: no such file in the workspace {self.root}")
        return real

    def settings(self):
        from kopt.config import load_settings

        return load_settings(self.root)


# --- running work off the event loop, within limits ----------------------------------------------------

_INDEX = threading.Lock()  # the embedded index is opened by one in-process call at a time


def _as_tool_error(exc: BaseException) -> ToolError:
    if isinstance(exc, ToolError):
        return exc
    if isinstance(exc, KoptError):
        return ToolError(str(exc))
    log.exception("tool failed")
    return ToolError(f"internal error: {type(exc).__name__}: {exc} (a kopt bug; the server keeps running)")


def _over_limit(tool: str, limit: float) -> ToolError:
    return ToolError(f"no answer within {limit:g} s, this tool's limit; the work was stopped "
                     f"(a task that hangs? `kopt mcp --tool-timeout {tool}=SECONDS` changes the limit)")


async def _heartbeat(ctx: Context, done: float, total: float, now: Callable[[], str]) -> None:
    start = time.monotonic()
    while True:
        await ctx.report_progress(done, total, f"{now()} ({time.monotonic() - start:.0f} s)")
        await anyio.sleep(HEARTBEAT_S)


async def _step(ctx: Context, done: float, total: float, message: str, fn: Callable[[], T], *, tool: str,
                limit: float, phase: list[str] | None = None) -> T:
    """Run `fn` (no user code: that goes to _in_child) in a worker thread, reporting progress now and every
    HEARTBEAT_S; past `limit` seconds the call fails and the thread is left to finish on its own.
    `fn` may append to `phase` to say what it is doing now."""
    try:
        with anyio.fail_after(limit):
            async with anyio.create_task_group() as tg:
                tg.start_soon(_heartbeat, ctx, done, total, lambda: phase[-1] if phase else message)
                try:
                    return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)
                finally:
                    tg.cancel_scope.cancel()
    except TimeoutError:
        raise _over_limit(tool, limit) from None
    except BaseException as exc:  # an ExceptionGroup from the task group, or the work's own error
        inner = exc.exceptions[0] if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1 else exc
        if isinstance(inner, Exception):
            raise _as_tool_error(inner) from inner
        raise


def _with_index(limit: float, fn: Callable[[], T]) -> T:
    if not _INDEX.acquire(timeout=limit):
        raise ToolError("the knowledge index is busy with an earlier call; try again")
    try:
        return fn()
    finally:
        _INDEX.release()


async def _in_child(ctx: Context, ws: Workspace, tool: str, args: dict[str, Any], message: str, *,
                    limit: float) -> dict[str, Any]:
    """Run IN_CHILD[tool](ws, **args) in `python -m kopt.mcp_server`, in its own session, working in the
    workspace; its result comes back through a file (nothing the task prints can corrupt it). Past `limit`
    seconds, when the call is cancelled, or when it is done, the child and everything it started are killed."""
    with tempfile.TemporaryDirectory(prefix="kopt-mcp-") as tmp:
        files = {name: Path(tmp) / name for name in ("request.json", "result.json", "phase.txt", "log.txt")}
        files["request.json"].write_text(json.dumps({"tool": tool, "workspace": str(ws.root), "args": args,
                                                     "result": str(files["result.json"]),
                                                     "phase": str(files["phase.txt"])}))
        with open(files["log.txt"], "w") as log_file:
            proc = subprocess.Popen([sys.executable, "-m", "kopt.mcp_server", str(files["request.json"])],
                                    cwd=ws.root, stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file,
                                    start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                                    preexec_fn=_die_with_server)
        try:
            with anyio.fail_after(limit):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_heartbeat, ctx, 0, 1, lambda: _last_line(files["phase.txt"]) or message)
                    while proc.poll() is None:
                        await anyio.sleep(0.1)
                    tg.cancel_scope.cancel()
        except TimeoutError:
            raise _over_limit(tool, limit) from None
        finally:
            _kill_tree(proc)
        if not files["result.json"].is_file():
            raise ToolError(f"the worker process {_exit_words(proc.returncode)} before answering (did the "
                            f"task's code end it?); last output: {_last_line(files['log.txt']) or '(none)'}")
        outcome = json.loads(files["result.json"].read_text())
    if "error" in outcome:
        raise ToolError(outcome["error"])
    return outcome["result"]


def _die_with_server() -> None:
    """In the child, before exec: the kernel SIGKILLs it when the server goes, so no task outlives the server."""
    import ctypes

    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _exit_words(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        return f"died of {signal.Signals(-returncode).name}"
    return f"exited with status {returncode}"


def _last_line(path: Path, limit: int = 300) -> str:
    try:
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1][-limit:] if lines else ""


def _descendants(pid: int) -> list[int]:
    """Every process below `pid`, found through /proc's parent links: task code in the child is not confined
    and may start processes in sessions of their own, which killing the child's process group would miss."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _kill_tree(proc: subprocess.Popen) -> None:
    """Stop the child's group so it starts nothing new, kill everything below it, then the group itself."""
    ours = os.getpgrp()
    try:
        os.killpg(proc.pid, signal.SIGSTOP)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in _descendants(proc.pid) if Path("/proc").is_dir() else []:
        try:
            group = os.getpgid(pid)
            if group != ours:
                os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


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


# --- the tools that import a task: run in the child ------------------------------------------------------


def _diagnose(ws: Workspace, emit: Callable[[str], None], task: str, level: str, gpu: bool, case: int | None,
              failed: list[str]) -> dict[str, Any]:
    from kopt.diagnose.escalate import diagnose as kopt_diagnose

    d = kopt_diagnose(ws.path(task, what="task"), level=level, gpu=gpu, case=case, failed=failed,
                      settings=ws.settings())
    findings = [_finding(f) for f in d.findings]
    return DiagnoseResult(task=d.task, target=d.target, root_cause=findings[0] if findings else None,
                          findings=findings,
                          levels=[LevelModel.model_validate(vars(r)) for r in d.levels]).model_dump(mode="json")


def _ask(ws: Workspace, emit: Callable[[str], None], question: str, kernel: str | None, target: str | None,
         prose: bool) -> dict[str, Any]:
    from kopt.ask import ask as kopt_ask
    from kopt.ask import parse_kernel_arg
    from kopt.llm import make_llm

    path, line = parse_kernel_arg(kernel) if kernel else (None, None)
    path = ws.path(str(path), what="kernel") if path else None
    settings = ws.settings()
    settings.target = target or settings.target
    answer = kopt_ask(question, kernel=path, line=line, settings=settings, llm=make_llm(settings) if prose else None)
    return AskResult.model_validate(answer.to_dict()).model_dump(mode="json")


def _start_run(ws: Workspace, emit: Callable[[str], None], task: str, note: str | None) -> dict[str, Any]:
    from kopt.optimize import start_run as kopt_start_run

    path = ws.path(task, what="task")

    def create(store) -> dict[str, Any]:
        run = kopt_start_run(path, store, {"driver": "mcp", "note": note},
                             lambda kind, data: emit(data.get("phase", kind)))
        return RunModel.model_validate(run.to_dict()).model_dump(mode="json")

    return _with_store(ws, create)


IN_CHILD: dict[str, Callable[..., dict[str, Any]]] = {"diagnose": _diagnose, "ask": _ask, "start_run": _start_run}


def _child_main(request_path: str) -> None:
    """`python -m kopt.mcp_server REQUEST`: run one IN_CHILD tool and write {"result"} or {"error"} (one line)."""
    request = json.loads(Path(request_path).read_text())
    os.dup2(2, 1)  # whatever the task prints goes to the log, never into the result
    phase = Path(request["phase"])

    def emit(text: str) -> None:
        with phase.open("a") as fh:
            fh.write(text.replace("\n", " ") + "\n")

    try:
        outcome = {"result": IN_CHILD[request["tool"]](Workspace(Path(request["workspace"])), emit, **request["args"])}
    except (ToolError, KoptError) as exc:
        outcome = {"error": " ".join(str(exc).split())}
    except SystemExit as exc:
        outcome = {"error": f"the task's code called exit({exc.code!r}) before answering"}
    except Exception as exc:  # a bug, or user code failing outside the loader's net
        outcome = {"error": f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:400]}"}
    result = Path(request["result"])
    result.with_suffix(".tmp").write_text(json.dumps(outcome, default=str))
    os.replace(result.with_suffix(".tmp"), result)
    sys.stderr.flush()
    os._exit(0)  # no interpreter teardown: the task's atexit hooks and threads are not ours to wait for


# --- the server --------------------------------------------------------------------------------------


def _argument_errors(tool: str, exc: ValidationError) -> str:
    """A rejected call in one line naming each bad argument (never echoing its value: it may be 10 MB)."""
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(part) for part in err["loc"]) or "arguments"
        parts.append(f"argument {where!r} is required" if err["type"] == "missing"
                     else f"argument {where!r}: {err['msg']}")
    more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
    return f"Error executing tool {tool}: {'; '.join(parts)}{more}"


class KoptMCPServer(MCPServer):
    """MCPServer whose every tool failure is one line that says what is wrong: a bad argument by name,
    a bug by its type and message (the stock server answers a bare `Error executing tool X` to both)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None):
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            cause = exc.__cause__ or exc
            if isinstance(cause, KoptError):  # the user's to fix, raised before the work started
                raise ToolError(f"Error executing tool {name}: {cause}") from None
            log.error("tool %s failed: %r", name, cause)
            raise ToolError(f"Error executing tool {name}: internal error: {type(cause).__name__}: {' '.join(str(cause).split())[:300]} "
                            "(a kopt bug; the server keeps running)") from None
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(_argument_errors(name, exc.__cause__)) from None
            raise


class Tools:
    """The MCP tools, one method each, acting on `ws` and nothing outside it, each within its limit in seconds."""

    def __init__(self, ws: Workspace, limit: dict[str, float]):
        self.ws, self.limit = ws, limit

    def harness_timeout(self, tool: str, asked: float = float("inf")) -> float:
        """A sandboxed harness call's own limit: inside the tool's, so the harness reports the timeout itself."""
        return max(1.0, min(asked, self.limit[tool] - min(HARNESS_GRACE_S, self.limit[tool] / 4)))

    async def search(self, query: Query, ctx: Context, corpus: Names | None = None,
                     k: Annotated[int, Field(ge=1, le=100)] = 8,
                     mode: Literal["hybrid+ltr", "hybrid", "hybrid+graph", "dense", "sparse"] = "hybrid+ltr",
                     kind: Name | None = None, path: PathArg | None = None) -> SearchResult:
        """Search over the ingested knowledge: compiler source, pass notes, the pattern catalog, by default in the
        learned ranker's order (`hybrid+ltr`; `hybrid`: the fused scores alone). Cite hits by their `cite`
        (path:lines@version). `path` may be a glob over compiler paths. `hybrid+graph` also lifts what the top hits
        register, bind or add (a pass's flag to its implementation)."""
        def run() -> SearchResult:
            from kopt.index import open_index, worker

            settings = self.ws.settings()
            asked = {"corpus": corpus or None, "k": k, "mode": mode, "filters": {"kind": kind, "path": path}}
            hits = worker.call(settings, "search", query, **asked)  # the index's warm worker, shared with the CLI
            if hits is None:  # none warm yet (this call starts one): search here
                index = open_index(settings)
                try:
                    hits = index.search(query, **asked)
                finally:
                    index.close()
            return SearchResult(query=query, hits=[
                SearchHit(cite=h.cite(), score=h.score, corpus=h.chunk.corpus, kind=h.chunk.kind,
                          symbol=h.chunk.symbol, text=h.text) for h in hits])

        return await _step(ctx, 0, 1, "searching the index", lambda: _with_index(self.limit["search"], run),
                           tool="search", limit=self.limit["search"])

    async def ask(self, question: Query, ctx: Context, kernel: PathArg | None = None, target: Name | None = None,
                  prose: bool = False) -> AskResult:
        """Answer a why-question about a kernel or the compiler from evidence: the L3 facts at a line, the
        mechanism from the pass notes, cited compiler source, the fix. `kernel` is TASK or TASK:LINE (a workspace
        path). `prose`: also have the configured LLM write it up (the structured evidence is always there)."""
        args = {"question": question, "kernel": kernel, "target": target, "prose": prose}
        if kernel:  # the task is imported and compiled: in the child
            from kopt.ask import parse_kernel_arg

            path, _ = parse_kernel_arg(kernel)
            self.ws.path(str(path), what="kernel")
            return AskResult.model_validate(await _in_child(ctx, self.ws, "ask", args, "gathering evidence and compiler "
                                                            "source", limit=self.limit["ask"]))
        return await _step(ctx, 0, 1, "gathering evidence and compiler source",
                           lambda: _with_index(self.limit["ask"], lambda: AskResult.model_validate(_ask(self.ws, lambda _: None, **args))),
                           tool="ask", limit=self.limit["ask"])

    async def compile_ir(self, task: PathArg, ctx: Context, stage: Literal["ttir", "ttgir", "llir", "ptx", "sass"] | None = None,
                         target: Name | None = None, case: NonNegative = 0,
                         kernel: Name | None = None) -> CompileResult:
        """AOT-compile a task's kernels for a GPU target (e.g. sm_90; no GPU needed): resource usage per kernel,
        and the text of one IR stage when `stage` is given (`kernel` narrows it to one kernel by name)."""
        path = self.ws.path(task, what="task")

        def run() -> CompileResult:  # the harness's sandboxed compile: the task is imported in a contained child
            from kopt.harness.compile import compile_sandboxed

            kernels = compile_sandboxed(path, case=case, target=target or self.ws.settings().target,
                                        stages=[stage] if stage else None, timeout_s=self.harness_timeout("compile_ir"))
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

        return await _step(ctx, 0, 1, f"compiling {path.name}", run, tool="compile_ir", limit=self.limit["compile_ir"])

    async def diagnose(self, task: PathArg, ctx: Context, level: Literal["auto", "L1", "L2", "L3", "L4"] = "auto",
                       gpu: bool = True, case: NonNegative | None = None,
                       failed: Names | None = None) -> DiagnoseResult:
        """Why is this kernel slow? Escalates L1 -> L4 and stops at the first level with a grounded hypothesis
        (`level` forces a depth). `failed`: finding or pattern ids already tried without a win, to go deeper."""
        path = self.ws.path(task, what="task")
        args = {"task": task, "level": level, "gpu": gpu, "case": case, "failed": failed or []}
        return DiagnoseResult.model_validate(await _in_child(ctx, self.ws, "diagnose", args, f"diagnosing {path.name}",
                                                             limit=self.limit["diagnose"]))

    async def validate(self, task: PathArg, ctx: Context, candidate: PathArg | None = None,
                       seed: Annotated[int, Field(ge=0, lt=2**63)] | None = None,
                       timeout_s: Annotated[float, Field(gt=0)] = 600.0) -> ValidateResult:
        """Check the task's kernels (or a candidate file's entry) against the reference on every case, fresh
        inputs, outputs poisoned, held-out shapes; in a sandboxed child (CPU: the Triton interpreter)."""
        path = self.ws.path(task, what="task")
        cand = self.ws.path(candidate, what="candidate") if candidate else None

        def run() -> ValidateResult:
            from kopt.harness.validate import validate as kopt_validate

            return ValidateResult.model_validate(kopt_validate(
                path, cand, timeout_s=self.harness_timeout("validate", timeout_s), seed=seed).to_dict())

        return await _step(ctx, 0, 1, f"validating {(cand or path).name}", run, tool="validate",
                           limit=self.limit["validate"])

    async def bench(self, task: PathArg, ctx: Context, candidate: PathArg | None = None,
                    cases: Indices | None = None,
                    timeout_s: Annotated[float, Field(gt=0)] = 900.0) -> BenchResult:
        """Kernel-only GPU timing (L2 flushed, fresh inputs, median of many runs) on the device roofline.
        Needs a CUDA GPU; without one this is a tool error saying so."""
        path = self.ws.path(task, what="task")
        cand = self.ws.path(candidate, what="candidate") if candidate else None

        def run() -> BenchResult:
            from kopt.harness.bench import bench as kopt_bench

            return BenchResult.model_validate(kopt_bench(
                path, cand, timeout_s=self.harness_timeout("bench", timeout_s), cases=cases).to_dict())

        return await _step(ctx, 0, 1, f"timing {(cand or path).name}", run, tool="bench", limit=self.limit["bench"])

    async def profile(self, task: PathArg, ctx: Context, case: NonNegative = 0) -> ProfileResult:
        """Nsight Compute metrics and rule messages for one call of the task (L2 evidence), with the findings
        they support. Without a GPU or ncu: available=false and the reason."""
        path = self.ws.path(task, what="task")

        def run() -> ProfileResult:  # the task runs under ncu in a child of profile_task, not here
            from kopt.diagnose.escalate import gpu_unavailable

            why = gpu_unavailable()
            if why:
                return ProfileResult(available=False, reason=why)
            from kopt.diagnose.l2 import result_findings
            from kopt.diagnose.ncu import profile_task

            result = profile_task(path, case, timeout=self.harness_timeout("profile"))
            return ProfileResult(
                available=result.available, reason=result.reason,
                kernels=[ProfiledKernel.model_validate({**vars(k), "rules": [vars(r) if not isinstance(r, dict) else r
                                                                             for r in k.rules]})
                         for k in result.kernels],
                findings=[_finding(f) for f in result_findings(result)])

        return await _step(ctx, 0, 1, f"profiling {path.name}", run, tool="profile", limit=self.limit["profile"])

    async def start_run(self, task: PathArg, ctx: Context, note: Prose | None = None) -> RunModel:
        """Open an optimization run: validates the task's own kernel and times it (GPU) as the baseline.
        Then diagnose, and send every candidate through record_round, one hypothesis per round."""
        path = self.ws.path(task, what="task")
        return RunModel.model_validate(await _in_child(ctx, self.ws, "start_run", {"task": task, "note": note},
                                                       f"starting a run on {path.name}", limit=self.limit["start_run"]))

    async def record_round(self, run_id: Name, hypothesis: Prose, evidence: Evidences,
                           candidate: PathArg, ctx: Context,
                           finding_ids: Names | None = None, pattern_id: Name | None = None,
                           level_reached: Literal["L1", "L2", "L3", "L4"] | None = None,
                           proposer: Name = "llm:agent") -> RoundModel:
        """Record one round: ONE hypothesis, the evidence it rests on (cited), and the candidate file (a full
        task file; only kernels and their launch may change) that acts on it. The harness validates it on every
        case and the held-out shapes and times it (GPU) before the round is stored: a wrong candidate is
        recorded as incorrect, an untimed one (no GPU) as untimed, and only a measured gain as improved."""
        from kopt.harness.guard import check_candidate
        from kopt.harness.validate import validate as kopt_validate
        from kopt.optimize import bench_times, judge, validation_summary
        from kopt.optimize import record_round as kopt_record_round
        from kopt.rounds.store import best_round
        from kopt.vocabulary import FINDING_IDS

        cand = self.ws.path(candidate, what="candidate")
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
        deadline = start + self.limit["record_round"]

        def left() -> float:
            return max(1.0, deadline - time.monotonic())

        def read(store):
            return store.run(run_id), store.get(store.run(run_id).task_hash)

        run, initial_source = await _step(ctx, 0, 4, "opening the run", lambda: _with_store(self.ws, read),
                                          tool="record_round", limit=left())
        task_path = Path(run.task_path)
        problem = check_candidate(initial_source, source)
        checked = timed = None
        if problem is None:
            checked = await _step(ctx, 1, 4, f"validating {cand.name}",
                                  lambda: kopt_validate(task_path, cand, timeout_s=min(300, left())),
                                  tool="record_round", limit=left() + HARNESS_GRACE_S)
            if checked.ok and run.timing.get("available"):
                timed = await _step(ctx, 2, 4, f"timing {cand.name}", lambda: bench_times(task_path, cand),
                                    tool="record_round", limit=left() + HARNESS_GRACE_S)

        def commit(store) -> RoundModel:
            rounds = store.rounds(run.run_id)
            best = best_round(rounds)
            artifacts = {"candidate": store.put(source),
                         "agent_evidence": store.put_json([e.model_dump() for e in evidence])}
            validation = validation_summary(checked) if checked is not None else None
            base = best.case_times if best else run.baseline
            outcome, message = judge(problem, validation, timed, run.timing.get("reason"), base)
            times, roofline = (timed.times, timed.roofline) if timed and timed.ok else ([], [])
            if checked is not None:
                artifacts["validation"] = store.put_json(checked.to_dict())
            rnd = kopt_record_round(store, run, n=len(rounds) + 1, hypothesis=hypothesis.strip(),
                                    finding_ids=finding_ids or [], pattern_id=pattern_id, proposer=proposer,
                                    source=source, outcome=outcome, message=message, times=times, roofline=roofline,
                                    base=base, evidence=artifacts, level_reached=level_reached,
                                    seconds=time.monotonic() - start)
            return RoundModel.model_validate(rnd.to_dict())

        return await _step(ctx, 3, 4, "recording the round", lambda: _with_store(self.ws, commit), tool="record_round",
                           limit=left() + HARNESS_GRACE_S)

    async def runs(self, ctx: Context, run_id: Name | None = None) -> RunsResult:
        """The workspace's optimization runs; with `run_id` (or a unique prefix), that run and its rounds."""
        def read(store) -> RunsResult:
            if run_id is None:
                return RunsResult(runs=[RunModel.model_validate(r.to_dict()) for r in store.runs()])
            one = store.run(run_id)
            return RunsResult(runs=[RunModel.model_validate(one.to_dict())],
                              rounds=[RoundModel.model_validate(r.to_dict()) for r in store.rounds(one.run_id)])

        return await _step(ctx, 0, 1, "reading the rounds store", lambda: _with_store(self.ws, read), tool="runs",
                           limit=self.limit["runs"])

    async def synthesize(self, ctx: Context, runs: Names | None = None, dry_run: bool = False,
                         index: bool = True) -> SynthesizeResult:
        """The slow pass: group validated wins across runs into new or re-weighted catalog patterns, written to
        the workspace's .kopt/patterns (this server writes nowhere else). `index`: upsert them into the index
        too, when the index lives in the workspace; `kopt synthesize` in a shell publishes to KOPT_HOME."""
        def run() -> SynthesizeResult:
            from kopt.synthesize import synthesize as kopt_synthesize
            from kopt.synthesize import upsert_index

            if not (self.ws.root / ".kopt" / "rounds.sqlite").is_file():
                raise ToolError(f"{self.ws.root}: no rounds store in this workspace yet (start_run and record_round first)")
            settings = self.ws.settings()
            out = self.ws.root / ".kopt" / "patterns"
            actions = _with_store(self.ws, lambda store: kopt_synthesize(store, out, run_ids=runs, dry_run=dry_run))
            written = [Path(a.path) for a in actions if a.path and a.kind != "skip"]
            fresh = [p for p in written if "kind: synthesized" in p.read_text()] if not dry_run else []
            index_path = Path(settings.index_path).resolve()
            if dry_run:
                note = "dry run: nothing written"
            elif not index:
                note = "index: skipped (index=false)"
            elif settings.qdrant_url or not index_path.is_relative_to(self.ws.root):
                note = (f"index: skipped (the index at {settings.qdrant_url or index_path} is outside the workspace; "
                        "`kopt synthesize` in a shell publishes the patterns and upserts them)")
            else:
                note = _with_index(self.limit["synthesize"], lambda: upsert_index(settings, fresh))
            return SynthesizeResult(out=str(out), dry_run=dry_run, index=note,
                                    actions=[SynthesisAction.model_validate(a.to_dict()) for a in actions])

        return await _step(ctx, 0, 1, "synthesizing patterns from validated rounds", run, tool="synthesize",
                           limit=self.limit["synthesize"])


def build_server(workspace: Path, limits: dict[str, float] | None = None) -> MCPServer:
    """An MCPServer whose tools (TOOL_LIMITS_S names them) act on `workspace` and nothing outside it; `limits`:
    seconds per tool name."""
    tools = Tools(Workspace(workspace), {**TOOL_LIMITS_S, **(limits or {})})
    server = KoptMCPServer("kopt", instructions=INSTRUCTIONS, log_level="WARNING")
    for name in TOOL_LIMITS_S:
        server.tool()(getattr(tools, name))
    return server


# --- serving ------------------------------------------------------------------------------------------


class BearerAuth:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer TOKEN`, or it is answered 401
    before the MCP app sees it (compared in constant time)."""

    def __init__(self, app: Any, token: str):
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": b"kopt mcp: a valid bearer token is required\n"})
                return
        await self.app(scope, receive, send)


def serve(workspace: Path, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8765,
          token: str | None = None, limits: dict[str, float] | None = None) -> None:
    """Run the server until the client goes away. The process works inside the workspace, so caches and
    the rounds store land under its .kopt/. HTTP needs `token` (kopt.commands.mcp makes sure there is one)."""
    server = build_server(workspace, limits)
    root = Path(workspace).resolve()
    os.chdir(root)
    # the children's and the sandbox's Triton compiles cache in the workspace too (unless the user chose a cache)
    os.environ.setdefault("TRITON_CACHE_DIR", str(root / ".kopt" / "cache" / "triton"))
    if transport == "stdio":
        server.run("stdio")
        return
    import uvicorn

    if not token:
        raise KoptError("the HTTP transport needs a bearer token")
    app = BearerAuth(server.streamable_http_app(host=host), token)
    uvicorn.run(app, host=host, port=port, log_level="warning")


if __name__ == "__main__":
    _child_main(sys.argv[1])
