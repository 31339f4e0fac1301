"""The suite campaign: optimize every operator of evals/suite under one or more policies, one worker per GPU.

Every job is one `optimize` run tagged in the rounds store with its campaign, operator, family and
policy, so the store is the campaign's only state: a second call skips finished runs and resumes
interrupted ones (a killed worker leaves its run `running`; committed rounds survive), and campaigns
split over calls or machines merge in the report. A job runs in its own child process
(`python -m kopt.campaign JOB`) pinned to one GPU by CUDA_VISIBLE_DEVICES; one thread per worker feeds
it jobs, and several workers may share a GPU (their timed sections take turns through a per-GPU lock).
With --ray the same jobs go to a Ray cluster whose nodes share the workspace.
After optimizing, a timed job also benches torch eager and torch.compile on the same cases.
With the prompt exchange (--llm-exchange DIR) a job stops `waiting` for its LLM reply; the same call again
advances every waiting run by one round (its reply's candidate validated and timed, the next request written).
The grounding ablation's arms (--grounding full|none) are separate runs of one campaign.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from kopt.errors import KoptError
from kopt.harness.gpulock import ENV as GPU_LOCK_ENV


@dataclass
class SuiteOp:
    name: str
    path: Path
    family: str


@dataclass
class Job:
    op: str
    path: str
    family: str
    policy: str
    campaign: str
    rounds: int
    proposer: str
    minutes: float | None = None
    resume: str | None = None  # run id to continue
    references_only: bool = False  # the run is done; only torch eager / torch.compile are missing
    grounding: str = "full"  # the LLM prompt's grounding arm (kopt.optimize.GROUNDINGS)
    exchange: str | None = None  # the prompt exchange folder, when the LLM answers through files


def suite_ops(suite_dir: Path, names: list[str] | None = None) -> list[SuiteOp]:
    """The suite's operators (task files with FAMILY), optionally only `names`."""
    suite_dir = Path(suite_dir)
    if not suite_dir.is_dir():
        raise KoptError(f"{suite_dir}: no suite directory (give --suite DIR)")
    ops = []
    for path in sorted(suite_dir.glob("*.py")):
        match = re.search(r"^FAMILY\s*=\s*[\"'](\w+)[\"']", path.read_text(), re.M)
        if match:
            ops.append(SuiteOp(path.stem, path.resolve(), match.group(1)))
    if not ops:
        raise KoptError(f"{suite_dir}: no operators here (task files with a FAMILY = \"...\" line)")
    if names:
        known = {o.name: o for o in ops}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise KoptError(f"{suite_dir}: no operator {unknown[0]!r}; known: {', '.join(sorted(known))}")
        ops = [known[n] for n in names]
    return ops


def campaign_runs(stores: list[Any], campaign: str, grounding: str | None = None) -> dict[tuple[str, str], tuple[Any, Any]]:
    """(op, policy) -> (store, run) of the campaign's runs across stores (only those of one grounding arm when
    `grounding` is given); a finished run wins over an unfinished one, then the one with more rounds (so split
    campaigns merge)."""
    chosen: dict[tuple[str, str], tuple[Any, Any, tuple]] = {}
    for store in stores:
        for run in store.runs():
            opts = run.options or {}
            if opts.get("campaign") != campaign or grounding not in (None, opts.get("grounding", "full")):
                continue
            key = (opts.get("op"), opts.get("policy", "progressive"))
            rank = (run.status == "done", len(store.rounds(run.run_id)), run.created)
            if key not in chosen or rank > chosen[key][2]:
                chosen[key] = (store, run, rank)
    return {k: (s, r) for k, (s, r, _) in chosen.items()}


def plan_jobs(store: Any, ops: list[SuiteOp], policies: list[str], campaign: str, rounds: int, proposer: str,
              minutes: float | None = None, grounding: str = "full",
              exchange: str | None = None) -> tuple[list[Job], list[str]]:
    """Jobs still to do (new, interrupted or waiting runs of this grounding arm), and the run ids already finished."""
    existing = campaign_runs([store], campaign, grounding)
    jobs, finished = [], []
    for policy in policies:
        for op in ops:
            base = Job(op.name, str(op.path), op.family, policy, campaign, rounds, proposer, minutes,
                       grounding=grounding, exchange=exchange)
            hit = existing.get((op.name, policy))
            run = hit[1] if hit else None
            if run is None:
                jobs.append(base)
            elif run.status != "done" or _more_rounds_asked(store, run, rounds):
                jobs.append(Job(**{**asdict(base), "resume": run.run_id}))
            elif run.timing.get("available") and not (run.options or {}).get("references"):
                jobs.append(Job(**{**asdict(base), "resume": run.run_id, "references_only": True}))
            else:
                finished.append(run.run_id)
    return jobs, finished


def _more_rounds_asked(store: Any, run: Any, rounds: int) -> bool:
    """A run that stopped only because its round budget was spent goes on when the campaign now asks for more
    rounds (the LLM campaign judges round k on the GPU with ROUNDS=k, then writes round k+1's requests elsewhere)."""
    return str(run.stop_reason or "").startswith("round budget spent") and len(store.rounds(run.run_id)) < rounds


def visible_gpus() -> int:
    try:
        import torch

        return torch.cuda.device_count()
    except ImportError:
        return 0


def run_campaign(jobs: list[Job], workspace: Path, gpus: int, *, ray_address: str | None = None,
                 on_result: Callable[[dict], None] | None = None, timeout_s: float | None = None,
                 per_gpu: int = 1) -> list[dict]:
    """Run jobs: `per_gpu` workers per GPU (or one CPU worker when gpus == 0), or on Ray. Returns job results.
    Workers sharing a GPU overlap their CPU work; their measurements take turns (kopt.harness.gpulock)."""
    done = on_result or (lambda r: None)
    if ray_address:
        return _run_on_ray(jobs, workspace, gpus, ray_address, done, timeout_s)
    todo: queue.Queue[Job] = queue.Queue()
    for job in jobs:
        todo.put(job)
    results: list[dict] = []
    lock = threading.Lock()

    def worker(gpu: int | None) -> None:
        while True:
            try:
                job = todo.get_nowait()
            except queue.Empty:
                return
            result = run_job_process(job, workspace, gpu, timeout_s, threads)
            with lock:
                results.append(result)
                done(result)

    slots = [g for g in range(gpus) for _ in range(per_gpu)] if gpus else [None]
    threads = max(1, (os.cpu_count() or 1) // len(slots))  # each job's torch would otherwise take every core
    threads = [threading.Thread(target=worker, args=(g,), daemon=True) for g in slots]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def job_env(gpu: int | None, threads: int | None) -> dict[str, str]:
    """A job's environment: pinned to its GPU with that GPU's measuring lock, and its CPU threads capped."""
    env = dict(os.environ)
    if threads:
        env.setdefault("OMP_NUM_THREADS", str(threads))
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = str(gpu)
        env[GPU_LOCK_ENV] = str(Path(tempfile.gettempdir()) / f"kopt-gpu{gpu}.lock")
    return env


def run_job_process(job: Job, workspace: Path, gpu: int | None, timeout_s: float | None = None,
                    threads: int | None = None) -> dict:
    """One job in a child process pinned to `gpu`; a crash or hang fails the job, never the campaign.
    `threads`: the CPU threads its processes' torch may use (OMP_NUM_THREADS, unless the user set it): 24 jobs
    that each start 16-thread pools for their inputs on 16 cores spend the call contending."""
    env = job_env(gpu, threads)
    started = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "kopt.campaign", json.dumps(asdict(job))], cwd=workspace,
                              env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"op": job.op, "policy": job.policy, "ok": False, "gpu": gpu,
                "error": f"no result after {timeout_s:g} s; the run stays resumable", "seconds": timeout_s}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode == 0 and lines:
        return {**json.loads(lines[-1]), "gpu": gpu}
    tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1][:300]
    return {"op": job.op, "policy": job.policy, "ok": False, "gpu": gpu,
            "error": f"worker exited {proc.returncode}: {tail}", "seconds": round(time.monotonic() - started, 1)}


def _run_on_ray(jobs: list[Job], workspace: Path, gpus: int, address: str, done: Callable[[dict], None],
                timeout_s: float | None) -> list[dict]:
    try:
        import ray
    except ImportError as exc:
        raise KoptError("--ray needs Ray: pip install 'ray[default]' (an optional extra)") from exc
    ray.init(address=None if address == "local" else address, ignore_reinit_error=True, log_to_driver=False)
    remote = ray.remote(num_gpus=1 if gpus else 0)(_ray_job)
    pending = [remote.remote(asdict(job), str(workspace), timeout_s) for job in jobs]
    results = []
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        result = ray.get(ready[0])
        results.append(result)
        done(result)
    return results


def _ray_job(job: dict, workspace: str, timeout_s: float | None) -> dict:
    """On a Ray worker: the GPU Ray assigned is already in CUDA_VISIBLE_DEVICES; run the same child."""
    result = run_job_process(Job(**job), Path(workspace), None, timeout_s)
    result["node"] = os.uname().nodename
    return result


# --- the child: one job --------------------------------------------------------------------------------

def environment() -> dict[str, str]:
    """Date, GPU, driver, Triton and torch versions: the report's provenance line."""
    import torch
    import triton

    env = {"date": time.strftime("%Y-%m-%d"), "gpu": "none (CPU)", "driver": "", "triton": triton.__version__,
           "torch": torch.__version__, "python": sys.version.split()[0]}
    if torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name()
        try:
            env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                           capture_output=True, text=True, timeout=30).stdout.split("\n")[0].strip()
        except (OSError, subprocess.TimeoutExpired):
            pass
    return env


REFERENCE_ENTRY = '''"""torch {kind} of {task}'s reference, timed like a candidate (written by kopt eval suite)."""
import importlib.util
import sys

import torch

_spec = importlib.util.spec_from_file_location("_kopt_reference_task", {task!r})
_task = importlib.util.module_from_spec(_spec)
sys.modules["_kopt_reference_task"] = _task
_spec.loader.exec_module(_task)
entry = {wrap}
'''


def measure_references(task_path: Path, work: Path) -> dict[str, Any]:
    """Kernel ms per case of torch eager and torch.compile running the task's reference."""
    from kopt.harness.bench import bench

    out: dict[str, Any] = {}
    work.mkdir(parents=True, exist_ok=True)
    for key, kind, wrap in (("eager_ms", "eager", "_task.reference"),
                            ("compile_ms", "compile", "torch.compile(_task.reference, dynamic=False)")):
        path = work / f"reference_{kind}.py"
        path.write_text(REFERENCE_ENTRY.format(kind=kind, task=str(task_path), wrap=wrap))
        result = bench(task_path, path, timeout_s=900, trusted=True)  # kopt's own torch wrapper, not a candidate
        out[key] = [c.kernel_ms for c in result.cases] if result.ok else None
        if not result.ok:
            out[f"{kind}_error"] = result.message
    return out


def known_references(store: Any, run: Any) -> dict[str, Any] | None:
    """References already measured for the same task source (another policy's or campaign's run): they depend only
    on the operator, so a policy comparison or an ablation reuses them instead of timing torch.compile again."""
    for other in store.runs():
        refs = (other.options or {}).get("references")
        if other.run_id != run.run_id and other.task_hash == run.task_hash and refs and "from_run" not in refs:
            return {**refs, "from_run": other.run_id}
    return None


def run_job(job: Job) -> dict[str, Any]:
    """Optimize (or resume) one operator, then record torch references and the environment on the run."""
    from kopt.config import load_settings
    from kopt.optimize import optimize
    from kopt.rounds.store import RoundsStore

    settings = load_settings()
    tags = {"campaign": job.campaign, "op": job.op, "family": job.family}
    arm = "" if job.grounding == "full" else f"-{job.grounding}"
    if job.references_only:
        summary = {"run_id": job.resume, "status": "done", "stop_reason": "already done"}
    else:
        summary = optimize(None if job.resume else job.path, rounds=job.rounds, minutes=job.minutes,
                           proposer=job.proposer, resume=job.resume, policy=job.policy, tags=tags,
                           out=settings.state_dir / "best" / f"{job.op}-{job.policy}{arm}.py", settings=settings,
                           grounding=None if job.resume else job.grounding, llm_exchange=job.exchange)
    store = RoundsStore(settings.state_dir)
    try:
        run = store.run(summary["run_id"])
        extra: dict[str, Any] = {"env": environment()}
        # torch eager / torch.compile are timed once per operator: by the full arm's run on its first call (a later
        # call of the LLM campaign has the least time to spare), else when a run is done; others reuse them
        first_arm = run.status == "waiting" and job.grounding == "full" and not run.options.get("references")
        wanted = os.environ.get("KOPT_SUITE_REFERENCES", "1") != "0"  # 0: a short GPU call leaves them out
        if wanted and run.timing.get("available") and (run.status == "done" or first_arm):
            extra["references"] = run.options.get("references") or known_references(store, run) or measure_references(
                Path(run.task_path), store.root / "work" / run.run_id)
        store.set_status(run.run_id, run.status, run.stop_reason, {**run.options, **extra})
    finally:
        store.close()
    return {"op": job.op, "policy": job.policy, "grounding": job.grounding, "ok": True, "run_id": summary["run_id"],
            "status": summary.get("status"), "stop_reason": summary.get("stop_reason"), "speedup": summary.get("speedup"),
            "rounds": len(summary.get("rounds") or []), "waiting": summary.get("waiting") or []}


def main() -> int:
    job = Job(**json.loads(sys.argv[1]))
    started = time.monotonic()
    try:
        result = run_job(job)
    except KoptError as exc:
        result = {"op": job.op, "policy": job.policy, "ok": False, "error": str(exc)}
    result["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(result, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
