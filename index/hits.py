"""Search hits, typed: the chunk a hit points at reads back with the fields ingest wrote for it.

`ingest/pipeline.py` (`payload`) writes each chunk's fields into the index; `StoredChunk` reads them back as
attributes. Keys it does not name (a pass note's front matter, keys of an older or newer ingest) stay reachable
in `extra`, and `to_dict` gives the stored keys back in their stored order, so JSON output is the payload's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields


@dataclass
class StoredChunk:
    """One chunk's stored fields (the chunk's text is the hit's `text`)."""

    corpus: str = ""
    version: str = ""
    path: str = ""
    language: str = ""
    kind: str = ""
    symbol: str = ""
    symbols: list[str] = field(default_factory=list)
    qualname: str = ""
    signature: str = ""
    start_line: int | None = None
    end_line: int | None = None
    passes: list[str] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)
    diagnostics: list[str] = field(default_factory=list)
    env_knobs: list[str] = field(default_factory=list)
    content_hash: str = ""
    anchors: list[str] = field(default_factory=list)  # a pass note's front matter: the source it explains
    matched_diagnostic: str = ""  # set by find_emitter: the emitted message that matched
    rerank: float | None = None  # set by the cross-encoder: its relevance
    extra: dict = field(default_factory=dict)  # every stored key not named above
    keys: tuple[str, ...] = ()  # the stored keys, in stored order: what `to_dict` gives back

    def __post_init__(self) -> None:
        if not self.keys:  # built in code, not read back: the fields it sets
            self.keys = tuple(k for k in _DEFAULTS if getattr(self, k) != _DEFAULTS[k]) + tuple(self.extra)

    @classmethod
    def from_payload(cls, payload: dict) -> StoredChunk:
        named = _NAMED & payload.keys()
        return cls(**{k: payload[k] for k in named},
                   extra={k: v for k, v in payload.items() if k not in named and k != "text"},
                   keys=tuple(k for k in payload if k != "text"))

    @property
    def key(self) -> tuple:
        """Which chunk this is, across corpora: (corpus, path, first line)."""
        return self.corpus, self.path, self.start_line

    def with_(self, **changes) -> StoredChunk:
        """A copy with these keys set (added after the stored ones when new)."""
        return StoredChunk.from_payload({**self.to_dict(), **changes})

    def to_dict(self) -> dict:
        return {k: getattr(self, k) if k in _NAMED else self.extra[k] for k in self.keys}


_DEFAULTS = {f.name: f.default_factory() if callable(f.default_factory) else f.default
             for f in fields(StoredChunk) if f.name not in ("extra", "keys")}
_NAMED = set(_DEFAULTS)


@dataclass
class Hit:
    score: float
    text: str
    chunk: StoredChunk = field(default_factory=StoredChunk)

    @property
    def meta(self) -> dict:
        """The stored fields as a plain dict, as `to_dict` (and so `--json`) shows them."""
        return self.chunk.to_dict()

    @property
    def key(self) -> tuple:
        return self.chunk.key

    def cite(self) -> str:
        c = self.chunk
        return f"{c.path}:{c.start_line}-{c.end_line}@{c.version}"

    def to_dict(self) -> dict:
        return {"score": self.score, "cite": self.cite(), "text": self.text, "meta": self.meta}

    @classmethod
    def from_payload(cls, score: float, payload: dict) -> Hit:
        """A hit on a stored point (its payload holds the chunk's text too)."""
        return cls(score, payload.get("text", ""), StoredChunk.from_payload(payload))
