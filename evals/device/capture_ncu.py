"""Capture real Nsight Compute outputs on the GPU machine for kopt's L2 parser tests.

Runs ncu exactly as kopt.diagnose.ncu does (one report, raw + details pages as CSV) on five
small planted kernels (coalesced copy, strided copy, a spilling kernel, a tiny grid, a matmul)
and on a task through the harness child (examples/vector_add.py), then writes under $OUT:
  planted_raw.csv, planted_details.csv, vector_add_raw.csv, vector_add_details.csv,
  ncu_version.txt, summary.json (what kopt parsed, and the L2 findings).
Run from the repository root:  OUT=/tmp/out python evals/device/capture_ncu.py
The lead copies the csv files to tests/fixtures/ncu/.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kopt.diagnose import l2, ncu  # noqa: E402

PLANTED = r'''
import torch, triton, triton.language as tl

@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)

@triton.jit
def strided_copy_kernel(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs * stride, mask=mask), mask=mask)

@triton.jit
def spill_kernel(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * BN + cols[None, :])
    norm = tl.sqrt(tl.sum(x * x, axis=1))
    y = tl.exp(x / norm[:, None]) * tl.cumsum(x, axis=1)
    tl.store(out_ptr + rows[:, None] * BN + cols[None, :], y)

@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sbk, scm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * sbk + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :], acc.to(tl.float16))

def runs():
    n = 1 << 24
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    xs = torch.randn(n * 8, device="cuda")
    big = torch.randn(4096, 128, device="cuda")
    big_out = torch.empty_like(big)
    a = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    b = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    c = torch.empty(2048, 2048, device="cuda", dtype=torch.float16)
    yield "copy_kernel", lambda: copy_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    yield "strided_copy_kernel", lambda: strided_copy_kernel[(triton.cdiv(n, 1024),)](xs, out, n, 8, BLOCK=1024)
    yield "spill_kernel", lambda: spill_kernel[(4096 // 64,)](big, big_out, BM=64, BN=128, num_warps=1)
    yield "tiny_grid_copy", lambda: copy_kernel[(4,)](x, out, 4096, BLOCK=1024)
    yield "matmul_kernel", lambda: matmul_kernel[(2048 // 128, 2048 // 128)](a, b, c, 2048, 2048, 2048, 2048, 2048,
                                                                              2048, BM=128, BN=128, BK=64, num_warps=4)

if __name__ == "__main__":
    jobs = list(runs())
    for name, job in jobs:  # warm-up: compile outside the profiled range
        try:
            job()
        except Exception as exc:
            print(f"warm-up of {name} failed: {exc}")
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("kopt")
    for name, job in jobs:
        try:
            job()
            torch.cuda.synchronize()
        except Exception as exc:
            print(f"{name} failed: {exc}")
    torch.cuda.nvtx.range_pop()
'''


def summarize(result: ncu.NcuResult) -> dict:
    out = {"available": result.available, "reason": result.reason, "version": result.version,
           "command": result.command, "kernels": []}
    for k in result.kernels:
        stall = l2.dominant_stall(k.metrics)
        out["kernels"].append({
            "id": k.id, "name": k.name, "grid": k.grid, "block": k.block, "n_metrics": len(k.metrics),
            "quantities": {q: l2._q(k.metrics, q) for q in l2.NAMES},
            "dominant_stall": stall,
            "rules": [{"name": r.name, "type": r.type, "speedup": r.speedup, "text": r.description[:200]} for r in k.rules],
            "findings": [f"{f.id} ({f.confidence}): {f.message}" for f in l2.profile_findings(k.metrics, k.rules)],
        })
    return out


def main() -> None:
    out_dir = Path(os.environ.get("OUT", "ncu_capture"))
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = ncu.find_ncu()
    version = ncu.ncu_version(exe) if exe else "ncu not found"
    (out_dir / "ncu_version.txt").write_text(f"{exe}\n{version}\n")
    print("ncu:", exe, version, flush=True)
    summary: dict = {"ncu": exe, "version": version}
    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "planted_ncu.py"
        program.write_text(PLANTED)
        runs = {
            "planted": lambda: ncu.run_ncu([sys.executable, str(program)], timeout=420, ncu=exe),
            "vector_add": lambda: ncu.profile_task(ROOT / "examples" / "vector_add.py", 0, timeout=150, ncu=exe),
        }
        for label, run in runs.items():
            try:
                result = run()
            except Exception:
                summary[label] = {"crash": traceback.format_exc()[-2000:]}
                print(f"{label}: crashed", flush=True)
                continue
            if result.raw_csv.strip():  # an empty page would only fail the parser tests
                (out_dir / f"{label}_raw.csv").write_text(result.raw_csv)
            if result.details_csv.strip():
                (out_dir / f"{label}_details.csv").write_text(result.details_csv)
            summary[label] = summarize(result)
            print(f"{label}: available={result.available} kernels={[k.name[:40] for k in result.kernels]} "
                  f"{result.reason}", flush=True)
    try:
        timeout_case = ncu.profile_task(ROOT / "examples" / "vector_add.py", 0, timeout=2, ncu=exe)
        summary["timeout_case"] = {"available": timeout_case.available, "reason": timeout_case.reason}
    except Exception:
        summary["timeout_case"] = {"crash": traceback.format_exc()[-2000:]}
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    print("\nSUMMARY")
    for label in ("planted", "vector_add"):
        s = summary.get(label, {})
        for k in s.get("kernels", []):
            print(f"  {label}/{k['name'][:30]}: {k['n_metrics']} metrics, {len(k['rules'])} rules, "
                  f"stall={k['dominant_stall'] and k['dominant_stall'][0]}, findings={[f.split(' ')[0] for f in k['findings']]}")
    print("  timeout case:", summary["timeout_case"])


if __name__ == "__main__":
    main()
