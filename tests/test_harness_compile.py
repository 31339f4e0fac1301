"""AOT compile on a CPU-only machine: the JIT's specialization, sm_90 code, trajectory, cache, errors."""

import json
import os
import time
from pathlib import Path

import pytest

from kopt.errors import CompileError
from kopt.harness.compile import compile_sandboxed, compile_task, parse_trajectory
from kopt.task import load_task

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "tasks"


def _compile(path, tmp_path, **kw):
    return compile_task(load_task(path), target=kw.pop("target", "sm_90"), cache_dir=tmp_path / "cache", **kw)


def test_aligned_elementwise_vectorizes_and_misaligned_does_not(tmp_path):
    (aligned,) = _compile(ROOT / "examples" / "vector_add.py", tmp_path)
    (offset,) = _compile(FIXTURES / "vector_add_offset.py", tmp_path)
    assert aligned.specialization["x_ptr"] == ["divisible_by_16"]
    assert "x_ptr" not in offset.specialization and "y_ptr" not in offset.specialization
    assert "ld.global.v4" in aligned.asm["ptx"] and "LDG.E.128" in aligned.asm["sass"]
    assert "ld.global.v4" not in offset.asm["ptx"] and "ld.global.b32" in offset.asm["ptx"]
    assert "sizePerThread = [4]" in aligned.asm["ttgir"] and "LDG.E.128" not in offset.asm["sass"]
    assert aligned.first_line == 9 and aligned.source_file.endswith("vector_add.py")
    assert aligned.grid == [(1 << 24) // 1024] and aligned.registers and aligned.spill_stores == 0


def test_matmul_uses_wgmma_on_sm90_and_mma_sync_on_sm80(tmp_path):
    (k90,) = _compile(ROOT / "examples" / "matmul.py", tmp_path)
    assert "ttng.warp_group_dot" in k90.asm["ttgir"]
    assert "wgmma.mma_async" in k90.asm["ptx"] and "HGMMA" in k90.asm["sass"]
    assert k90.shared_bytes > 0 and k90.registers > 0 and k90.options["num_stages"] == 3
    assert k90.specialization["stride_ak"] == ["equal_to_1"] and k90.constexprs["BLOCK_K"] == 32
    (k80,) = _compile(ROOT / "examples" / "matmul.py", tmp_path, target="sm_80", stages=["ptx"])
    assert list(k80.asm) == ["ptx"] and "mma.sync" in k80.asm["ptx"] and "wgmma" not in k80.asm["ptx"]


def test_trajectory_names_the_passes_in_order(tmp_path):
    (kernel,) = _compile(ROOT / "examples" / "matmul.py", tmp_path, trajectory=True)
    names = [name for name, _ in kernel.trajectory]
    order = ["Inliner", "ConvertTritonToTritonGPU", "TritonGPUAccelerateMatmul", "TritonGPUPipeline",
             "ConvertTritonGPUToLLVM"]
    positions = [names.index(p) for p in order]
    assert positions == sorted(positions) and len(names) > 40
    before_ttg = dict(kernel.trajectory)["ConvertTritonToTritonGPU"]
    assert "tt.dot" in before_ttg and "#ttg.blocked" not in before_ttg
    assert "ttng.warp_group_dot" in kernel.trajectory[names.index("ConvertTritonGPUToLLVM")][1]
    # Triton opens the dump stream once per process: a second trajectory must still come back whole
    (again,) = _compile(ROOT / "examples" / "softmax.py", tmp_path, trajectory=True)
    assert again.trajectory[0][0] == "Inliner" and "softmax_kernel" in again.trajectory[0][1]
    assert not any("matmul_kernel" in ir for _, ir in again.trajectory)
    # the dump's variables are gone after the compile: a sandboxed compile started now can write its own dump
    assert "MLIR_DUMP_PATH" not in os.environ and "MLIR_ENABLE_DUMP" not in os.environ
    fresh = tmp_path / "fresh.py"  # a kernel no cache holds
    fresh.write_text((ROOT / "examples" / "vector_add.py").read_text().replace(
        "    tl.store(", f"    # {tmp_path.name}\n    tl.store(", 1))
    (sandboxed,) = compile_sandboxed(fresh, trajectory=True)
    assert sandboxed.trajectory and sandboxed.trajectory[0][0] == "Inliner"


def test_parse_trajectory_splits_dump_blocks():
    text = ("// -----// IR Dump Before Inliner (inline) ('builtin.module' operation) //----- //\nmodule A\n"
            "// -----// IR Dump Before CSE (cse) ('builtin.module' operation) //----- //\nmodule B\n")
    assert parse_trajectory(text) == [("Inliner", "module A"), ("CSE", "module B")]


def test_results_are_cached_on_disk(tmp_path):
    path = ROOT / "examples" / "softmax.py"
    (first,) = _compile(path, tmp_path)
    files = list((tmp_path / "cache").glob("*.json"))
    assert len(files) == 1 and first.cache_key in files[0].name
    start = time.perf_counter()
    (again,) = _compile(path, tmp_path)
    assert time.perf_counter() - start < 0.5
    assert again.cache_key == first.cache_key and again.asm == first.asm and again.registers == first.registers
    (other_case,) = _compile(path, tmp_path, case=3)  # 128 columns: another BLOCK_SIZE, another entry
    assert other_case.cache_key != first.cache_key and other_case.constexprs["BLOCK_SIZE"] == 128


def test_autotuned_kernel_compiles_its_first_config(tmp_path):
    (kernel,) = _compile(FIXTURES / "autotuned_scale.py", tmp_path)
    assert kernel.constexprs["BLOCK"] == 512 and kernel.options["num_warps"] == 4 and kernel.grid == [8]


def test_compile_error_names_the_kernel_line(tmp_path):
    src = (ROOT / "examples" / "vector_add.py").read_text().replace("x + y, mask=mask)", "x + undefined_name, mask=mask)")
    path = tmp_path / "bad_kernel.py"
    path.write_text(src)
    with pytest.raises(CompileError) as info:
        _compile(path, tmp_path)
    message = str(info.value)
    assert message.startswith(f"{path}:15:") and "add_kernel" in message and "undefined_name" in message


def test_compile_sandboxed_runs_candidate_code_in_a_child(tmp_path, monkeypatch):
    from kopt.harness.compile import compile_sandboxed

    monkeypatch.chdir(tmp_path)
    (kernel,) = compile_sandboxed(ROOT / "examples" / "vector_add.py", FIXTURES / "off_by_one.py", stages=["ptx"])
    assert kernel.name == "add_kernel" and kernel.constexprs["BLOCK_SIZE"] == 256 and list(kernel.asm) == ["ptx"]
    assert list((tmp_path / ".kopt" / "cache" / "compile").glob("*.json"))
    bad = tmp_path / "bad.py"
    bad.write_text((ROOT / "examples" / "vector_add.py").read_text().replace("x + y, mask", "x + nope, mask"))
    with pytest.raises(CompileError, match=r"^/.*bad.py:15: kernel add_kernel failed to compile: CompilationError"):
        compile_sandboxed(ROOT / "examples" / "vector_add.py", bad)


def test_registers_and_spills_come_from_tritons_own_ptxas_run(tmp_path, monkeypatch):
    """A spilling kernel: the usage read from the log of Triton's own `ptxas -v` is what a second ptxas run gave;
    when Triton's cache answers (ptxas does not run), kopt runs ptxas itself and gets the same numbers."""
    from kopt.harness import compile as harness

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    own_runs = []
    run_ptxas = harness._ptxas_usage
    monkeypatch.setattr(harness, "_ptxas_usage", lambda *args: own_runs.append(args) or run_ptxas(*args))
    task = load_task(ROOT / "evals" / "diagnosis" / "attention_spill.py")
    (logged,) = compile_task(task, target="sm_90", cache_dir=tmp_path / "first", sass=False)
    assert own_runs == []  # Triton compiled: its log was read
    assert "STL" in logged.asm["sass"]  # without `sass`, still disassembled: ptxas reports local memory
    (cached,) = compile_task(task, target="sm_90", cache_dir=tmp_path / "second")  # kopt's cache does not answer
    assert len(own_runs) == 1  # Triton's cache answered: no log, so kopt ran ptxas
    usage = ("registers", "spill_stores", "spill_loads", "local_bytes")
    assert [getattr(logged, k) for k in usage] == [getattr(cached, k) for k in usage]
    assert logged.spill_stores > 0 and logged.local_bytes > 0 and logged.registers == 255
    assert logged.ptxas_log.startswith("ptxas info") and "Used 255 registers" in logged.ptxas_log


def test_what_a_kernel_prints_at_compile_time_still_shows(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))  # Triton's cache would skip the print
    src = (ROOT / "examples" / "vector_add.py").read_text().replace(
        "    mask = offsets < n_elements\n", "    mask = offsets < n_elements\n    tl.static_print('ptxas-like words', BLOCK_SIZE)\n")
    path = tmp_path / "printing.py"
    path.write_text(src)
    (kernel,) = _compile(path, tmp_path)
    assert "ptxas-like words 1024" in capsys.readouterr().out
    assert kernel.registers and kernel.ptxas_log.startswith("ptxas info") and "ptxas-like" not in kernel.ptxas_log


def test_without_sass_a_kernel_without_local_memory_is_not_disassembled(tmp_path):
    """The cache entry without SASS serves the next lean compile; one that wants SASS compiles again, and the entry
    then holds both (the trajectory of the first and the SASS of the second)."""
    path = ROOT / "examples" / "vector_add.py"
    (lean,) = _compile(path, tmp_path, sass=False, trajectory=True)
    assert "sass" not in lean.asm and lean.local_bytes == 0 and lean.registers and lean.trajectory
    (again,) = _compile(path, tmp_path, sass=False)
    assert again.asm == lean.asm  # from the cache
    (full,) = _compile(path, tmp_path)
    assert "LDG.E.128" in full.asm["sass"] and set(full.asm) == {*lean.asm, "sass"}
    (cached,) = _compile(path, tmp_path, trajectory=True)
    assert cached.asm == full.asm and cached.trajectory == lean.trajectory
    assert len(list((tmp_path / "cache").glob("*.json"))) == 1
    (ptx_only,) = _compile(ROOT / "examples" / "softmax.py", tmp_path, stages=["ptx"])  # no SASS asked for: none made
    entry = json.loads((tmp_path / "cache" / f"{ptx_only.cache_key}.json").read_text())
    assert list(ptx_only.asm) == ["ptx"] and "ptx" in entry["asm"] and "sass" not in entry["asm"]


def test_launches_captured_on_fake_tensors_are_the_real_ones():
    """Without a GPU the entry runs on fake tensors (no storage): the same launches, specialization and grids as
    on real inputs; strided_scale's view starts 3 floats in, so its pointer is not divisible by 16 either way."""
    from kopt.harness.compile import _launch_key, _on_fake_tensors, _on_real_tensors, gpu_target

    def seen(launches):
        return [(_launch_key(launch), launch.grid, launch.autotune) for launch in launches]

    for path in (ROOT / "examples" / "strided_scale.py", ROOT / "examples" / "matmul.py", FIXTURES / "autotuned_scale.py"):
        task = load_task(path)
        fake = _on_fake_tensors(task, task.cases[0], gpu_target("sm_90"))
        assert fake and seen(fake) == seen(_on_real_tensors(task, task.cases[0], gpu_target("sm_90")))
    (strided,) = _on_fake_tensors(load_task(ROOT / "examples" / "strided_scale.py"), {"rows": 64, "cols": 256, "pad": 3},
                                  gpu_target("sm_90"))
    assert strided.attrs[(0,)] == [] and strided.attrs[(1,)] == [["tt.divisibility", 16]] and strided.grid == (64, 1)


def test_a_task_that_reads_its_data_is_captured_on_real_tensors(tmp_path):
    """An entry that reads a kernel's output (.item()) between two launches stops there on fake tensors: it is
    captured on real CPU tensors, with both launches."""
    src = (ROOT / "examples" / "vector_add.py").read_text()
    launch = "    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)\n"
    assert launch in src, "the example changed: update this test"
    path = tmp_path / "reads_data.py"
    path.write_text(src.replace(launch, launch + "    if out[0].item() == 0.0:\n"
                                "        add_kernel[grid](x, y, out, n, BLOCK_SIZE=512)\n"))
    from kopt.harness.compile import _on_fake_tensors, capture_launches, gpu_target

    task = load_task(path)
    assert _on_fake_tensors(task, task.cases[0], gpu_target("sm_90")) is None
    launches = capture_launches(task, task.cases[0], gpu_target("sm_90"))
    assert [dict(launch.constexprs).popitem()[1] for launch in launches] == [1024, 512]


def test_a_cold_process_captures_on_real_tensors():
    """FakeTensorMode's first use imports torch._dynamo (~1 s): a process that has not loaded it (a cold sandbox,
    `kopt compile`) captures on real inputs, as before; the compile worker loads it once at start."""
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; from kopt.harness.compile import capture_launches, gpu_target; "
            "from kopt.task import load_task; task = load_task(Path(sys.argv[1])); "
            "capture_launches(task, task.cases[0], gpu_target('sm_90')); print('torch._dynamo' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, str(ROOT / "examples" / "vector_add.py")], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]
