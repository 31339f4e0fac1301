"""Correctness, decided in kopt's own process from data only: every case on fresh random inputs, outputs
poisoned first, dtype-aware tolerances, NaN/Inf checks, then the held-out shapes the optimizer never saw.

`validate()` first runs the static integrity check (kopt.harness.integrity), then two sandboxed children:
- the reference child loads only the task file; it plans the calls (every case, then the held-out shapes;
  SMALL_CASES on the interpreter), two calls per shape on different seeds, and sends back the plan and the
  expected outputs; the candidate never runs beside it and never sees them;
- the candidate child builds the same inputs from the task's make_inputs before the candidate is imported,
  then, with Triton launches logged and allocations poisoned, runs entry once per planned call and sends its
  raw outputs over a channel opened before any user code ran.
The parent counts the outputs, compares them itself with `compare()` and trusts no verdict from a child;
a call that launched no Triton kernel is a `cheat`. Two calls per shape on different data (and buffers)
defeat an entry that caches or replays its outputs.
Poisoning: torch.empty/empty_like/empty_strided/new_empty return NaN-filled (float) or sentinel-filled (int)
tensors in the candidate child, so an output element the kernel forgot to write fails; the reference runs
poisoned too (on a deep copy of its inputs), so a reference that reads unwritten memory fails loudly.
In-place tasks (MUTATED) are compared on what the call returns followed by the inputs it mutated, for the
reference and the candidate alike; an entry that returns nothing and mutates no input draws a warning.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from kopt.errors import TaskError
from kopt.harness.channel import to_host
from kopt.harness.sandbox import DEFAULT_TIMEOUT_S, REASONS, ChildRun, run_with_channel

CALLS_PER_SHAPE = 2
CACHE_BYTES = 64 << 20  # expected outputs kept for a repeated fixed-seed call (the interpreter's sizes, not GPU's)


@dataclass
class CaseCheck:
    case: dict
    held_out: bool
    seed: int
    ok: bool
    max_abs: float = 0.0
    max_rel: float = 0.0
    atol: float = 0.0
    rtol: float = 0.0
    reason: str | None = None
    seconds: float = 0.0  # the entry calls, as the candidate's child reported (informational, never judged)


@dataclass
class ValidationResult:
    ok: bool
    device: str = ""  # cuda | cpu (the Triton interpreter)
    # None | incorrect | cheat | timeout | crash | cuda_error | oom | exception | compile_error
    reason: str | None = None
    message: str | None = None  # the first failure, one line
    cases: list[CaseCheck] = field(default_factory=list)
    held_out_note: str | None = None  # why held-out shapes were not run, if they were not
    elapsed_s: float = 0.0
    cheat: str | None = None  # the integrity sub-code when reason == "cheat" (kopt.harness.integrity)
    warnings: list[str] = field(default_factory=list)  # e.g. an entry that returns nothing and mutates nothing

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Reference:
    """What the reference child sent: the plan and one expected output per planned call, in order."""

    device: str
    items: list[dict]  # {"case", "held_out", "seeds"}
    note: str | None
    tolerances: dict[str, tuple[float, float]]
    expected: list[Any]

    def calls(self) -> list[dict]:
        return [{"case": item["case"], "seed": s} for item in self.items for s in item["seeds"]]

    def tolerance(self, dtype_name: str) -> tuple[float, float]:
        from kopt.task import DEFAULT_TOLERANCES

        return tuple(self.tolerances.get(dtype_name) or DEFAULT_TOLERANCES.get(dtype_name, (0.0, 0.0)))


class ReferenceFailed(Exception):
    """The reference child did not deliver: (reason, message)."""


_reference_cache: dict[tuple, Reference] = {}  # the last fixed-seed reference: red-team and retry runs reuse it


def validate(task_path: str | Path, candidate_path: str | Path | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S,
             seed: int | None = None, device: str | None = None) -> ValidationResult:
    """Validate a task's entry (or a candidate's) against the task's reference; `timeout_s` bounds the whole call.
    Raises TaskError when the task file itself is broken; a broken or cheating candidate is a failed result."""
    from kopt.harness.integrity import check_file

    start = time.monotonic()
    violation = check_file(Path(candidate_path or task_path), Path(task_path))
    if violation:
        return ValidationResult(ok=False, reason="cheat", cheat=violation.code, message=violation.message)
    base_seed = seed if seed is not None else int.from_bytes(os.urandom(4), "little")
    device = device or default_device()
    # the two children run side by side: each plans the same calls from the task and the seed (the candidate's
    # before its code is imported), so neither waits for the other's start-up, inputs and kernels
    with ThreadPoolExecutor(max_workers=2) as pool:
        candidate = pool.submit(run_candidate_child, "candidate", task_path, candidate_path, device, None, timeout_s,
                                plan_seed=base_seed)
        try:
            ref = reference_outputs(task_path, device, base_seed, timeout_s, cache=seed is not None)
        except ReferenceFailed as exc:  # (leaving the block waits for the candidate's child: nothing outlives it)
            reason, message = exc.args
            return ValidationResult(ok=False, reason=reason, message=message,
                                    elapsed_s=round(time.monotonic() - start, 3))
        run = candidate.result()
    result = judge_outputs(ref, run, timeout_s)
    result.elapsed_s = round(time.monotonic() - start, 3)
    return result


def default_device() -> str:
    """The device both children of a validation use: CUDA when there is one, else the Triton interpreter."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def reference_outputs(task_path: str | Path, device: str | None, base_seed: int, timeout_s: float, *,
                      bench_cases: list[int] | None = None, plan: str = "validate", cache: bool = False) -> Reference:
    """Plan and expected outputs from a child that loads only the task file. Raises TaskError for a broken
    task, ReferenceFailed when the reference itself fails; `cache` reuses the last identical request."""
    path = Path(task_path).resolve()
    key = (hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else str(path), device, base_seed, plan,
           tuple(bench_cases) if bench_cases is not None else None)
    if cache and key in _reference_cache:
        return _reference_cache[key]
    run = run_with_channel({"op": "reference", "task": str(path), "device": device, "seed": base_seed,
                            "plan": plan, "bench_cases": bench_cases}, timeout_s)
    error = next((f for f in run.frames if isinstance(f, dict) and "error" in f), None)
    if error and error["error"] == "task_error":
        raise TaskError(error["message"])
    if error:
        raise ReferenceFailed(error["error"], f"the task's reference failed: {error['message']}")
    if not run.frames:
        reason, message = run.exit_failure()
        raise ReferenceFailed(reason, f"the task's reference child: {message}")
    head = run.frames[0]
    ref = Reference(device=head["device"], items=head["items"], note=head["note"],
                    tolerances={k: tuple(v) for k, v in head["tolerances"].items()}, expected=run.frames[1:])
    if len(ref.expected) != len(ref.calls()):
        reason, message = run.exit_failure()
        raise ReferenceFailed(reason, f"the task's reference child sent {len(ref.expected)} of "
                                      f"{len(ref.calls())} outputs: {message}")
    _reference_cache.clear()
    if sum(t.numel() * t.element_size() for t in _tensors(ref.expected)) <= CACHE_BYTES:
        _reference_cache[key] = ref
    return ref


def _tensors(value: Any) -> Iterator[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)


def run_candidate_child(op: str, task_path, candidate_path, device: str, calls: list[dict] | None, timeout_s: float,
                        **extra: Any) -> ChildRun:
    """A candidate's child on `calls`, or (calls None) on the calls it plans itself from `plan_seed`."""
    request = {"op": op, "task": str(Path(task_path).resolve()),
               "candidate": str(Path(candidate_path).resolve()) if candidate_path else None, "device": device, **extra}
    if calls is not None:
        request["calls"] = calls
    return run_with_channel(request, timeout_s)


def received_outputs(run: ChildRun, wanted: int, timeout_s: float) -> tuple[list[dict], tuple[str, str | None, str] | None]:
    """The candidate child's output frames, or (reason, cheat code, message) when it did not send exactly
    `wanted` well-formed ones. A child can make itself fail this way, never pass."""
    outputs: list[dict] = []
    for frame in run.frames:
        if isinstance(frame, dict) and "error" in frame:
            reason = frame["error"] if frame["error"] in REASONS and frame["error"] != "task_error" else "exception"
            return outputs, (reason, None, str(frame.get("message")))
        launches = frame.get("launches") if isinstance(frame, dict) else None
        if not (isinstance(launches, list) and all(isinstance(n, str) for n in launches) and "out" in frame):
            return outputs, ("cheat", "bad_frame", "the candidate process sent something other than its outputs")
        if frame.get("warning") is not None and not isinstance(frame["warning"], str):
            return outputs, ("cheat", "bad_frame", "the candidate process sent a malformed warning")
        outputs.append(frame)
    if run.channel_note:  # a frame that is not plain data (a pickled object, a tensor subclass) is refused
        return outputs, ("cheat", "bad_frame", f"the candidate process wrote {run.channel_note}")
    if len(outputs) > wanted:
        return outputs, ("cheat", "extra_outputs", f"the candidate process sent {len(outputs)} outputs for {wanted} calls")
    if len(outputs) < wanted:
        got = f"after {len(outputs)} of {wanted} outputs"
        if run.returncode is None:
            return outputs, ("timeout", None, f"no result after {timeout_s:g} s ({got}); the child was killed (a hang?)")
        if run.returncode == 0:
            return outputs, ("cheat", "missing_outputs", f"the candidate process exited with status 0 {got}")
        reason, message = run.exit_failure()
        return outputs, (reason, None, f"{message} ({got})")
    return outputs, None


def judge_outputs(ref: Reference, run: ChildRun, timeout_s: float) -> ValidationResult:
    """Compare every planned call's output with the reference's; the first cheat, else the first mismatch, fails."""
    result = ValidationResult(ok=False, device=ref.device, held_out_note=ref.note)
    outputs, failure = received_outputs(run, len(ref.expected), timeout_s)
    if failure:
        result.reason, result.cheat, result.message = failure
        return result
    result.warnings = list(dict.fromkeys(f["warning"] for f in outputs if f.get("warning")))
    k = 0
    cheat = None
    for item in ref.items:
        check: dict[str, Any] = {"ok": True}
        seconds = 0.0
        for seed in item["seeds"]:
            frame, expected = outputs[k], ref.expected[k]
            k += 1
            seconds += frame["seconds"] if isinstance(frame.get("seconds"), float) else 0.0
            if not frame["launches"] and cheat is None:
                cheat = f"{_where(item)}: no Triton kernel launched (seed {seed})"
            got = safe_compare(frame["out"], expected, ref.tolerance)
            if check["ok"]:
                check = {**got, "max_abs": max(got["max_abs"], check.get("max_abs", 0.0)),
                         "max_rel": max(got["max_rel"], check.get("max_rel", 0.0))}
        result.cases.append(CaseCheck(**check, case=item["case"], held_out=item["held_out"], seed=item["seeds"][0],
                                      seconds=round(seconds, 4)))
    first_bad = next((c for c in result.cases if not c.ok), None)
    if cheat:
        result.reason, result.cheat, result.message = "cheat", "no_triton_launch", cheat
    elif first_bad:
        result.reason = "incorrect"
        result.message = f"{_where(asdict(first_bad))}: {first_bad.reason}"
    else:
        result.ok = True
    return result


def _where(item: dict) -> str:
    return f"{'held-out ' if item['held_out'] else ''}case {item['case']}"


# --- the children's side --------------------------------------------------------------------------

def plan_calls(task, device: str, base_seed: int) -> tuple[list[dict], str | None]:
    """Every case, then the held-out shapes (SMALL_CASES on the interpreter); each case gets CALLS_PER_SHAPE
    distinct seeds: base_seed + i first (so a seed names a case), then seeds past every first one. A held-out
    shape gets one call: it comes after every case and is never seen before it, so no cache can answer it."""
    note = None
    if device == "cuda":
        plan = [(c, False) for c in task.cases] + [(c, True) for c in task.held_out]
    else:
        plan = [(c, False) for c in task.interpreter_cases()]
        if task.small_cases is None:
            plan += [(c, True) for c in task.held_out]
        elif task.held_out:
            note = "held-out shapes are GPU-sized; the interpreter ran SMALL_CASES only"
    n = len(plan)
    items = [{"case": case, "held_out": held, "seeds": [base_seed + i + j * n for j in range(1 if held else CALLS_PER_SHAPE)]}
             for i, (case, held) in enumerate(plan)]
    return items, note


def run_reference(task, device: str, seed: int, plan: str, bench_cases: list[int] | None,
                  send: Callable[[Any], None]) -> None:
    """The reference child: the plan ("validate" or "bench"), then the reference's output for every planned
    call, in order."""
    if plan == "validate":
        items, note = plan_calls(task, device, seed)
    else:
        from kopt.harness.bench import final_check_plan

        items, note = final_check_plan(task, bench_cases, seed, held_out=plan == "bench_held_out"), None
    send({"device": device, "items": items, "note": note,
          "tolerances": {k: list(v) for k, v in task.tolerances.items()}})
    for item in items:
        for s in item["seeds"]:
            args = copy.deepcopy(task.make_inputs(item["case"], device, s))  # nothing make_inputs keeps is touched
            with poisoned_allocations():
                send(to_host(observed(task.reference(*args), args, task.mutated)))


def observed(returned: Any, args: tuple, mutated: list[int]) -> Any:
    """What a call is judged on: what it returned, followed (MUTATED) by the inputs it wrote in place."""
    if not mutated:
        return returned
    if any(i >= len(args) for i in mutated):
        raise TaskError(f"MUTATED names input {max(mutated)}, but make_inputs returned {len(args)} inputs")
    return ([] if returned is None else _as_list(returned)) + [args[i] for i in mutated]


def nothing_returned_warning(returned: Any, args: tuple, before: list | None) -> str | None:
    """The warning for an entry that returned None: which inputs it wrote (declare MUTATED), or that it wrote none."""
    import torch

    if returned is not None or before is None:
        return None
    changed = [i for i, (a, b) in enumerate(zip(args, before))
               if isinstance(a, torch.Tensor) and not torch.equal(a.nan_to_num(), b.nan_to_num())]
    if changed:
        return (f"entry returned nothing and wrote input(s) {changed} in place: declare MUTATED = {changed} "
                "(names or positions) so they are compared")
    return "entry returned nothing and mutated no input: nothing of it is compared (return the output or declare MUTATED)"


def planned_calls(task, device: str, plan_seed: int) -> list[dict]:
    """The validation's calls, as the reference child plans them (the candidate child plans them itself)."""
    items, _ = plan_calls(task, device, plan_seed)
    return [{"case": item["case"], "seed": s} for item in items for s in item["seeds"]]


def run_candidate(task, candidate_path: str | None, device: str, calls: list[dict], send: Callable[[Any], None]) -> None:
    """The candidate child: every input built before the candidate is imported; then each call's raw output
    and the Triton kernels it launched."""
    import torch

    from kopt.harness.launches import LaunchLog
    from kopt.task import load_candidate

    inputs = [task.make_inputs(c["case"], device, c["seed"]) for c in calls]
    if candidate_path and task.kind != "kernelbench":  # (a KernelBench candidate needs Model for its weights)
        sys.modules.pop(task.module.__name__, None)  # the candidate cannot look the task's reference up by name
    launches = LaunchLog().install(device)
    with poisoned_allocations():
        candidate = load_candidate(candidate_path, task) if candidate_path else task
        if candidate.entry is None:
            raise TaskError(f"{candidate.path}: no entry to validate (a KernelBench module needs ModelNew)")
        for k, args in enumerate(inputs):
            before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args] \
                if k == 0 and not task.mutated else None  # the first call tells whether a None return is in place
            launches.take()
            start = time.perf_counter()
            out = candidate.entry(*args)
            if device == "cuda":
                torch.cuda.synchronize()
            frame = {"out": to_host(observed(out, args, task.mutated)), "launches": launches.take(),
                     "seconds": time.perf_counter() - start}
            warning = nothing_returned_warning(out, args, before)
            if warning:
                frame["warning"] = warning
            send(frame)


@contextlib.contextmanager
def poisoned_allocations() -> Iterator[None]:
    """Uninitialised allocations come back NaN (float) or a sentinel (int) while the block runs."""
    import torch

    def poison(t):
        if isinstance(t, torch.Tensor) and t.numel():
            if t.is_floating_point() or t.is_complex():
                t.fill_(float("nan"))
            elif t.dtype != torch.bool:
                t.fill_(torch.iinfo(t.dtype).max)
        return t

    def wrap(factory):
        return lambda *a, **k: poison(factory(*a, **k))

    names = ("empty", "empty_like", "empty_strided")
    saved = {n: getattr(torch, n) for n in names}
    saved_new_empty = torch.Tensor.new_empty
    for n in names:
        setattr(torch, n, wrap(saved[n]))
    torch.Tensor.new_empty = wrap(saved_new_empty)
    try:
        yield
    finally:
        for n in names:
            setattr(torch, n, saved[n])
        torch.Tensor.new_empty = saved_new_empty


def safe_compare(got: Any, expected: Any, tolerance) -> dict[str, Any]:
    """compare() on a hostile child's data: whatever it sent can fail the check, never raise."""
    import torch

    try:
        try:
            return compare(got, expected, tolerance)
        except torch.OutOfMemoryError:  # the GPU is busy (a campaign's other jobs): kopt's own check goes to the CPU
            torch.cuda.empty_cache()
            return compare(got, expected, tolerance, device="cpu")
    except Exception as exc:
        return {"ok": False, "max_abs": 0.0, "max_rel": 0.0, "atol": 0.0, "rtol": 0.0,
                "reason": f"the output could not be compared ({type(exc).__name__}: {str(exc)[:200]})"}


def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def compare(got: Any, expected: Any, tolerance, device: str | None = None) -> dict[str, Any]:
    """Elementwise |got - expected| <= atol + rtol * |expected| per output, NaN/Inf only where expected has them;
    on `device` (default: the GPU when there is one)."""
    import torch

    device = device or _compare_device()

    got_list, exp_list = _as_list(got), _as_list(expected)
    result = {"ok": True, "max_abs": 0.0, "max_rel": 0.0, "atol": 0.0, "rtol": 0.0, "reason": None}
    if len(got_list) != len(exp_list):
        return {**result, "ok": False, "reason": f"entry returned {len(got_list)} outputs, reference {len(exp_list)}"}
    for i, (g, e) in enumerate(zip(got_list, exp_list)):
        label = f"output {i}" if len(exp_list) > 1 else "output"
        if not isinstance(e, torch.Tensor):
            if g != e:
                return {**result, "ok": False, "reason": f"{label}: got {g!r}, expected {e!r}"}
            continue
        if not isinstance(g, torch.Tensor):
            return {**result, "ok": False, "reason": f"{label}: got {type(g).__name__}, expected a tensor"}
        if g.shape != e.shape or g.dtype != e.dtype:
            return {**result, "ok": False,
                    "reason": f"{label}: got {tuple(g.shape)} {g.dtype}, expected {tuple(e.shape)} {e.dtype}"}
        atol, rtol = tolerance(str(e.dtype).removeprefix("torch."))
        result.update(atol=atol, rtol=rtol)
        gd, ed = g.detach().to(device, torch.float64), e.detach().to(device, torch.float64)
        finite = torch.isfinite(ed)
        stray = ~torch.isfinite(gd) & finite
        if stray.any():
            idx = _index(stray.nonzero()[0])
            return {**result, "ok": False,
                    "reason": f"{label}: {int(stray.sum())} NaN/Inf where the reference is finite, first at {idx} "
                              f"(got {gd[idx].item()}, expected {ed[idx].item()}; unwritten output?)"}
        mismatched_special = ~finite & ~((gd == ed) | (torch.isnan(gd) & torch.isnan(ed)))
        if mismatched_special.any():
            idx = _index(mismatched_special.nonzero()[0])
            return {**result, "ok": False, "reason": f"{label}: at {idx} got {gd[idx].item()}, expected {ed[idx].item()}"}
        diff = torch.where(finite, (gd - ed).abs(), torch.zeros_like(gd))
        if diff.numel():
            result["max_abs"] = max(result["max_abs"], diff.max().item())
            meaningful = finite & (ed.abs() > max(atol, 1e-12))
            if meaningful.any():
                result["max_rel"] = max(result["max_rel"], (diff[meaningful] / ed[meaningful].abs()).max().item())
        bad = diff > atol + rtol * ed.abs()
        if bad.any():
            worst = _index((diff * bad).flatten().argmax(), shape=diff.shape)
            return {**result, "ok": False,
                    "reason": f"{label}: {int(bad.sum())} of {bad.numel()} elements outside atol={atol:g} rtol={rtol:g}; "
                              f"worst at {worst}: got {gd[worst].item():.6g}, expected {ed[worst].item():.6g}"}
    return result


def _compare_device() -> str:
    """Compare on the GPU when the parent has one: float64 over GBs of outputs is slow on a busy CPU."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _index(flat_or_nd, shape=None) -> tuple[int, ...]:
    import torch

    if shape is not None:
        return tuple(int(i) for i in torch.unravel_index(flat_or_nd, shape))
    return tuple(int(i) for i in flat_or_nd)
