"""Capture the Nsight Compute pages kopt's L2 reads, for chosen task files, as parser fixtures and for checking an
L2 rule against what the profiler really reports (e.g. a counter the fixed kernel shows just as much).

Run on the GPU machine after install.sh:  python evals/device/l2_capture.py OUT_DIR TASK.py [TASK.py ...]
Writes OUT_DIR/<stem>_raw.csv, <stem>_details.csv and summary.json (kopt's L2 findings per task).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from kopt.diagnose import l2, ncu


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    summary = {}
    for task in map(Path, sys.argv[2:]):
        result = ncu.profile_task(task, 0, timeout=240)
        (out / f"{task.stem}_raw.csv").write_text(result.raw_csv)
        (out / f"{task.stem}_details.csv").write_text(result.details_csv)
        summary[task.stem] = {"available": result.available, "reason": result.reason,
                              "findings": [[f.id, f.confidence, f.message] for f in l2.result_findings(result)]}
        print(task.stem, result.available, [f[:2] for f in summary[task.stem]["findings"]], flush=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
