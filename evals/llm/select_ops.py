"""Pick the LLM campaign's operators before any run (issue 23): the 16 initial kernels furthest from their
roofline or from torch.compile on the H200 baseline (2026-11-29), plus 8 more drawn at random, by a fixed seed,
from the rest. Writes evals/llm/ops.txt; re-running it gives the same list."""

import json
import random
from pathlib import Path

HERE = Path(__file__).parent
BASELINE = HERE.parent / "device" / "results" / "suite_baseline-2026-11-29.json"
SEED, FURTHEST, RANDOM = 20261201, 16, 8


def gap(row: dict) -> float:
    """How far the initial kernel is from what it could be: the smaller of its roofline fraction and its
    speed relative to torch.compile (where that was timed)."""
    compiled = row.get("vs_compile")
    timed = compiled is not None and compiled == compiled  # NaN: torch.compile was not timed in the budget
    return min([row["roofline"]] + ([compiled] if timed else []))


def main() -> None:
    per_op = json.loads(BASELINE.read_text())["per_op"]
    rows = {v["op"]: v for v in per_op}
    ranked = sorted(rows, key=lambda op: gap(rows[op]))
    furthest = ranked[:FURTHEST]
    drawn = sorted(random.Random(SEED).sample(sorted(ranked[FURTHEST:]), RANDOM))
    lines = [f"# seed {SEED}: {FURTHEST} furthest from roofline/torch.compile, then {RANDOM} at random from the rest"]
    lines += [f"{op}\tfurthest\t{gap(rows[op]):.3f}" for op in furthest]
    lines += [f"{op}\trandom\t{gap(rows[op]):.3f}" for op in drawn]
    (HERE / "ops.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
