"""Per-round harness cost on the GPU: wall seconds of what the optimize loop runs for one candidate (validate,
then bench) on a few suite operators, for the kopt found on PYTHONPATH. Run it twice in one call (the current checkout, then an older tree put first on
PYTHONPATH) to compare the hardened validation with what it replaced (issue 18: within 20 %).

  python3 evals/device/validation_overhead.py --label new --ops softmax,matmul_fp16,col_sum --out $OUT/x.json
"""

import argparse
import json
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SUITE = Path(__file__).resolve().parents[1] / "suite"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", required=True)
    ap.add_argument("--ops", default="softmax,matmul_fp16,col_sum,layernorm")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    import kopt
    import kopt.optimize
    from kopt.harness.validate import validate

    rows = []
    for op in args.ops.split(","):
        task = SUITE / f"{op}.py"
        for rep in range(args.repeats):  # the first also pays Triton's compile; later ones hit its cache
            t0 = time.perf_counter()
            if hasattr(kopt.optimize, "bench_reference_or_none"):  # the loop's round since the hardening
                with ThreadPoolExecutor(max_workers=1) as pool:
                    seed = int.from_bytes(os.urandom(4), "little")
                    ahead = pool.submit(kopt.optimize.bench_reference_or_none, task, seed)
                    v = validate(task)
                    t1 = time.perf_counter()
                    b = kopt.optimize.bench_times(task, None, ahead.result(), seed)
            else:  # the loop's round before it: validate, then bench (which ran the task in one process)
                v = validate(task)
                t1 = time.perf_counter()
                b = kopt.optimize.bench_times(task, None)
            t2 = time.perf_counter()
            b = b if isinstance(b, dict) else vars(b)  # bench_times returns a Timing since the architecture step
            rows.append({"op": op, "rep": rep, "validate_s": round(t1 - t0, 2), "bench_s": round(t2 - t1, 2),
                         "ok": bool(v.ok and b["ok"]), "reason": v.reason or b.get("message")})
            print(args.label, rows[-1], flush=True)
    warm = [r["validate_s"] + r["bench_s"] for r in rows if r["rep"] > 0]
    summary = {"label": args.label, "kopt": str(Path(kopt.__file__).parent), "rows": rows,
               "warm_round_s_median": statistics.median(warm) if warm else None}
    args.out.write_text(json.dumps(summary, indent=1))
    print(args.label, "warm validate+bench median s:", summary["warm_round_s_median"])


if __name__ == "__main__":
    main()
