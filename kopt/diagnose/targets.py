"""Compiler families as classes, in the manner of Triton's own backends: what differs between NVIDIA Triton and
triton-ascend (how a kernel is lowered and attributed, which catalog patterns apply, what the levels can use,
which compiler source L4 reads) lives in one Target subclass per family instead of `family == "ascend"` branches.

Add a family: subclass Target, fill in its differences, and add it to TARGETS under the name
kopt.toolchain.target_family gives it (ARCHITECTURE.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kopt.errors import KoptError
from kopt.toolchain import target_family


class Target:
    """One compiler family. The base class is the NVIDIA-shaped default; subclasses override what differs."""

    family = ""
    compiler = ""  # the compiler corpus L4 reads (kopt/corpora/<compiler>.toml)
    l3_reason = ""  # what L3 reads on this target, for the diagnosis' level table
    captures_launches = True  # L1 records every case's launches (grid, 16-divisibility) on fake tensors

    def covers(self, pattern: Any) -> bool:
        """Whether a catalog pattern speaks about this target (Ascend patterns say `ascend` in applies_to)."""
        return "ascend" not in pattern.applies_to

    def untestable(self) -> str | None:
        """Why kernels cannot be run and measured here (None when they can, or when L2 decides for itself)."""
        return None

    def profiler_problem(self, untestable: str | None) -> str | None:
        """Why L2 cannot profile on this target (None: the GPU check decides)."""
        return None

    def toolchain_problem(self) -> str | None:
        """Why this target's compiler cannot run here (None when it can)."""
        return None

    def lower_and_attribute(self, path: Path, target: str | None, case: int | None) -> tuple[list, Any]:
        """Compile through the toolchain and attribute the lowered code to source lines: (kernels, L3Report).
        Raises CompileError when the kernel does not compile."""
        raise NotImplementedError


class Nvidia(Target):
    family = "nvidia"
    compiler = "triton"
    l3_reason = "lowered code (TTGIR, PTX, SASS, ptxas, pass trajectory) mapped to source lines"

    def lower_and_attribute(self, path: Path, target: str | None, case: int | None) -> tuple[list, Any]:
        from kopt.diagnose.l3 import attribute
        from kopt.harness.compile import compile_task
        from kopt.task import load_task

        task = load_task(path)
        compiled = compile_task(task, case=case, target=target, trajectory=True)
        return compiled, attribute(compiled, task.path)


class Ascend(Target):
    family = "ascend"
    compiler = "triton-ascend"
    l3_reason = "adapter IR (TTIR, ttadapter, adapter pass trajectory) mapped to source lines"
    captures_launches = False

    def covers(self, pattern: Any) -> bool:
        return "ascend" in pattern.applies_to

    def untestable(self) -> str | None:
        from kopt.harness.ascend import npu_missing

        return npu_missing()

    def profiler_problem(self, untestable: str | None) -> str | None:
        return (f"Ascend profiling needs an NPU: {untestable}" if untestable
                else "Ascend profiling (msprof) is not wired into kopt yet; L3/L4 read the compiler")

    def toolchain_problem(self) -> str | None:
        from kopt.toolchain import toolchain_python

        try:
            toolchain_python("ascend")
        except KoptError as exc:
            return str(exc)
        return None

    def lower_and_attribute(self, path: Path, target: str | None, case: int | None) -> tuple[list, Any]:
        from kopt.diagnose.l3_ascend import attribute_ascend
        from kopt.harness.ascend import compile_ascend

        compiled = compile_ascend(path, target=target, case=case, trajectory=True)
        return compiled, attribute_ascend(compiled, path)


TARGETS: dict[str, Target] = {"nvidia": Nvidia(), "ascend": Ascend()}


def target_for(target: str | None) -> Target:
    """The Target of a target string (sm_90, nvidia:sm_80, ascend:Ascend910B3, None for the default)."""
    return TARGETS[target_family(target)]
