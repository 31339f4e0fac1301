"""Correctness: every case on fresh random inputs, outputs poisoned first, dtype-aware tolerances,
NaN/Inf checks, then the held-out shapes the optimizer never saw.

`validate()` is the API (it always runs in the sandbox); `run_validation()` is what the child runs.
Poisoning: while `entry` runs, torch.empty/empty_like/empty_strided/new_empty return NaN-filled
(float) or sentinel-filled (int) tensors, so an output element the kernel forgot to write fails.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

from kopt.errors import TaskError
from kopt.harness.sandbox import DEFAULT_TIMEOUT_S, run_sandboxed


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
    seconds: float = 0.0


@dataclass
class ValidationResult:
    ok: bool
    device: str = ""  # cuda | cpu (the Triton interpreter)
    reason: str | None = None  # None | incorrect | timeout | crash | cuda_error | oom | exception | compile_error
    message: str | None = None  # the first failure, one line
    cases: list[CaseCheck] = field(default_factory=list)
    held_out_note: str | None = None  # why held-out shapes were not run, if they were not
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def validate(task_path: str | Path, candidate_path: str | Path | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S,
             seed: int | None = None, device: str | None = None) -> ValidationResult:
    """Validate a task's entry (or a candidate's) against the task's reference, in a sandboxed child.
    Raises TaskError when the task file itself is broken; a broken candidate is a failed result."""
    kw: dict[str, Any] = {}
    if seed is not None:
        kw["seed"] = seed
    if device is not None:
        kw["device"] = device
    outcome = run_sandboxed("validate", task_path, candidate_path, timeout_s=timeout_s, **kw)
    if outcome["reason"] == "task_error":
        raise TaskError(outcome["message"])
    body = outcome.get("result") or {}
    return ValidationResult(
        ok=outcome["ok"], device=body.get("device", ""), reason=outcome["reason"], message=outcome["message"],
        cases=[CaseCheck(**c) for c in body.get("cases", [])], held_out_note=body.get("held_out_note"),
        elapsed_s=outcome["elapsed_s"],
    )


# --- the child's side -----------------------------------------------------------------------------

def run_validation(task, candidate, device: str, seed: int | None = None) -> dict[str, Any]:
    """Check candidate.entry against task.reference on every case; exceptions propagate to the worker."""
    if candidate.entry is None:
        raise TaskError(f"{candidate.path}: no entry to validate (a KernelBench module needs ModelNew)")
    base_seed = seed if seed is not None else int.from_bytes(os.urandom(4), "little")
    note = None
    if device == "cuda":
        plan = [(c, False) for c in task.cases] + [(c, True) for c in task.held_out]
    else:
        plan = [(c, False) for c in task.interpreter_cases()]
        if task.small_cases is None:
            plan += [(c, True) for c in task.held_out]
        elif task.held_out:
            note = "held-out shapes are GPU-sized; the interpreter ran SMALL_CASES only"
    checks = [_check_case(task, candidate, case, device, base_seed + i, held)
              for i, (case, held) in enumerate(plan)]
    first_bad = next((c for c in checks if not c.ok), None)
    return {
        "ok": first_bad is None, "device": device, "cases": [asdict(c) for c in checks], "held_out_note": note,
        "reason": "incorrect" if first_bad else None,
        "message": f"{'held-out ' if first_bad.held_out else ''}case {first_bad.case}: {first_bad.reason}" if first_bad else None,
    }


def _check_case(task, candidate, case: dict, device: str, seed: int, held_out: bool) -> CaseCheck:
    import torch

    start = time.perf_counter()
    inputs = task.make_inputs(case, device, seed)
    pristine = tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in inputs)
    expected = task.reference(*pristine)
    with poisoned_allocations():
        got = candidate.entry(*inputs)
    if device == "cuda":
        torch.cuda.synchronize()
    check = compare(got, expected, task.tolerance)
    check.update(case=case, held_out=held_out, seed=seed, seconds=round(time.perf_counter() - start, 4))
    return CaseCheck(**check)


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


def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def compare(got: Any, expected: Any, tolerance) -> dict[str, Any]:
    """Elementwise |got - expected| <= atol + rtol * |expected| per output, NaN/Inf only where expected has them."""
    import torch

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
        gd, ed = g.detach().double().cpu(), e.detach().double().cpu()
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


def _index(flat_or_nd, shape=None) -> tuple[int, ...]:
    import torch

    if shape is not None:
        return tuple(int(i) for i in torch.unravel_index(flat_or_nd, shape))
    return tuple(int(i) for i in flat_or_nd)
