"""The shared vocabulary: levels, evidence sources, finding ids, Evidence, Finding and Outcome.

It sits on the ground floor (ARCHITECTURE.md) because every layer speaks it: the diagnosis levels
(L1..L4) return Findings; patterns and pass notes name finding ids; the optimizer, the rounds store,
`kopt ask` and the MCP server pass them on. So it imports nothing from kopt and stays plain,
JSON-friendly data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Literal, get_args

Level = Literal["L1", "L2", "L3", "L4"]
LEVELS: tuple[str, ...] = get_args(Level)

EVIDENCE_SOURCES = (
    "pattern", "timing", "ncu", "ttir", "ttgir", "llir", "ptx", "sass", "trajectory",
    "compiler_source", "pass_note", "source", "compile_log", "ttadapter", "launch",
)

# The fixed label set of root causes. A Finding's id is always one of these, so rounds,
# patterns and evals can be compared across kernels and runs.
FINDING_IDS: dict[str, str] = {
    "non_vectorized_load": "global loads/stores narrower than 16 bytes where the data would allow it",
    "uncoalesced_access": "threads of a warp touch scattered addresses (strided or transposed access)",
    "misaligned_access": "pointers or strides not known to be 16-byte aligned, so vector width drops",
    "no_software_pipelining": "loop loads are not multi-buffered (no cp.async/TMA pipelining)",
    "layout_conversion": "convert_layout ops shuffle data through shared memory",
    "register_spill": "registers spill to local memory (LDL/STL)",
    "low_occupancy": "too few warps resident per SM (registers, shared memory or tiny grid)",
    "untuned_config": "block sizes, num_warps or num_stages not tuned for the shape",
    "small_block": "a hard-coded block too small to keep the memory system busy",
    "fp32_dot_ieee": "fp32 dot at ieee precision, so tensor cores sit idle",
    "no_tensor_cores": "a dot lowered to FMA instead of wgmma/mma",
    "poor_l2_reuse": "program order re-reads tiles from DRAM that a grouped order would keep in L2",
    "scalar_loop": "per-element scalar work in a loop where a block operation would do",
    "int64_indexing": "64-bit index arithmetic where 32 bits would do (or overflow where it won't)",
    "modulo_indexing": "division/modulo in offsets defeats contiguity analysis",
    "redundant_loads": "the same data is loaded repeatedly inside a loop",
    "transpose_before_dot": "an operand is transposed in registers before a dot",
    "tail_effect": "the grid leaves SMs idle in the last wave",
    "too_many_programs": "many tiny programs; launch and scheduling overhead dominate",
    "bank_conflicts": "shared-memory bank conflicts",
    "atomic_contention": "many programs hit the same addresses with atomics",
    "unfused_ops": "separate kernels or passes over memory that one kernel could do",
    "serial_reduction": "a reduction done serially or in many passes",
    "memory_bound": "bytes moved dominate; the kernel sits on the bandwidth roofline side",
    "compute_bound": "arithmetic dominates; the kernel sits on the compute roofline side",
    "latency_bound": "neither bandwidth nor compute is saturated: not enough work in flight",
    "masked_access": "masks the compiler cannot prove aligned split vector accesses",
    "unstructured_access": "Ascend: offsets the adapter cannot turn into a block copy (scalar loop)",
    "ub_overflow": "Ascend: a tile's on-chip buffers exceed the Unified Buffer (192 KB on 910B, half with double buffering)",
    "compile_failure": "the kernel does not compile",
}


@dataclass
class Evidence:
    """One observation behind a finding, with the level it came from and where it points."""

    level: str
    source: str
    summary: str
    data: dict[str, Any] = field(default_factory=dict)
    location: str | None = None  # kernel file:line, or compiler path:line@version

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Evidence:
        return cls(**d)


@dataclass
class Finding:
    """A root-cause hypothesis with its evidence, what a fix must satisfy, and catalog patterns that address it."""

    id: str
    level: str
    message: str
    confidence: float = 0.5
    evidence: list[Evidence] = field(default_factory=list)
    kernel_lines: list[int] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.id not in FINDING_IDS:
            raise ValueError(f"unknown finding id {self.id!r}; known: {', '.join(sorted(FINDING_IDS))}")
        if self.level not in LEVELS:
            raise ValueError(f"unknown level {self.level!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Finding:
        d = dict(d)
        d["evidence"] = [Evidence.from_dict(e) for e in d.get("evidence", [])]
        return cls(**d)


class Outcome(StrEnum):
    """What became of one candidate. Rounds, reports, synthesis, the CLI and MCP all read this one list."""

    IMPROVED = "improved"  # validated, and measured faster than the best so far: the only win
    SLOWER = "slower"  # validated and timed, not faster
    UNTIMED = "untimed"  # validated on every case, but no GPU to time it: never a win
    INCORRECT = "incorrect"
    COMPILE_ERROR = "compile_error"
    TIMEOUT = "timeout"
    CRASH = "crash"
    REJECTED = "rejected"  # it changed what it is judged by (reference, inputs, tolerances), or cheated
    PROPOSER_ERROR = "proposer_error"  # no candidate: an unreachable LLM, garbage replies (the message says why)
    UNPARSABLE = "unparsable"  # a prompt-exchange reply held no usable task file
    NOT_VALIDATED = "not_validated"  # a launch-config variant left unvalidated: a faster one passed (trials only)


ROUND_OUTCOMES = tuple(o for o in Outcome if o is not Outcome.NOT_VALIDATED)  # what a recorded round can be
KEPT = (Outcome.IMPROVED, Outcome.UNTIMED)  # a win, or correct but untimed: not a rejected candidate
FAILED = (Outcome.COMPILE_ERROR, Outcome.INCORRECT, Outcome.TIMEOUT, Outcome.CRASH, Outcome.SLOWER)  # failed hypotheses
