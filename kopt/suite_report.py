"""Campaign accounting: turn the rounds store's runs into the paper's figures, and write them as
Markdown tables plus SVG plots.

Per operator the speedup is the geomean over its cases of initial time / best time (the best
validated, timed round; 1.0 when no round improved). Over operators: geomean, median, how many
passed 2x and 5x, the median best-round index, how many best rounds and trajectories reached each
evidence level, final vs torch eager and torch.compile, fraction of roofline, rounds and wall time,
the candidates rejected and why, and LLM replies per win. Two arms of an experiment over the same operators
(two campaigns, or the two grounding arms of one: LLM rounds with and without kopt's diagnosis) are compared
operator by operator, with a seeded bootstrap interval on the geomean ratio.
Runs whose kernels could not be timed (no GPU) are counted, never given a made-up speedup.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from html import escape
from typing import Any, Iterable

from kopt.optimize import POLICIES, geomean
from kopt.vocabulary import KEPT, LEVELS, Outcome


@dataclass
class OperatorResult:
    op: str
    family: str
    policy: str
    run_id: str
    status: str
    cases: int
    timed: bool
    speedup: float | None  # geomean over cases of initial / best; None when untimed
    best_round: int | None  # n of the best round; 0 when no round beat the initial kernel
    best_level: str | None  # the evidence level the best round reached
    deepest_level: str | None  # the deepest level any round of the trajectory reached
    rounds: int
    wall_s: float
    rounds_to_90: int | None  # first round whose best-so-far reached 90% of the final gain
    seconds_to_best: float | None  # wall seconds of the rounds up to and including the best one (None: no win)
    initial_vs_eager: float | None  # > 1: the initial kernel beats torch eager
    vs_eager: float | None  # final kernel vs torch eager (geomean over cases)
    vs_compile: float | None  # final kernel vs torch.compile
    roofline: float | None  # median over cases of the final kernel's fraction of its roofline
    outcomes: dict[str, int] = field(default_factory=dict)  # rounds per outcome (every candidate tried)
    llm_replies: int = 0  # rounds proposed by an LLM: one reply consumed each
    win_levels: list[str] = field(default_factory=list)  # evidence level of each improved round ("none": no diagnosis)
    grounding: str | None = None  # the run's --grounding (full | none), when it recorded one

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ratio(num: list | None, den: list | None) -> float | None:
    """Geomean over cases of num/den; None unless every case has both."""
    if not num or not den or len(num) != len(den) or any(v is None or v <= 0 for v in list(num) + list(den)):
        return None
    return geomean(a / b for a, b in zip(num, den))


def _median(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def operator_result(run: Any, rounds: list[Any], family: str = "", policy: str | None = None,
                    references: dict[str, Any] | None = None) -> OperatorResult:
    """The accounting of one run (a store Run and its Rounds); `references`: torch's times when the run holds none."""
    base = list(run.baseline or [])
    timed = bool(base) and all(t is not None and t > 0 for t in base)
    best, best_speedup, trail = None, 1.0, []
    for rnd in rounds:
        s = _ratio(base, rnd.case_times) if timed and rnd.outcome == Outcome.IMPROVED else None
        if s is not None and s > best_speedup:
            best, best_speedup = rnd, s
        trail.append((rnd.n, best_speedup))
    final_times = list(best.case_times) if best else base
    refs = (run.options or {}).get("references") or references or {}
    eager, compiled = refs.get("eager_ms"), refs.get("compile_ms")
    initial_roof = (run.timing or {}).get("roofline") or []
    roofline = None
    best_roof = list(getattr(best, "roofline", None) or [])
    if best and best_roof and all(f is not None for f in best_roof):
        roofline = _median(best_roof)
    elif timed and len(initial_roof) == len(base) and all(f is not None for f in initial_roof):
        roofline = _median(f * b / t for f, b, t in zip(initial_roof, base, final_times))
    levels = [r.level_reached for r in rounds if r.level_reached in LEVELS]
    rounds_to_90 = None
    if timed:
        goal = 1 + 0.9 * (best_speedup - 1)
        rounds_to_90 = next((n for n, s in trail if s >= goal - 1e-12), 0) if best else 0
    return OperatorResult(
        op=_op_name(run), family=family, policy=policy or (run.options or {}).get("policy", "progressive"),
        run_id=run.run_id, status=run.status, cases=len(base), timed=timed,
        speedup=best_speedup if timed else None, best_round=(best.n if best else 0) if timed else None,
        best_level=best.level_reached if best else None,
        deepest_level=max(levels, key=LEVELS.index) if levels else None,
        rounds=len(rounds), wall_s=round(sum(r.seconds for r in rounds), 1), rounds_to_90=rounds_to_90,
        seconds_to_best=round(sum(r.seconds for r in rounds if r.n <= best.n), 1) if best else None,
        initial_vs_eager=_ratio(eager, base) if timed else None,
        vs_eager=_ratio(eager, final_times) if timed else None,
        vs_compile=_ratio(compiled, final_times) if timed else None,
        roofline=roofline,
        outcomes=dict(Counter(map(round_outcome, rounds))),
        llm_replies=sum(r.proposer.startswith("llm") for r in rounds),
        win_levels=[r.level_reached or "none" for r in rounds if r.outcome == Outcome.IMPROVED],
        grounding=(run.options or {}).get("grounding"),
    )


def round_outcome(rnd: Any) -> str:
    """The round's outcome, with the guard and a cheat told apart: optimize records a `cheat` caught by validation
    or the bench as `rejected` (kopt.optimize.VALIDATION_TO_OUTCOME), and only the guard's say 'candidate rejected'."""
    if rnd.outcome == "rejected" and not (rnd.message or "").startswith("candidate rejected"):
        return "cheat"
    return rnd.outcome


def _op_name(run: Any) -> str:
    return (run.options or {}).get("op") or run.task_path.rsplit("/", 1)[-1].removesuffix(".py")


def summarize(results: list[OperatorResult]) -> dict[str, Any]:
    """The campaign's figures over operators (only timed ones carry speedups)."""
    timed = [r for r in results if r.timed]
    speedups = [r.speedup for r in timed]
    improved = [r for r in timed if r.best_round]
    return {
        "operators": len(results),
        "timed": len(timed),
        "untimed": [r.op for r in results if not r.timed],
        "unfinished": [r.op for r in results if r.status not in ("done", "stopped")],
        "geomean_speedup": geomean(speedups),
        "median_speedup": _median(speedups),
        "over_2x": sum(s > 2 for s in speedups),
        "over_5x": sum(s > 5 for s in speedups),
        "improved": len(improved),
        "median_best_round": _median(r.best_round for r in improved),
        "median_rounds_to_90": _median(r.rounds_to_90 for r in improved),
        "median_seconds_to_best": _median(r.seconds_to_best for r in improved),
        "best_at_l1": sum(r.best_level == "L1" for r in improved),
        "best_levels": {lvl: sum(r.best_level == lvl for r in improved) for lvl in LEVELS},
        "trajectory_levels": {lvl: sum(r.deepest_level == lvl for r in results) for lvl in LEVELS},
        "geomean_initial_vs_eager": geomean(r.initial_vs_eager for r in timed),
        "geomean_vs_eager": geomean(r.vs_eager for r in timed),
        "geomean_vs_compile": geomean(r.vs_compile for r in timed),
        "median_roofline": _median(r.roofline for r in timed),
        "rounds": sum(r.rounds for r in results),
        "wall_s": round(sum(r.wall_s for r in results), 1),
        "families": dict(Counter(r.family for r in results)),
        **candidate_figures(results),
    }


# Why a candidate was not kept, in the report's order: `cheat` is validation or the bench catching a candidate that
# games its judge (round_outcome), `unparsable` a reply without a usable code block, `rejected` the guard (the
# candidate changed what it is judged by). Outcomes are read as strings, so a store with outcomes this list lacks still reports them (last).
REJECT_REASONS = (Outcome.INCORRECT, Outcome.SLOWER, "cheat", Outcome.UNPARSABLE, Outcome.COMPILE_ERROR, Outcome.CRASH,
                  Outcome.TIMEOUT, Outcome.REJECTED, Outcome.PROPOSER_ERROR)


def candidate_figures(results: list[OperatorResult]) -> dict[str, Any]:
    """Every round is one candidate: how many were rejected and why, and how many LLM replies a win took."""
    outcomes: Counter[str] = Counter()
    for r in results:
        outcomes.update(r.outcomes)
    candidates = sum(outcomes.values())
    reasons = {k: outcomes[k] for k in REJECT_REASONS if outcomes[k]}
    reasons.update(sorted((k, v) for k, v in outcomes.items() if k not in REJECT_REASONS and k not in KEPT))
    wins = outcomes[Outcome.IMPROVED]
    replies = sum(r.llm_replies for r in results)
    levels = Counter(lv for r in results for lv in r.win_levels)
    return {
        "candidates": candidates,
        "rejected": sum(reasons.values()),
        "rejected_share": sum(reasons.values()) / candidates if candidates else None,
        "reasons": reasons,
        "wins": wins,
        "llm_replies": replies,
        "replies_per_win": replies / wins if wins else None,
        "win_levels": {lv: levels[lv] for lv in ("none", *LEVELS)},
    }


# --- two arms, operator by operator ------------------------------------------------------------

TIE = 0.02  # speedups within 2% of each other are a tie: timing noise (optimize.MIN_GAIN is the same)


def bootstrap_geomean(ratios: list[float], *, seed: int = 0, resamples: int = 10000) -> tuple[float, float]:
    """95% percentile interval of the geomean of `ratios`, resampling operators with replacement (seeded)."""
    logs = [math.log(r) for r in ratios]
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(logs, k=len(logs))) for _ in range(resamples))
    return math.exp(means[round(0.025 * (resamples - 1))]), math.exp(means[round(0.975 * (resamples - 1))])


def compare_arms(a: list[OperatorResult], b: list[OperatorResult], *, seed: int = 0,
                 resamples: int = 10000) -> dict[str, Any]:
    """Per operator timed in both arms, each with at least one candidate tried: both final speedups over the
    initial kernel and their ratio a/b; then the geomean ratio with its bootstrap interval, and wins (a better
    by > 2%), losses and ties. An arm that tried nothing yet is no evidence for either side, not a tie."""
    by_a, by_b = {r.op: r for r in a}, {r.op: r for r in b}
    pairs = []
    for op in sorted(set(by_a) & set(by_b)):
        ra, rb = by_a[op], by_b[op]
        if ra.speedup is None or rb.speedup is None or not ra.rounds or not rb.rounds:
            continue
        ratio = ra.speedup / rb.speedup
        verdict = "tie" if abs(math.log(ratio)) <= math.log(1 + TIE) else ("win" if ratio > 1 else "loss")
        pairs.append({"op": op, "family": ra.family, "a": ra.speedup, "b": rb.speedup, "ratio": ratio,
                      "verdict": verdict})
    ratios = [p["ratio"] for p in pairs]
    verdicts = Counter(p["verdict"] for p in pairs)
    return {
        "pairs": pairs,
        "operators": len(pairs),
        "geomean_ratio": geomean(ratios),
        "ci95": list(bootstrap_geomean(ratios, seed=seed, resamples=resamples)) if ratios else None,
        "seed": seed, "resamples": resamples,
        "wins": verdicts["win"], "losses": verdicts["loss"], "ties": verdicts["tie"],
        "untimed": sorted(op for op in set(by_a) & set(by_b) if op not in {p["op"] for p in pairs}),  # or untried
        "only_a": sorted(set(by_a) - set(by_b)), "only_b": sorted(set(by_b) - set(by_a)),
    }


# --- Markdown ----------------------------------------------------------------------------------

def _x(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}x"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _num(value: Any) -> str:
    return "-" if value is None else (f"{value:g}" if isinstance(value, float) else str(value))


def _table(headers: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(out)


def summary_markdown(by_policy: dict[str, dict[str, Any]], extra: list[tuple] = ()) -> str:
    """One column per policy (or arm): the paper's figures side by side (the causal-isolation comparison)."""
    names = list(by_policy)
    rows = [
        ("operators (timed)", lambda s: f"{s['operators']} ({s['timed']})"),
        ("geomean speedup vs initial", lambda s: _x(s["geomean_speedup"])),
        ("median speedup", lambda s: _x(s["median_speedup"])),
        ("operators > 2x", lambda s: f"{s['over_2x']}/{s['timed']}"),
        ("operators > 5x", lambda s: f"{s['over_5x']}/{s['timed']}"),
        ("median best-round index", lambda s: _num(s["median_best_round"])),
        ("median rounds to 90% of final gain", lambda s: _num(s["median_rounds_to_90"])),
        ("median seconds to the best round", lambda s: _num(s["median_seconds_to_best"])),
        ("best rounds found at L1", lambda s: f"{s['best_at_l1']}/{s['improved']}"),
        ("deepest level of best rounds, L1/L2/L3/L4", lambda s: "/".join(str(s["best_levels"][lv]) for lv in LEVELS)),
        ("deepest level of trajectories, L1/L2/L3/L4", lambda s: "/".join(str(s["trajectory_levels"][lv]) for lv in LEVELS)),
        ("initial vs torch eager (geomean)", lambda s: _x(s["geomean_initial_vs_eager"])),
        ("final vs torch eager (geomean)", lambda s: _x(s["geomean_vs_eager"])),
        ("final vs torch.compile (geomean)", lambda s: _x(s["geomean_vs_compile"])),
        ("median fraction of roofline", lambda s: _pct(s["median_roofline"])),
        ("rounds / wall time", lambda s: f"{s['rounds']} / {s['wall_s'] / 60:.1f} min"),
        *extra,
    ]
    return _table(["figure", *names], [[label, *(fmt(by_policy[p]) for p in names)] for label, fmt in rows])


def operators_markdown(results: list[OperatorResult], group: str = "policy") -> str:
    rows = [[r.op, r.family, r.policy, _x(r.speedup), _num(r.best_round), r.best_level or "-",
             r.deepest_level or "-", str(r.rounds), _x(r.initial_vs_eager), _x(r.vs_eager), _x(r.vs_compile),
             _pct(r.roofline), f"{r.wall_s:.0f}s", r.status]
            for r in sorted(results, key=lambda r: (r.policy, r.family, r.op))]
    return _table(["operator", "family", group, "speedup", "best round", "best at", "deepest", "rounds",
                   "initial/eager", "final/eager", "final/compile", "roofline", "wall", "status"], rows)


def shortfalls_markdown(results: list[OperatorResult], reasons: dict[str, str]) -> str:
    """Operators below the targets (2x over initial, 1.0x vs torch.compile, 70% roofline), with why."""
    rows = []
    for r in sorted(results, key=lambda r: (r.speedup or 0)):
        misses = []
        if r.speedup is not None and r.speedup < 2:
            misses.append(f"speedup {_x(r.speedup)}")
        if r.vs_compile is not None and r.vs_compile < 1:
            misses.append(f"{_x(r.vs_compile)} of torch.compile")
        if r.roofline is not None and r.roofline < 0.7:
            misses.append(f"{_pct(r.roofline)} of roofline")
        if misses:
            rows.append([r.op, r.policy, "; ".join(misses), reasons.get(r.run_id, "-")])
    return _table(["operator", "policy", "short by", "why (from the rounds)"], rows) if rows else "None."


# --- SVG plots ---------------------------------------------------------------------------------

def bars_svg(title: str, labels: list[str], values: list[float], *, log: bool = False, unit: str = "x",
             width: int = 720) -> str:
    """Horizontal bars, one per label; log scale puts 1x at the origin (speedups)."""
    row, left, right = 16, 150, 70
    height = 30 + row * len(labels) + 10
    scale = [math.log2(max(v, 1e-9)) if log else v for v in values]
    lo, hi = min([0.0, *scale]), max([1e-9, *scale])
    span = (width - left - right) / (hi - lo)
    zero = left + (0 - lo) * span
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             f'font-size="11"><text x="{width / 2}" y="16" text-anchor="middle" font-size="13">{escape(title)}</text>',
             f'<line x1="{zero:.1f}" y1="24" x2="{zero:.1f}" y2="{height - 6}" stroke="#888"/>']
    for i, (label, value, s) in enumerate(zip(labels, values, scale)):
        y = 26 + i * row
        x0, x1 = sorted((zero, zero + s * span))
        color = "#2b7bb9" if s >= 0 else "#c0392b"
        parts.append(f'<text x="{left - 6}" y="{y + 11}" text-anchor="end">{escape(label)}</text>'
                     f'<rect x="{x0:.1f}" y="{y + 2}" width="{max(x1 - x0, 0.5):.1f}" height="{row - 4}" fill="{color}"/>'
                     f'<text x="{x1 + 4:.1f}" y="{y + 11}">{value:.2f}{unit}</text>')
    parts.append("</svg>")
    return "".join(parts)


def histogram_svg(title: str, values: list[float], edges: list[float]) -> str:
    """Counts of values per [edge_i, edge_i+1) bin, as bars (the speedup distribution)."""
    counts = [sum(lo <= v < hi for v in values) for lo, hi in zip(edges, edges[1:])]
    labels = [f"{lo:g}-{hi:g}x" if hi != math.inf else f">= {lo:g}x" for lo, hi in zip(edges, edges[1:])]
    return bars_svg(title, labels, [float(c) for c in counts], unit="")


def stacked_levels_svg(title: str, by_policy: dict[str, dict[str, int]], width: int = 720) -> str:
    """One bar per policy split by evidence level (how deep the best rounds / trajectories went)."""
    colors = {"L1": "#7fb77e", "L2": "#f2c14e", "L3": "#f78154", "L4": "#5d2e8c"}
    row, left = 22, 150
    height = 50 + row * len(by_policy)
    total = max([sum(v.values()) for v in by_policy.values()] + [1])
    span = (width - left - 20) / total
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             f'font-size="11"><text x="{width / 2}" y="16" text-anchor="middle" font-size="13">{escape(title)}</text>']
    for i, (name, counts) in enumerate(by_policy.items()):
        y, x = 26 + i * row, float(left)
        parts.append(f'<text x="{left - 6}" y="{y + 13}" text-anchor="end">{escape(name)}</text>')
        for lvl in LEVELS:
            w = counts.get(lvl, 0) * span
            if w:
                parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row - 4}" fill="{colors[lvl]}"/>'
                             f'<text x="{x + w / 2:.1f}" y="{y + 13}" text-anchor="middle" fill="#fff">'
                             f'{lvl}:{counts[lvl]}</text>')
                x += w
    legend_y = height - 10
    for j, lvl in enumerate(LEVELS):
        parts.append(f'<rect x="{left + j * 60}" y="{legend_y - 9}" width="10" height="10" fill="{colors[lvl]}"/>'
                     f'<text x="{left + j * 60 + 14}" y="{legend_y}">{lvl}</text>')
    parts.append("</svg>")
    return "".join(parts)


SPEEDUP_BINS = [0, 1.1, 1.5, 2, 3, 5, 10, math.inf]


def plots(results: list[OperatorResult], summaries: dict[str, dict[str, Any]]) -> dict[str, str]:
    """File name -> SVG text: speedup distribution and per-operator bars per policy, evidence depth."""
    out = {}
    for policy in summaries:
        mine = sorted((r for r in results if r.policy == policy and r.timed), key=lambda r: -r.speedup)
        if not mine:
            continue
        out[f"speedup-distribution-{policy}.svg"] = histogram_svg(
            f"Speedup over the initial kernel ({policy}): operators per bin", [r.speedup for r in mine], SPEEDUP_BINS)
        out[f"speedup-per-operator-{policy}.svg"] = bars_svg(
            f"Speedup over the initial kernel per operator ({policy}, log scale)",
            [r.op for r in mine], [r.speedup for r in mine], log=True)
    out["evidence-depth-best-rounds.svg"] = stacked_levels_svg(
        "Evidence level of the best round, per policy", {p: s["best_levels"] for p, s in summaries.items()})
    out["evidence-depth-trajectories.svg"] = stacked_levels_svg(
        "Deepest evidence level of each trajectory, per policy", {p: s["trajectory_levels"] for p, s in summaries.items()})
    return out


def report_markdown(results: list[OperatorResult], env: dict[str, Any], title: str, plot_dir: str | None,
                    reasons: dict[str, str] | None = None) -> str:
    """The RESULTS.md section: environment line, policy comparison, per-operator table, shortfalls, plots."""
    policies = [p for p in POLICIES if any(r.policy == p for r in results)]
    policies += sorted({r.policy for r in results} - set(policies))
    summaries = {p: summarize([r for r in results if r.policy == p]) for p in policies}
    env_line = ", ".join(f"{k} {v}" for k, v in env.items() if v)
    parts = [f"## {title}", "", f"Measured: {env_line}.", "",
             "Speedup is per operator the geomean over its cases of initial time / best time; "
             "'rounds to 90%' counts rounds until the best-so-far reached 90% of the final gain.", "",
             summary_markdown(summaries), ""]
    shared = set.intersection(*({r.op for r in results if r.policy == p} for p in policies)) if policies else set()
    if len(policies) > 1 and shared != {r.op for r in results}:
        same = {p: summarize([r for r in results if r.policy == p and r.op in shared]) for p in policies}
        parts += [f"### Policies on the same {len(shared)} operators ({', '.join(sorted(shared))})", "",
                  summary_markdown(same), ""]
    parts += ["### Per operator", "", operators_markdown(results), "",
              "### Short of target (2x over initial, 1.0x vs torch.compile, 70% of roofline)", "",
              shortfalls_markdown(results, reasons or {}), ""]
    if plot_dir:
        parts += ["### Plots", ""]
        parts += [f"![{name}]({plot_dir}/{name})" for name in plots(results, summaries)]
        parts.append("")
    return "\n".join(parts)


# --- arms of an experiment (one campaign each) ---------------------------------------------------

def _share(n: int, total: int) -> str:
    return f"{n} ({_pct(n / total)})" if total else "-"


ARM_ROWS = [
    ("grounding", lambda s: ", ".join(s["groundings"]) or "-"),
    ("candidates (rounds) / improved", lambda s: f"{s['candidates']} / {s['wins']}"),
    ("candidates rejected", lambda s: _share(s["rejected"], s["candidates"])),
    ("LLM replies consumed / per win", lambda s: f"{s['llm_replies']} / "
                                                 f"{_num(None if s['replies_per_win'] is None else round(s['replies_per_win'], 2))}"),
    ("evidence level of wins, none/L1/L2/L3/L4", lambda s: "/".join(str(v) for v in s["win_levels"].values())),
]


def arm_summary(results: list[OperatorResult]) -> dict[str, Any]:
    return {**summarize(results), "groundings": sorted({r.grounding for r in results if r.grounding})}


def reasons_markdown(summaries: dict[str, dict[str, Any]]) -> str:
    """Rejected candidates per reason and arm, as count (share of that arm's candidates)."""
    reasons = [k for k in REJECT_REASONS if any(k in s["reasons"] for s in summaries.values())]
    reasons += sorted({k for s in summaries.values() for k in s["reasons"]} - set(reasons))
    labels = {"rejected": "rejected (guard)", "unparsable": "unparsable reply"}
    rows = [[labels.get(k, k), *(_share(s["reasons"].get(k, 0), s["candidates"]) for s in summaries.values())]
            for k in reasons]
    return _table(["reason", *summaries], rows) if rows else "None rejected."


def compare_markdown(names: tuple[str, str], cmp: dict[str, Any]) -> str:
    """The paired table and one line with the geomean ratio, its interval and the wins/losses/ties."""
    a, b = names
    rows = [[p["op"], p["family"], _x(p["a"]), _x(p["b"]), f"{p['ratio']:.3f}", p["verdict"]] for p in cmp["pairs"]]
    parts = [_table(["operator", "family", a, b, f"{a} / {b}", f"{a} vs {b}"], rows) if rows else "No operator "
             "timed in both arms.", ""]
    if cmp["pairs"]:
        lo, hi = cmp["ci95"]
        parts.append(f"Geomean {a} / {b}: **{cmp['geomean_ratio']:.3f}** (95% bootstrap interval {lo:.3f}-{hi:.3f} "
                     f"over {cmp['operators']} operators, {cmp['resamples']} resamples, seed {cmp['seed']}); "
                     f"{a} better on {cmp['wins']}, worse on {cmp['losses']}, ties (within {TIE:.0%}) {cmp['ties']}.")
    left = [f"untimed or no candidate tried in an arm: {', '.join(cmp['untimed'])}" if cmp["untimed"] else "",
            f"only in {a}: {', '.join(cmp['only_a'])}" if cmp["only_a"] else "",
            f"only in {b}: {', '.join(cmp['only_b'])}" if cmp["only_b"] else ""]
    if any(left):
        parts.append("Not compared: " + "; ".join(x for x in left if x) + ".")
    return "\n".join(parts)


def arms_markdown(arms: dict[str, list[OperatorResult]], env: dict[str, Any], title: str,
                  compare: dict[str, Any] | None = None) -> str:
    """The RESULTS.md section of an experiment: figures per arm, rejected candidates by reason, the paired
    comparison of two arms (when given), and every operator of every arm."""
    summaries = {name: arm_summary(results) for name, results in arms.items()}
    env_line = ", ".join(f"{k} {v}" for k, v in env.items() if v)
    parts = [f"## {title}", "", f"Measured: {env_line}.", "",
             "Speedup is per operator the geomean over its cases of initial time / time of the best validated round; "
             "every round is one candidate (one LLM reply with the LLM proposer).", "",
             summary_markdown(summaries, ARM_ROWS), "", "### Candidates rejected, by reason", "",
             reasons_markdown(summaries), ""]
    if compare is not None:
        names = tuple(arms)[:2]
        parts += [f"### {names[0]} vs {names[1]}, operator by operator", "", compare_markdown(names, compare), ""]
    tagged = [replace(r, policy=name) for name, results in arms.items() for r in results]
    parts += ["### Per operator", "", operators_markdown(tagged, group="arm"), ""]
    return "\n".join(parts)
