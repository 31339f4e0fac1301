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

    def sandboxed_report(self, path: Path, target: str | None, sass: bool = True) -> Any:
        """The L3 report of a task's kernels, compiled without running the task's code in kopt's own process
        (`sass` False: machine code disassembled only where it can make a finding; kopt.harness.compile)."""
        return self.lower_and_attribute(path, target, None)[1]

    def check_target(self, target: str) -> None:
        """Raise when a target string of this family is malformed: a typo is an error even when nothing compiles."""

    def check_runnable(self, what: str, target: str | None) -> None:
        """Raise, in one line, when `kopt validate`/`bench` (`what`) cannot run kernels for this target here."""

    # -- `kopt compile`: what it lowers and shows -------------------------------------------------------------
    passes_label = "passes"  # what the pass trajectory's steps are called
    kernel_columns: tuple[str, ...] = ()  # table columns after kernel, line, target, grid

    def ir_stages(self) -> tuple[str, ...]:
        """The IR stages `kopt compile --stage` can show."""
        raise NotImplementedError

    def check_stage(self, stage: str | None) -> None:
        """Raise when `stage` is not one of this target's IR stages."""

    def compile(self, path: Path, target: str | None, case: int, trajectory: bool, stages: list[str]) -> list:
        """The task's kernels lowered for `target`, with the IR of `stages` (CompiledKernel list)."""
        raise NotImplementedError

    def kernel_cells(self, kernel: Any) -> tuple[list[str], dict]:
        """A compiled kernel's cells under `kernel_columns`, and the keys its JSON adds to `to_dict`."""
        raise NotImplementedError


class Nvidia(Target):
    family = "nvidia"
    compiler = "triton"
    l3_reason = "lowered code (TTGIR, PTX, SASS, ptxas, pass trajectory) mapped to source lines"
    kernel_columns = ("warps/stages", "regs", "spill st/ld B", "shared B", "specialized")

    def lower_and_attribute(self, path: Path, target: str | None, case: int | None) -> tuple[list, Any]:
        from kopt.diagnose.l3 import attribute
        from kopt.harness.compile import compile_task
        from kopt.task import load_task

        task = load_task(path)
        compiled = compile_task(task, case=case, target=target, trajectory=True)
        return compiled, attribute(compiled, task.path)

    def sandboxed_report(self, path: Path, target: str | None, sass: bool = True) -> Any:
        """Compiled in the sandbox (the warm compile worker's when it runs: ~0.3 s instead of ~3 s)."""
        from kopt.diagnose.l3 import attribute
        from kopt.harness.compile import compile_sandboxed

        return attribute(compile_sandboxed(path, target=target, trajectory=True, sass=sass), str(path))

    def check_target(self, target: str) -> None:
        from kopt.harness.compile import gpu_target

        gpu_target(target)

    def check_runnable(self, what: str, target: str | None) -> None:
        if target:
            self.check_target(target)  # a mistyped target is an error here too, not silently the default

    def ir_stages(self) -> tuple[str, ...]:
        from kopt.harness.compiled import STAGES

        return tuple(STAGES)

    def check_stage(self, stage: str | None) -> None:
        if stage == "ttadapter":
            raise KoptError("--stage ttadapter is an Ascend stage: add --target ascend")

    def compile(self, path: Path, target: str | None, case: int, trajectory: bool, stages: list[str]) -> list:
        from kopt.harness.compile import compile_task
        from kopt.task import load_task

        return compile_task(load_task(path), case=case, target=target, trajectory=trajectory, stages=stages)

    def kernel_cells(self, kernel: Any) -> tuple[list[str], dict]:
        k = kernel
        spec = ", ".join(f"{a}:{'/'.join(v)}" for a, v in k.specialization.items()) or "-"
        regs = "-" if k.registers is None else str(k.registers)
        return [f"{k.options.get('num_warps')}/{k.options.get('num_stages')}", regs,
                f"{k.spill_stores}/{k.spill_loads}", str(k.shared_bytes), spec], {}


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

    def check_runnable(self, what: str, target: str | None) -> None:
        missing = self.untestable()
        if missing:
            raise KoptError(f"cannot {what} on {target}: {missing}",
                            hint=f"`kopt compile --target {target}` and `kopt diagnose --target {target}` work without an NPU")
        raise KoptError(f"{what} on {target}: an NPU, CANN and torch_npu are present, but kopt's harness does not run "
                        "kernels through torch_npu yet", hint=f"use `kopt diagnose --target {target}` for compiler evidence")

    # `kopt compile --target ascend`: TTIR and ttadapter through the triton-ascend toolchain, with how each
    # load/store was lowered (block copy or scalar loop) and the on-chip buffer footprint.
    passes_label = "adapter passes"
    kernel_columns = ("cores", "block copies", "scalar loops", "UB buffers", "binary")

    def ir_stages(self) -> tuple[str, ...]:
        from kopt.harness.ascend import ASCEND_STAGES

        return tuple(ASCEND_STAGES)

    def check_stage(self, stage: str | None) -> None:
        stages = self.ir_stages()
        if stage not in (None, "all", *stages):
            raise KoptError(f"--stage {stage} is not an Ascend stage; Ascend stages: {', '.join(stages)}")

    def compile(self, path: Path, target: str | None, case: int, trajectory: bool, stages: list[str]) -> list:
        from kopt.harness.ascend import compile_ascend

        if not Path(path).is_file():
            raise KoptError(f"{path}: no such file")
        return compile_ascend(path, target=target, case=case, trajectory=trajectory)

    def kernel_cells(self, kernel: Any) -> tuple[list[str], dict]:
        from kopt.diagnose.l3_ascend import UB_BYTES, ascend_facts

        f = ascend_facts(kernel)
        loops = [a for a in f.accesses if a.lowering == "scalar_loop"]
        return [f.mix_mode, str(len(f.accesses) - len(loops)),
                ", ".join(f"{a.op}@{a.line} ({a.cause})" for a in loops) or "0",
                f"{f.buffer_bytes // 1024} of {UB_BYTES // 1024} KB",
                "yes" if "npubin" in kernel.asm else "no (no CANN)"], {"ascend": f.to_dict()}


TARGETS: dict[str, Target] = {"nvidia": Nvidia(), "ascend": Ascend()}


def target_for(target: str | None) -> Target:
    """The Target of a target string (sm_90, nvidia:sm_80, ascend:Ascend910B3, None for the default)."""
    return TARGETS[target_family(target)]
