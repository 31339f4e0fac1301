"""What every recipe takes and returns: the Context it may look at, the Proposal (variants) it makes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Variant:
    label: str  # e.g. "BLOCK_SIZE=2048 num_warps=8"
    source: str
    config: dict[str, int] = field(default_factory=dict)


@dataclass
class Proposal:
    recipe: str
    summary: str  # what the candidate changes, one line
    variants: list[Variant]  # variants[0] is the pick when nothing can be timed


@dataclass
class Context:
    """What a recipe may look at besides the source: the pattern params, the finding and the task."""

    params: dict[str, Any] = field(default_factory=dict)
    kernel_lines: list[int] = field(default_factory=list)
    tolerance: Callable[[str], tuple[float, float]] | None = None  # Task.tolerance
    cases: list[dict] = field(default_factory=list)  # CASES + HELD_OUT
