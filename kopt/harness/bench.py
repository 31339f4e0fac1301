"""Timing on the GPU: kernel-only medians with the L2 flushed before every call and fresh input sets
rotated so nothing stays cached, placed on the device's roofline.

Kernel-only means the device time of everything `entry` launches (its Triton kernels plus any
torch kernels, copies or memsets it issues), summed per call from CUPTI activity (torch.profiler),
not host overhead; the CUDA-event time per call (which includes launch gaps) is reported beside it.
`bench()` is the API (always sandboxed); `run_bench()` is what the candidate's child runs.

Protection (as in kopt.harness.validate): the static integrity check, then a full validation, then the timing
child; after each case's timed loop the child sends the output of one more call on fresh inputs (built
before the candidate was imported), which the parent checks against the reference child's output, so an
entry that computes once and replays cannot pay. A case whose device time goes mostly to kernels Triton
did not launch (aten, cuBLAS, ...; memsets and copies aside) is a `cheat`: the work was not the candidate's.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable

from kopt.errors import KoptError, TaskError
from kopt.harness.gpulock import measuring
from kopt.harness.sandbox import DEFAULT_TIMEOUT_S

FLUSH_BYTES = 512 << 20  # well above any current L2 (H200: 60 MB)
FLUSH_VALUE = 7  # what kopt_l2_flush writes; its launches split the profile into calls
INPUT_BUDGET_BYTES = 4 << 30
TARGET_SECONDS = float(os.environ.get("KOPT_BENCH_SECONDS", "0.5"))  # of timed calls per case (at least MIN_RUNS)
MIN_RUNS, MAX_RUNS = 25, 400
FINAL_SEED_OFFSET = 1_000_000  # final-check seeds stay clear of the timing sets' (base + 1000 * case + set)
MAX_FOREIGN_SHARE = 0.5  # of a call's device time, in kernels Triton did not launch (memsets/copies aside)
DATA_MOVEMENT = re.compile(r"memcpy|memset|copy", re.IGNORECASE)  # CUPTI copies, memsets, aten copy kernels


@dataclass
class CaseTiming:
    case: dict
    kernel_ms: float  # median over calls of the summed device time of entry's kernels
    kernel_ms_min: float
    kernel_ms_p90: float
    event_ms: float  # median CUDA-event time per call (includes launch overhead)
    runs: int
    input_sets: int
    kernels: dict[str, float] = field(default_factory=dict)  # kernel name -> median ms per call
    gbps: float | None = None
    tflops: float | None = None
    roofline_fraction: float | None = None  # roofline-bound time / measured time
    bound: str | None = None  # memory | compute
    triton_kernels: list[str] = field(default_factory=list)  # the kernels Triton launched in the timed calls


@dataclass
class BenchResult:
    ok: bool
    reason: str | None = None
    message: str | None = None
    device: str = ""
    ceilings: dict[str, Any] = field(default_factory=dict)
    cases: list[CaseTiming] = field(default_factory=list)
    elapsed_s: float = 0.0
    cheat: str | None = None  # the integrity sub-code when reason == "cheat"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def bench(task_path: str | Path, candidate_path: str | Path | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S,
          cases: list[int] | None = None, seed: int | None = None, validate_first: bool = True,
          trusted: bool = False, reference: Any = None, held_out: bool = False) -> BenchResult:
    """Time a task's entry (or a candidate's) on every case (or the given case indices), in a sandboxed child,
    after it passed validation. Raises KoptError without a GPU and TaskError for a broken task file.
    `validate_first=False`: the caller validates whatever it accepts itself (the optimize loop does, so a round
    does not validate twice); the final-output check after timing still runs. `trusted`: code kopt wrote itself
    (the torch references it times), exempt from the integrity rules that a candidate's kernels must meet.
    `reference`: bench_reference(task_path, seed) made ahead (the optimize loop makes it beside a validation),
    with `seed` the same; else the reference's child runs here first. `held_out`: time the HELD_OUT shapes
    (`cases` then indexes them) instead of CASES."""
    from kopt.harness.integrity import check_file
    from kopt.harness.validate import ReferenceFailed, run_candidate_child, validate

    start = time.monotonic()
    violation = None if trusted else check_file(Path(candidate_path or task_path), Path(task_path))
    if violation:
        return BenchResult(ok=False, reason="cheat", cheat=violation.code, message=violation.message)
    base_seed = seed if seed is not None else int.from_bytes(os.urandom(4), "little")
    try:
        ref = reference or bench_reference(task_path, base_seed, timeout_s, cases, held_out)
    except ReferenceFailed as exc:
        return BenchResult(ok=False, reason=exc.args[0], message=exc.args[1])
    if ref.device != "cuda":
        raise KoptError("bench needs a CUDA GPU and none is visible (compile and validate work without one)")
    checked = validate(task_path, candidate_path, timeout_s=_left(start, timeout_s), seed=seed) \
        if validate_first and not trusted else None
    if checked is not None and not checked.ok:
        return BenchResult(ok=False, reason=checked.reason, cheat=checked.cheat,
                           message=f"not timed, validation failed: {checked.message}")
    run = run_candidate_child("bench", task_path, candidate_path, "cuda", ref.calls(), _left(start, timeout_s),
                              seed=base_seed)
    # the task's own entry is the baseline as the user has it: its torch kernels are part of what is timed
    result = judge_bench(ref, run, timeout_s, trusted=trusted, baseline=candidate_path is None)
    result.elapsed_s = round(time.monotonic() - start, 3)
    return result


def bench_reference(task_path: str | Path, seed: int, timeout_s: float = DEFAULT_TIMEOUT_S,
                    cases: list[int] | None = None, held_out: bool = False):
    """The reference's outputs for bench's final check (seeded by `seed`), from a child that loads only the task.
    Raises ReferenceFailed (and TaskError) as reference_outputs does."""
    from kopt.harness.validate import reference_outputs

    return reference_outputs(task_path, None, seed, timeout_s, plan="bench_held_out" if held_out else "bench",
                             bench_cases=cases)


def _left(start: float, timeout_s: float) -> float:
    return max(timeout_s - (time.monotonic() - start), 1.0)


def judge_bench(ref, run, timeout_s: float, trusted: bool = False, baseline: bool = False) -> BenchResult:
    """Each case's final output against the reference's, then whose kernels the time went to (not for the
    task's own entry, `baseline`: a launcher's torch work is part of the kernel the user brought)."""
    from kopt.harness.validate import received_outputs, safe_compare

    outputs, failure = received_outputs(run, len(ref.expected), timeout_s)
    if failure:
        return BenchResult(ok=False, reason=failure[0], cheat=failure[1], message=failure[2])
    result = BenchResult(ok=True, device=str(outputs[0].get("device_name", "")) if outputs else "",
                         ceilings=outputs[0].get("ceilings", {}) if outputs else {})
    for item, frame, expected in zip(ref.items, outputs, ref.expected):
        where = f"case {item['case']}"
        if not frame["launches"] and not trusted:
            return BenchResult(ok=False, reason="cheat", cheat="no_triton_launch",
                               message=f"{where}: no Triton kernel launched by the final call after timing")
        check = safe_compare(frame["out"], expected, ref.tolerance)
        if not check["ok"]:
            return BenchResult(ok=False, reason="incorrect", message=f"{where}: the call after timing: {check['reason']}")
        try:
            timing = CaseTiming(**frame["timing"])
        except (KeyError, TypeError) as exc:
            return BenchResult(ok=False, reason="cheat", cheat="bad_frame", message=f"{where}: malformed timing ({exc})")
        share, worst = foreign_share(timing.kernels, set(timing.triton_kernels))
        if share > MAX_FOREIGN_SHARE and not (trusted or baseline):
            return BenchResult(ok=False, reason="cheat", cheat="foreign_kernels",
                               message=f"{where}: {share:.0%} of the device time is in kernels Triton did not launch "
                                       f"(first: {worst}); the work must be the candidate's Triton kernels")
        result.cases.append(timing)
    return result


def foreign_share(kernels: dict[str, float], triton_names: set[str]) -> tuple[float, str | None]:
    """(share of the per-call device time in kernels Triton did not launch, memsets and copies aside; the largest)."""
    total = sum(kernels.values())
    foreign = {n: ms for n, ms in kernels.items() if n not in triton_names and not DATA_MOVEMENT.search(n)}
    if total <= 0 or not foreign:
        return 0.0, None
    return sum(foreign.values()) / total, max(foreign, key=foreign.get)


def final_check_plan(task, cases: list[int] | None, seed: int, held_out: bool = False) -> list[dict]:
    """One fresh-input call per timed case (of CASES, or of HELD_OUT), on seeds no timing set uses."""
    shapes, first = (task.held_out, len(task.cases)) if held_out else (task.cases, 0)
    if held_out and not shapes:
        raise TaskError(f"{task.path}: no HELD_OUT shapes to time")
    indices = range(len(shapes)) if cases is None else cases
    wrong = [i for i in indices if not 0 <= i < len(shapes)]
    if wrong:
        raise TaskError(f"{task.path}: no {'HELD_OUT' if held_out else 'CASES'} entry {wrong[0]} "
                        f"(it has {len(shapes)})")
    return [{"case": shapes[i], "held_out": held_out, "seeds": [seed + FINAL_SEED_OFFSET + first + i]} for i in indices]


# --- the child's side -----------------------------------------------------------------------------

def run_bench(task, candidate_path: str | None, calls: list[dict], seed: int, send: Callable[[Any], None]) -> None:
    """Time each planned case, then send the output of one more call on the inputs built before the import."""
    import torch

    from kopt.harness.ceilings import get_ceilings
    from kopt.harness.channel import to_host
    from kopt.harness.flush import flush_l2
    from kopt.harness.launches import LaunchLog
    from kopt.harness.validate import observed
    from kopt.task import load_candidate

    final_inputs = [task.make_inputs(c["case"], "cuda", c["seed"]) for c in calls]
    launches = LaunchLog().install("cuda")
    candidate = load_candidate(candidate_path, task) if candidate_path else task
    if candidate.entry is None:
        raise TaskError(f"{candidate.path}: no entry to bench (a KernelBench module needs ModelNew)")
    ceilings = get_ceilings()
    buffer = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    flush = partial(flush_l2, buffer, FLUSH_VALUE)
    flush_names = _flush_kernel_names(flush)
    for call, args in zip(calls, final_inputs):
        case_index = (task.cases + task.held_out).index(call["case"])  # a shape's timing seeds do not move
        launches.take()
        timing = _time_case(task, candidate, call["case"], seed + 1000 * case_index, flush, flush_names, ceilings)
        timing.triton_kernels = sorted(set(launches.take()))
        out = observed(candidate.entry(*args), args, task.mutated)
        torch.cuda.synchronize()
        send({"out": to_host(out), "launches": launches.take(), "timing": asdict(timing),
              "device_name": torch.cuda.get_device_name(), "ceilings": ceilings})


def _device_events(prof) -> list[tuple[int, int, str]]:
    """(start_ns, duration_ns, name) of GPU kernels, copies and memsets, in time order."""
    from torch.autograd import DeviceType

    events = []
    for e in prof.profiler.kineto_results.events():
        if e.device_type() == DeviceType.CUDA and not e.is_user_annotation() and e.duration_ns() > 0:
            events.append((e.start_ns(), e.duration_ns(), e.name()))
    return sorted(events)


def _flush_kernel_names(flush) -> set[str]:
    import torch

    flush()  # JIT-compile it outside the profile
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        flush()
        torch.cuda.synchronize()
    names = {name for _, _, name in _device_events(prof)}
    if not names:
        raise RuntimeError("the CUDA profiler recorded no kernel (is CUPTI available?)")
    return names


def _time_case(task, candidate, case, seed, flush, flush_names, ceilings) -> CaseTiming:
    import torch

    probe = task.make_inputs(case, "cuda", seed)
    set_bytes = sum(x.numel() * x.element_size() for x in probe if isinstance(x, torch.Tensor)) or 1
    n_sets = max(2, min(8, INPUT_BUDGET_BYTES // set_bytes))
    sets = [probe] + [task.make_inputs(case, "cuda", seed + j) for j in range(1, n_sets)]

    def call(i: int) -> None:
        flush()
        candidate.entry(*sets[i % n_sets])

    for i in range(3):  # warm-up: JIT compile, autotune, allocator
        call(i)
    torch.cuda.synchronize()
    with measuring():
        return _timed_loop(task, candidate, case, sets, call, flush, flush_names, ceilings)


def _timed_loop(task, candidate, case, sets, call, flush, flush_names, ceilings) -> CaseTiming:
    import torch

    n_sets = len(sets)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(5):
        call(i)
    end.record()
    end.synchronize()
    per_call_s = max(start.elapsed_time(end) / 5 * 1e-3, 1e-6)
    runs = int(max(MIN_RUNS, min(MAX_RUNS, TARGET_SECONDS / per_call_s)))

    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for i in range(runs):
            flush()
            starts[i].record()
            candidate.entry(*sets[i % n_sets])
            ends[i].record()
        torch.cuda.synchronize()
    per_call = _split_calls(_device_events(prof), flush_names)
    if len(per_call) != runs:
        raise RuntimeError(f"profiler saw {len(per_call)} calls, expected {runs}")
    totals = sorted(sum(k.values()) for k in per_call)
    kernel_ms = _median(totals)
    names = sorted({n for k in per_call for n in k})
    timing = CaseTiming(
        case=case, kernel_ms=kernel_ms, kernel_ms_min=totals[0], kernel_ms_p90=totals[int(0.9 * (len(totals) - 1))],
        event_ms=_median([s.elapsed_time(e) for s, e in zip(starts, ends)]), runs=runs, input_sets=n_sets,
        kernels={n: _median([k.get(n, 0.0) for k in per_call]) for n in names},
    )
    _place_on_roofline(timing, task, case, ceilings)
    return timing


def _split_calls(events: list[tuple[int, int, str]], flush_names: set[str]) -> list[dict[str, float]]:
    """Device events in order -> per call {kernel name: ms}; each call starts at a flush kernel."""
    calls: list[dict[str, float]] = []
    for _, duration_ns, name in events:
        if name in flush_names:
            calls.append({})
        elif calls:
            calls[-1][name] = calls[-1].get(name, 0.0) + duration_ns / 1e6
    return calls


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _place_on_roofline(timing: CaseTiming, task, case: dict, ceilings: dict[str, Any]) -> None:
    seconds = timing.kernel_ms * 1e-3
    if seconds <= 0:
        return
    bound_s = {}
    if task.bytes_moved:
        moved = task.bytes_moved(case)
        timing.gbps = moved / seconds / 1e9
        bound_s["memory"] = moved / (ceilings["copy_gbps"] * 1e9)
    if task.flops:
        work = task.flops(case)
        timing.tflops = work / seconds / 1e12
        rate = ceilings["matmul_tflops"].get(task.dtype_flops or "fp32", ceilings["matmul_tflops"]["fp32"])
        bound_s["compute"] = work / (rate * 1e12)
    if bound_s:
        timing.bound = max(bound_s, key=bound_s.get)
        timing.roofline_fraction = bound_s[timing.bound] / seconds
