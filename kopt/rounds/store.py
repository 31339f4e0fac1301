"""The rounds store: one SQLite database (WAL, synchronous=FULL) under the workspace's .kopt/, with
artifacts (candidate sources, IR, findings, LLM transcripts) content-addressed beside it.

A round is committed in one transaction after its artifacts are on disk, so a `kill -9` at any moment
leaves every committed round intact and nothing half-written: the run resumes from the last one.
A locked store or a full disk becomes a KoptError naming the cause; committed rounds stay as they were.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

from kopt.errors import KoptError
from kopt.vocabulary import Outcome

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, task_path TEXT NOT NULL, task_hash TEXT NOT NULL, created REAL NOT NULL,
    status TEXT NOT NULL, stop_reason TEXT, options TEXT NOT NULL, baseline TEXT NOT NULL,
    timing TEXT NOT NULL, initial TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rounds (
    run_id TEXT NOT NULL REFERENCES runs(run_id), n INTEGER NOT NULL, created REAL NOT NULL,
    level_reached TEXT, hypothesis TEXT NOT NULL, hypothesis_key TEXT NOT NULL, finding_ids TEXT NOT NULL,
    pattern_id TEXT, proposer TEXT NOT NULL, candidate TEXT, outcome TEXT NOT NULL, message TEXT,
    case_times TEXT NOT NULL, speedup_initial REAL, speedup_best REAL, evidence TEXT NOT NULL,
    levels TEXT NOT NULL, skipped TEXT NOT NULL, roofline TEXT NOT NULL, seconds REAL NOT NULL,
    PRIMARY KEY (run_id, n)
);
CREATE TABLE IF NOT EXISTS pending (
    run_id TEXT NOT NULL REFERENCES runs(run_id), n INTEGER NOT NULL, created REAL NOT NULL,
    request_id TEXT NOT NULL, request TEXT NOT NULL, reply_path TEXT NOT NULL, state TEXT NOT NULL,
    PRIMARY KEY (run_id, n)
);
"""


@dataclass
class Round:
    """One optimization step; the Round fields ARCHITECTURE.md describes, plus what the report needs."""

    run_id: str
    n: int
    level_reached: str | None  # the deepest diagnosis level that ran for this round
    hypothesis: str  # one line: the finding, the pattern, what the candidate changes
    hypothesis_key: str  # hypothesis_key(): tried keys are never repeated
    finding_ids: list[str]
    pattern_id: str | None
    proposer: str  # recipe:NAME | llm:MODEL
    candidate: str | None  # artifact hash of the candidate source
    outcome: str  # an Outcome's value (kopt/vocabulary.py)
    message: str | None = None
    case_times: list[float | None] = field(default_factory=list)  # kernel ms per case, None when untimed
    speedup_initial: float | None = None
    speedup_best: float | None = None
    evidence: dict[str, str] = field(default_factory=dict)  # label -> artifact hash (findings, transcript, ...)
    levels: list[dict] = field(default_factory=list)  # the diagnosis levels: used / skipped and why
    skipped: list[str] = field(default_factory=list)  # hypotheses passed over this round, with the reason
    roofline: list[float | None] = field(default_factory=list)  # fraction of the roofline bound per case
    seconds: float = 0.0
    created: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Run:
    run_id: str
    task_path: str
    task_hash: str  # artifact hash of the task source at the start
    created: float
    status: str  # running | waiting (for prompt-exchange replies) | interrupted (Ctrl-C; resumable) | done | stopped | failed
    stop_reason: str | None
    options: dict[str, Any]  # rounds, minutes, proposer, model, policy, grounding, llm_exchange, tags: for --resume
    baseline: list[float | None]  # the initial kernel's ms per case (None when untimed)
    timing: dict[str, Any]  # {"available": bool, "reason": str, "roofline": [fractions]}
    initial: dict[str, Any]  # validation summary of the initial kernel

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def hypothesis_key(finding_id: str | None, pattern_id: str | None) -> str:
    """A round's key: finding/pattern, "llm" in place of a pattern when the LLM (or an agent) wrote the candidate,
    and no finding part when no finding was named."""
    return "/".join([*([finding_id] if finding_id else []), pattern_id or "llm"])


def best_round(rounds: list[Round]) -> Round | None:
    """The improved round with the highest speedup over the initial kernel: the run's best so far."""
    wins = [r for r in rounds if r.outcome == Outcome.IMPROVED]
    return max(wins, key=lambda r: r.speedup_initial or 0) if wins else None


_RUN_JSON = ("options", "baseline", "timing", "initial")
_ROUND_JSON = ("finding_ids", "case_times", "evidence", "levels", "skipped", "roofline")


class RoundsStore:
    """Runs and rounds of one workspace. Open it per command; every write is its own transaction."""

    def __init__(self, state_dir: Path):
        self.root = Path(state_dir)
        self.artifacts = self.root / "artifacts"
        with self._guard("open"):
            self.artifacts.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.root / "rounds.sqlite", timeout=5.0, isolation_level=None)
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def _guard(self, what: str) -> Iterator[None]:
        """Storage failures the user can act on: a lock held elsewhere, a full disk, a corrupt file."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if "locked" in text or "busy" in text:
                raise KoptError(f"{self.root / 'rounds.sqlite'}: {what}: the rounds store is locked by another "
                                "kopt process; committed rounds are intact") from exc
            if "full" in text or "I/O error" in text:
                raise KoptError(f"{self.root}: {what}: {text} (disk full?); committed rounds are intact: free space "
                                "and --resume the run") from exc
            raise KoptError(f"{self.root / 'rounds.sqlite'}: {what}: {text}") from exc
        except sqlite3.IntegrityError as exc:
            raise KoptError(f"{self.root / 'rounds.sqlite'}: {what}: already committed (is another kopt process "
                            "running this run?)") from exc
        except sqlite3.DatabaseError as exc:
            raise KoptError(f"{self.root / 'rounds.sqlite'}: {what}: not a readable rounds store ({exc})") from exc
        except OSError as exc:
            raise KoptError(f"{self.root}: {what}: {exc.strerror or exc}; committed rounds are intact") from exc

    # --- artifacts -------------------------------------------------------------------------------

    def put(self, content: str | bytes) -> str:
        """Store content once, by its sha256; written to a temporary file, fsynced, then renamed."""
        data = content.encode() if isinstance(content, str) else content
        digest = hashlib.sha256(data).hexdigest()
        path = self.artifact_path(digest)
        if path.exists():
            return digest
        with self._guard("write artifact"):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            try:
                with open(tmp, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)
        return digest

    def put_json(self, value: Any) -> str:
        return self.put(json.dumps(value, indent=1, sort_keys=True, default=str))

    def artifact_path(self, digest: str) -> Path:
        return self.artifacts / digest[:2] / digest[2:]

    def get(self, digest: str) -> str:
        path = self.artifact_path(digest)
        if not path.is_file():
            raise KoptError(f"{path}: artifact {digest[:12]} is missing from the store")
        return path.read_text()

    # --- runs ------------------------------------------------------------------------------------

    def create_run(self, task_path: Path, task_source: str, options: dict[str, Any], baseline: list,
                   timing: dict[str, Any], initial: dict[str, Any]) -> Run:
        run_id = f"{Path(task_path).stem}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
        run = Run(run_id, str(task_path), self.put(task_source), time.time(), "running", None, options,
                  baseline, timing, initial)
        row = run.to_dict()
        for key in _RUN_JSON:
            row[key] = json.dumps(row[key])
        with self._guard("create run"):
            self.db.execute(f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                            list(row.values()))
        return run

    def set_baseline(self, run_id: str, baseline: list, timing: dict[str, Any], initial: dict[str, Any]) -> None:
        """Time a run's initial kernel after the fact (a run started without a GPU, resumed on one)."""
        with self._guard("set baseline"):
            self.db.execute("UPDATE runs SET baseline = ?, timing = ?, initial = ? WHERE run_id = ?",
                            (json.dumps(baseline), json.dumps(timing), json.dumps(initial), run_id))

    def set_status(self, run_id: str, status: str, stop_reason: str | None = None,
                   options: dict[str, Any] | None = None) -> None:
        with self._guard("update run"):
            self.db.execute("UPDATE runs SET status = ?, stop_reason = ?, options = COALESCE(?, options) "
                            "WHERE run_id = ?", (status, stop_reason, json.dumps(options) if options else None, run_id))
            if status == "done":  # a budget that ran out before a pending request's reply: it waits no more
                self.db.execute("DELETE FROM pending WHERE run_id = ?", (run_id,))

    def run(self, run_id: str) -> Run:
        with self._guard("read run"):
            row = self.db.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                row = self._by_prefix(run_id)
        data = dict(row)
        for key in _RUN_JSON:
            data[key] = json.loads(data[key])
        return Run(**data)

    def _by_prefix(self, run_id: str) -> sqlite3.Row:
        rows = self.db.execute("SELECT * FROM runs WHERE run_id LIKE ? ORDER BY created", (run_id + "%",)).fetchall()
        if len(rows) == 1:
            return rows[0]
        known = [r["run_id"] for r in self.db.execute("SELECT run_id FROM runs ORDER BY created DESC LIMIT 5")]
        if rows:
            raise KoptError(f"run {run_id!r} is ambiguous: {', '.join(r['run_id'] for r in rows)}")
        raise KoptError(f"no run {run_id!r} in {self.root}; recent: {', '.join(known) or 'none (kopt optimize TASK)'}")

    def runs(self) -> list[Run]:
        with self._guard("list runs"):
            ids = [r[0] for r in self.db.execute("SELECT run_id FROM runs ORDER BY created")]
        return [self.run(i) for i in ids]

    # --- rounds ----------------------------------------------------------------------------------

    def add_round(self, rnd: Round) -> None:
        """Commit one round (its artifacts must already be stored), and drop its pending request: all or none."""
        row = rnd.to_dict()
        for key in _ROUND_JSON:
            row[key] = json.dumps(row[key])
        with self._guard(f"commit round {rnd.n}"):
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.execute(f"INSERT INTO rounds ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                                list(row.values()))
                self.db.execute("DELETE FROM pending WHERE run_id = ? AND n = ?", (rnd.run_id, rnd.n))
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    # --- pending LLM requests (the prompt exchange) -----------------------------------------------

    def set_pending(self, run_id: str, n: int, request: dict[str, Any], reply_path: str, state: dict[str, Any]) -> None:
        """Record round n's LLM request and the round's diagnosis state before the request goes out: a resumed
        run then asks the same request instead of diagnosing again (a GPU cost), and a reply is never lost."""
        digest = self.put_json(request)
        with self._guard(f"record the request of round {n}"):
            self.db.execute("INSERT OR REPLACE INTO pending VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (run_id, n, time.time(), request["id"], digest, reply_path, json.dumps(state)))

    def pending(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """Pending requests (of one run, or of all): run_id, n, request_id, request (the body), reply_path, state."""
        with self._guard("read pending requests"):
            rows = self.db.execute("SELECT * FROM pending WHERE ? IS NULL OR run_id = ? ORDER BY created",
                                   (run_id, run_id)).fetchall()
        return [{**dict(r), "request": json.loads(self.get(r["request"])), "state": json.loads(r["state"])}
                for r in rows]

    def rounds(self, run_id: str) -> list[Round]:
        with self._guard("read rounds"):
            rows = self.db.execute("SELECT * FROM rounds WHERE run_id = ? ORDER BY n", (run_id,)).fetchall()
        out = []
        for row in rows:
            data = dict(row)
            for key in _ROUND_JSON:
                data[key] = json.loads(data[key])
            out.append(Round(**data))
        return out

    def round(self, run_id: str, n: int) -> Round:
        for rnd in self.rounds(run_id):
            if rnd.n == n:
                return rnd
        raise KoptError(f"run {run_id} has no round {n}")
