"""L3's IR readers on real Triton 3.6 outputs (saved under tests/fixtures/ir/) and on a live compile."""

import json
import os
import subprocess
import sys
from pathlib import Path

from kopt.diagnose import ir_trajectory
from kopt.diagnose.ir_loc import LocTable, ptx_lines
from kopt.diagnose.ir_ptx import ptx_facts, sass_counts, sass_summary
from kopt.diagnose.ir_ttgir import analyze_access, parse_module
from kopt.diagnose.occupancy import occupancy

IR = Path(__file__).parent / "fixtures" / "ir"


def test_loc_table_resolves_names_and_inlined_callsites_to_the_kernel_line():
    ttgir = (IR / "helper_kernel.ttgir").read_text()
    locs = LocTable(ttgir)
    # the load lives in _helper (line 46) but was inlined at the call in the kernel (line 52)
    load = locs.resolve("#loc23")
    assert (load.line, load.via[0]) == (52, 46)
    assert locs.resolve('"mask"(#loc6)').line == 51
    assert locs.resolve("#loc1") is None  # loc(unknown)
    assert locs.resolve('fused["a.py":3:1, "a.py":4:2]').line == 3


def test_ptx_loc_and_widths_follow_the_outermost_call_site():
    ptx = (IR / "helper_kernel.ptx").read_text()
    lines = {loc.line for loc, _ in ptx_lines(ptx) if loc}
    assert 52 in lines and 46 not in lines
    facts = ptx_facts(ptx)
    load = next(v for (f, ln, col), v in facts.items() if ln == 52)
    assert load.loads == [16, 16]  # two ld.global.v4.b32 per thread: 1024 f32 / 128 threads
    assert load.first["ld"].startswith("ld.global.v4.b32")


def test_ttgir_module_and_access_walk():
    m = parse_module((IR / "helper_kernel.ttgir").read_text())
    assert m.kernel == "helper_kernel"
    assert {a: m.args[a].divisibility for a in m.args} == {"x_ptr": 16, "out_ptr": 16, "n": 16}
    assert m.layouts["blocked"].size_per_thread == [4] and m.layouts["blocked"].order == [0]
    load = m.ops_named("tt.load")[0]
    assert load.shape == [1024] and load.elem == "f32" and load.loc.line == 52
    acc = analyze_access(m, load)
    assert acc.base_args == {"x_ptr": 16} and acc.contiguous_dims == {0}
    assert acc.has_mask and acc.mask_args == {"n": 16} and not acc.strided_dims


def test_sass_counts_see_vector_width_spills_and_wgmma():
    aligned = sass_summary(sass_counts((IR / "vector_add_aligned.sass").read_text()))
    assert aligned["ldg_128"] == 4 and aligned["ldg_narrow"] == 0 and aligned["stg_128"] == 2
    mm = sass_summary(sass_counts((IR / "matmul_runtime_strides.sass").read_text()))
    assert mm["stl"] == 45 and mm["ldl"] == 45 and mm["hgmma"] == 8
    assert mm["ldg_narrow"] == 128 and mm["ldg_128"] == 0 and mm["ldgsts"] == 0


def test_occupancy_on_sm90():
    big = occupancy(num_warps=4, registers=255, shared_bytes=32768)
    assert (big.blocks_per_sm, big.warps_per_sm, big.limiter) == (2, 8, "registers")
    smem = occupancy(num_warps=4, registers=40, shared_bytes=200_000)
    assert (smem.blocks_per_sm, smem.limiter) == (1, "shared_memory")
    full = occupancy(num_warps=4, registers=32, shared_bytes=0)
    assert full.warps_per_sm == 64 and full.occupancy == 1.0 and full.limiter == "warps"


def test_pass_flags_match_pass_note_names():
    assert ir_trajectory.pass_flag("TritonGPUCoalesce") == "tritongpu-coalesce"
    assert ir_trajectory.pass_flag("TritonGPURemoveLayoutConversions") == "tritongpu-remove-layout-conversions"
    assert ir_trajectory.pass_flag("TritonGPUAccelerateMatmul") == "tritongpu-accelerate-matmul"
    assert ir_trajectory.pass_flag("TritonGPUF32DotTC") == "tritongpu-F32DotTC"
    assert ir_trajectory.pass_flag("TritonNvidiaGPUTMALoweringPass") == "triton-nvidia-tma-lowering"
    assert ir_trajectory.pass_flag("SCCP (sccp)") == "sccp"


_DUMP_SCRIPT = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
os.environ.update(MLIR_ENABLE_DUMP="1", MLIR_DUMP_PATH=sys.argv[2], TRITON_ALWAYS_COMPILE="1")
import triton
from triton.compiler import ASTSource
from triton.backends.compiler import GPUTarget
from planted_l3 import transpose_kernel
D = [["tt.divisibility", 16]]
ck = triton.compile(ASTSource(fn=transpose_kernel, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "M": "i32",
    "N": "i32", "BM": "constexpr", "BN": "constexpr"}, constexprs={"BM": 64, "BN": 64},
    attrs={(0,): D, (1,): D, (2,): D, (3,): D}), target=GPUTarget("cuda", 90, 32))
print(json.dumps(ck.asm["ttgir"]))
"""


def test_trajectory_names_the_passes_that_made_and_removed_conversions(tmp_path):
    """A real pass-by-pass dump (own process: MLIR's dump stream is opened once per process)."""
    from kopt.harness.compile import parse_trajectory

    dump = tmp_path / "dump.mlir"
    out = subprocess.run([sys.executable, "-c", _DUMP_SCRIPT, str(IR), str(dump)], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "cache")})
    assert out.returncode == 0, out.stderr[-2000:]
    final = json.loads(out.stdout.strip().splitlines()[-1])
    events = ir_trajectory.changes(parse_trajectory(dump.read_text()), final)
    conv = [(e["flag"], e["before"], e["after"]) for e in events if e["metric"] == "convert_layout"]
    assert conv[0][0] == "convert-triton-to-tritongpu"
    assert any(flag == "tritongpu-coalesce" and after > before for flag, before, after in conv)
    removal = [c for c in conv if c[0] == "tritongpu-remove-layout-conversions"]
    assert removal and removal[-1][2] == 1  # the one conversion tl.trans needs survives
    spt = [e for e in events if e["metric"] == "sizePerThread" and e["flag"] == "tritongpu-coalesce"]
    assert spt and "1, 4" in spt[0]["after"]
