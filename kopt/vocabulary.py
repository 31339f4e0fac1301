"""The shared vocabulary: levels, evidence sources, finding ids, Evidence, Finding and Outcome.

It sits on the ground floor (ARCHITECTURE.md) because every layer speaks it: the diagnosis levels
(L1..L4) return Findings; patterns and pass notes name finding ids; the optimizer, the rounds store,
`kopt ask` and the MCP server pass them on. So it imports nothing from kopt and stays plain,
JSON-friendly data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Iterable, Literal, get_args

Level = Literal["L1", "L2", "L3", "L4"]
LEVELS: tuple[str, ...] = get_args(Level)

EVIDENCE_SOURCES = (
    "pattern", "timing", "ncu", "ttir", "ttgir", "llir", "ptx", "sass", "trajectory",
    "compiler_source", "pass_note", "source", "compile_log", "ttadapter", "launch",
)
# What a finding can stand on besides reading: the kernel as launched, compiled or measured. The source text, a
# catalog pattern and the compiler's own code or notes explain a finding; they do not observe this kernel.
OBSERVED_SOURCES = frozenset(EVIDENCE_SOURCES) - {"source", "pattern", "compiler_source", "pass_note"}

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


# Where two ids could both name one cause: the id kopt uses (its diagnosis follows these, `kopt findings` prints
# them, and the blind case writers' brief quotes them), phrased by what a fix would change.
BOUNDARIES: dict[str, str] = {
    "small_block": "a block constant sets how much each program or loop trip moves, and raising it is the fix; when "
                   "the grid gives one program per item (token, head, short row) whatever the block, it is "
                   "too_many_programs",
    "too_many_programs": "the grid gives one program per small item (a token, a head, a short row, a pair), each "
                         "moving a few hundred bytes, and no block constant changes that (a block constant that does "
                         "is small_block): the fix gives each program several items",
    "untuned_config": "sizes, num_warps or num_stages are plausible but wrong for these shapes; one hard-coded size "
                      "far below any sensible value (a streaming block of a few hundred elements, a dot tile under 64) "
                      "is small_block",
    "low_occupancy": "registers or shared memory limit the warps resident per SM, or the grid has fewer programs "
                     "than SMs while a smaller tile would add programs (the grid counts tiles); a grid of one program "
                     "per item (row, sample) that is tiny because each walks a long axis other programs could share "
                     "is serial_reduction",
    "serial_reduction": "one program walks a long reduction or scan axis that could be split across programs "
                        "(partials and a second pass, or atomics), programs wait on each other in a chain, or the "
                        "data is reduced in several passes; a loop handling one element per trip inside a program is "
                        "scalar_loop",
    "scalar_loop": "a loop inside a program handles one element or one sequence position per trip where a block "
                   "operation (a vector load, tl.sum, tl.cumsum, tl.associative_scan, tl.dot) would do its work at "
                   "once; a loop that is already vectorised but walks an axis other programs could share is "
                   "serial_reduction",
    "unfused_ops": "separate kernel launches, or torch ops in the entry, each passing over memory that one kernel "
                   "could avoid; this includes host-side copies (.contiguous(), .t().contiguous(), permute, dtype "
                   "casts) before or after the kernel; a convert_layout inside one kernel is layout_conversion",
    "layout_conversion": "convert_layout inside a compiled kernel moves a tile through shared memory; a host-side "
                         "copy in the entry is unfused_ops",
    "transpose_before_dot": "a tile is transposed in registers (tl.trans, or loaded in one order and permuted) before "
                            "tl.dot; a transposed copy made by torch in the entry is unfused_ops",
    "non_vectorized_load": "narrow accesses with no other reason; when the reason is known it is named instead: "
                           "misaligned_access, masked_access, uncoalesced_access (strided lanes) or small_block (too "
                           "few elements per thread)",
    "redundant_loads": "the same data loaded again by one program (inside a loop) or by many programs where one load "
                       "per program or per tile would do; re-reads a grouped program order would keep in L2 are "
                       "poor_l2_reuse",
    "tail_effect": "the grid has at least as many programs as SMs but its last wave leaves many SMs idle; fewer "
                   "programs than SMs is low_occupancy",
    "no_tensor_cores": "a matmul done as a broadcast multiply and tl.sum, or a tl.dot lowered to FMA; an fp32 tl.dot "
                       "at ieee precision is fp32_dot_ieee",
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

    def kernel(self, names: Iterable[str] | None = None) -> str | None:
        """The kernel this finding is about: its evidence names it, or its message starts with it (`name: ...`), a
        name among `names` when given."""
        named = next((e.data["kernel"] for e in self.evidence if isinstance(e.data, dict) and e.data.get("kernel")), None)
        head = self.message.split(":", 1)[0]
        return named or (head if (head in set(names) if names is not None else head.isidentifier()) else None)

    @property
    def observed(self) -> bool:
        """Whether any evidence observes this kernel (a launch, the compiled code, a profile), not only its text."""
        return any(e.source in OBSERVED_SOURCES for e in self.evidence)

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
