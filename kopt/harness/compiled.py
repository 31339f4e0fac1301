"""What compiling one kernel produces: the IR stages, resource usage and (optionally) the
pass-by-pass trajectory. L3 attribution reads only this, so it never needs a GPU."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")


@dataclass
class CompiledKernel:
    name: str  # the @triton.jit function's name
    source_file: str  # the task file that defines it
    first_line: int  # line of the `def` in source_file; IR `loc`s point into this file
    target: str  # e.g. "sm_90"
    signature: dict[str, str]  # arg -> "*fp32" | "i32" | "constexpr" ...
    constexprs: dict[str, Any]  # arg -> value, as the launch passed them
    specialization: dict[str, list[str]]  # arg -> ["divisible_by_16"] | ["equal_to_1"] ... as the JIT would pick
    options: dict[str, Any]  # num_warps, num_stages, ...
    asm: dict[str, str]  # stage -> text, for the stages in STAGES that were produced
    registers: int | None = None
    spill_stores: int = 0  # bytes, from the ptxas log
    spill_loads: int = 0
    local_bytes: int = 0  # stack frame
    shared_bytes: int = 0
    ptxas_log: str = ""
    trajectory: list[tuple[str, str]] = field(default_factory=list)  # (pass name, IR before it), in order
    cache_key: str = ""
    grid: list[int] = field(default_factory=list)  # the launch grid for the case it was compiled from
    autotune: str | None = None  # an autotuned kernel's config and how it was chosen (the GPU's pick, or unknown)

    def to_dict(self, with_asm: bool = True) -> dict[str, Any]:
        d = asdict(self)
        if not with_asm:
            d.pop("asm")
            d.pop("trajectory")
        return d
