"""The L1 signal registry: every source signal's meaning, the root cause it is evidence for, its prior
confidence and what must hold before acting on it, in one table.

It sits in the catalog layer (ARCHITECTURE.md) because patterns name signals as symptoms and are checked
against this table; each signal's detector lives in kopt/diagnose/l1_detectors.py under the same name
(`@detects("name")`), and a test holds the two together.
"""

from __future__ import annotations

from dataclasses import dataclass

from kopt.vocabulary import FINDING_IDS


@dataclass(frozen=True)
class SignalSpec:
    """One source signal: what it means, the finding it is evidence for, how often it alone means a real
    slowdown (the prior), and the condition a fix needs (None when there is none)."""

    name: str
    means: str
    finding: str
    confidence: float
    condition: str | None = None

    def __post_init__(self) -> None:
        if self.finding not in FINDING_IDS:
            raise ValueError(f"signal {self.name}: unknown finding id {self.finding!r}")


SIGNALS: dict[str, SignalSpec] = {s.name: s for s in (
    SignalSpec("small_block", "a hard-coded block constexpr below 128 elements (1-D) or a dot tile below 64",
               "small_block", 0.8),
    SignalSpec("no_autotune", "a kernel with tunable block constexprs and no @triton.autotune", "untuned_config", 0.35),
    SignalSpec("default_num_warps", "big tiles launched with the default num_warps (none given)", "untuned_config", 0.5),
    SignalSpec("fp32_dot_ieee", "tl.dot with input_precision='ieee' or allow_tf32=False", "fp32_dot_ieee", 0.9,
               "the operands are fp32 and the tolerance allows tf32 (or tf32x3)"),
    SignalSpec("scalar_loop", "a loop over elements doing scalar tl.load per iteration", "scalar_loop", 0.85),
    SignalSpec("int64_offsets", "offsets cast to tl.int64", "int64_indexing", 0.3,  # a few integer ops per access
               "every offset stays below 2**31 for all cases"),
    SignalSpec("modulo_offsets", "% or // applied to tl.arange-derived offsets", "modulo_indexing", 0.6,
               "the modulo/division is an index decomposition, not needed for wrap-around semantics"),
    SignalSpec("transpose_before_dot", "tl.trans / .T / tl.permute feeding a tl.dot", "transpose_before_dot", 0.55),
    SignalSpec("loop_invariant_load", "a tl.load inside a loop whose address does not depend on the loop",
               "redundant_loads", 0.7),
    SignalSpec("strided_access", "a runtime stride multiplying tl.arange on the contiguous axis", "uncoalesced_access",
               0.45, "the stride is not 1 at run time (the JIT turns an integer argument equal to 1 into a constant, "
                     "which is contiguous)"),
    SignalSpec("no_grouped_order", "a 2-D-grid matmul with plain row-major program order", "poor_l2_reuse", 0.55),
    SignalSpec("tiny_programs", "a grid of cdiv(n, small): many tiny programs", "too_many_programs", 0.7),
    SignalSpec("atomic_in_loop", "tl.atomic_* inside a loop", "atomic_contention", 0.75),
    SignalSpec("scattered_atomic", "tl.atomic_* at addresses loaded from memory (a histogram or scatter-add)",
               "atomic_contention", 0.7),
    SignalSpec("spin_lock", "a while loop spinning on tl.atomic_cas (a lock): programs that share it take turns",
               "atomic_contention", 0.75),
    SignalSpec("spin_wait", "a while loop polling memory another program writes (an atomic read or a volatile load, "
               "not a lock's atomic_cas): each program waits for another, a chain through the grid (a chained scan)",
               "serial_reduction", 0.8, "the wait is for a predecessor's result: a two-pass (reduce, then scan the "
               "partials) or a look-back over many predecessors removes the chain"),
    SignalSpec("shared_atomic", "tl.atomic_* outside loops at addresses that do not depend on the program (every "
               "program accumulates into the same dW row or sum)", "atomic_contention", 0.7),
    SignalSpec("two_pass_loads", "the same pointer argument loaded in two separate loops (a statistics pass, then an "
               "apply pass): the program reads the same data twice", "redundant_loads", 0.55),
    SignalSpec("constant_grid", "a launch grid of literal constants with fewer programs than a GPU has SMs",
               "low_occupancy", 0.8),
    SignalSpec("broadcast_matmul", "tl.sum over a broadcast product of two tiles (a[:, None, :] * b[None, :, :]): a "
               "matmul on FMA units", "no_tensor_cores", 0.85,
               "every tile dimension is at least 16 (pad or group small blocks) so tl.dot applies"),
    SignalSpec("fp64_math", "arithmetic in tl.float64 (casts, fp64 accumulators)", "compute_bound", 0.8,
               "the tolerance allows fp32 arithmetic (keep fp64 only where the error analysis needs it)"),
    SignalSpec("runtime_divmod", "several % or // by runtime integers on per-element offsets", "modulo_indexing", 0.8,
               "the index decomposition can move to the grid or to per-program scalars, and wraps to compare/select"),
    SignalSpec("axis_invariant_tile", "a 2-D grid whose programs along one axis stream, in a loop, the same tile of "
               "a tensor (its address ignores that axis's program id) with no tl.dot to share it: a small-batch GEMV "
               "that re-reads the weight once per batch row", "redundant_loads", 0.6,
               "one program can load the tile once and apply it to every item of that axis (a tl.dot over the batch, "
               "or a loop over it inside the program)"),
    SignalSpec("while_tile_loop", "a while loop that streams tile loads into tl.dot or an accumulator: Triton's "
               "software pipeliner only takes counted for loops", "no_software_pipelining", 0.75,
               "the trip count is known at loop entry: for t in range(start, end, BLOCK) (or tl.range) replaces the "
               "while, and the loop then pipelines with num_stages"),
    SignalSpec("nested_dot_loop", "a counted loop streaming tiles into tl.dot nested in another loop: the pipeliner "
               "takes the inner loop alone, so its prologue and drain repeat on every outer trip", "no_software_pipelining",
               0.4, "the inner loop has few trips in every case: flatten the loops into one counted loop over every "
               "(outer, inner) step, decoding the step index into both, so the pipeline stays full across them"),
    SignalSpec("idle_programs", "tiles masked against a bound loaded from memory (a group's end, a sequence length) "
               "with no early return: a worst-case grid whose surplus programs run the whole loop masked off",
               "too_many_programs", 0.7, "a program whose tile starts past the loaded bound returns before the loop "
               "(if start >= end: return), or the grid is sized from the real sizes"),
    SignalSpec("stepped_scan", "a loop over a runtime-length axis, one position per iteration, storing the carried "
               "state every iteration (a scan or linear recurrence stepped position by position)", "scalar_loop", 0.85,
               "the step is associative (a running sum or max, h = a * h + x): scan a chunk of positions at once with "
               "tl.associative_scan or tl.cumsum and carry the chunk's last state into the next"),
    SignalSpec("serial_chain", "a loop over a runtime-length axis, one row per iteration, carrying an accumulator",
               "serial_reduction", 0.8, "the combine is associative (a sum, max or linear recurrence): scan or "
               "reduce blocks of the axis at once and split the axis across programs"),
)}
