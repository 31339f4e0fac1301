"""The Chunk record and the size rules every chunker shares.

A chunk is a contiguous, exactly-numbered line range of one file, preceded in its text by a
header line (path, qualified name, signature, and for a member of a class too big to keep whole,
that class's head) so that both the embedder and a reader know
where it comes from. Tiny neighbours merge; huge bodies split with the header repeated.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

MAX_LINES = 160     # a body longer than this splits into parts
MAX_CHARS = 7000
MIN_CHARS = 350     # neighbours smaller than this merge
MERGEABLE = {"code", "function"}  # records, test cases, sections and patterns stay one per chunk
WINDOW = 80         # lines per part when splitting or falling back


@dataclass
class Chunk:
    path: str
    language: str
    kind: str                 # function|class|pass|td_record|mlir_test|doc|pattern|pass_note|code
    start_line: int           # 1-based, inclusive
    end_line: int
    body: str
    symbol: str = ""
    qualname: str = ""
    signature: str = ""
    symbols: list[str] = field(default_factory=list)
    passes: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)   # chunker-specific metadata (front matter, RUN flags)
    context: str = ""         # head of the enclosing class a member was cut from: in the header, so searchable

    @property
    def header(self) -> str:
        parts = [f"{self.path}:{self.start_line}-{self.end_line}"]
        if self.qualname:
            parts.append(self.qualname)
        if self.signature:
            parts.append(self.signature)
        if self.context:
            parts.append(self.context)
        return " | ".join(parts)

    @property
    def text(self) -> str:
        return f"{self.header}\n{self.body}"

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:32]


def lines_of(source: str, start: int, end: int) -> str:
    """Lines start..end (1-based, inclusive) of source."""
    return "\n".join(source.splitlines()[start - 1 : end])


def windows(source: str, path: str, language: str, *, kind: str = "code", start: int = 1, end: int | None = None,
            template: Chunk | None = None) -> list[Chunk]:
    """Cut lines start..end into WINDOW-line parts; with a template, each part keeps its names (part i/n)."""
    all_lines = source.splitlines()
    end = len(all_lines) if end is None else end
    spans = [(s, min(s + WINDOW - 1, end)) for s in range(start, end + 1, WINDOW)]
    out = []
    for i, (s, e) in enumerate(spans, 1):
        body = "\n".join(all_lines[s - 1 : e])
        if not body.strip():
            continue
        chunk = Chunk(path, language, kind, s, e, body)
        if template is not None:
            chunk = Chunk(path, language, template.kind, s, e, body, template.symbol,
                          f"{template.qualname} (part {i}/{len(spans)})", template.signature,
                          list(template.symbols), list(template.passes), dict(template.extra), template.context)
        out.append(chunk)
    return out


def fit(chunks: list[Chunk], source: str) -> list[Chunk]:
    """Split oversize chunks and merge runs of tiny neighbours, keeping exact line ranges."""
    sized: list[Chunk] = []
    for c in chunks:
        if c.end_line - c.start_line + 1 > MAX_LINES or len(c.body) > MAX_CHARS:
            sized.extend(windows(source, c.path, c.language, start=c.start_line, end=c.end_line, template=c))
        else:
            sized.append(c)
    merged: list[Chunk] = []
    for c in sized:
        prev = merged[-1] if merged else None
        if (prev is not None and len(prev.body) < MIN_CHARS and len(c.body) < MIN_CHARS
                and prev.kind == c.kind and c.kind in MERGEABLE and prev.extra.get("group") == c.extra.get("group")):
            merged[-1] = _merge(prev, c, source)
        else:
            merged.append(c)
    return merged


def _merge(a: Chunk, b: Chunk, source: str) -> Chunk:
    names = [n for n in (a.qualname, b.qualname) if n]
    return Chunk(a.path, a.language, a.kind, a.start_line, b.end_line, lines_of(source, a.start_line, b.end_line),
                 a.symbol or b.symbol, ", ".join(names), a.signature or b.signature,
                 sorted(set(a.symbols + b.symbols)), sorted(set(a.passes + b.passes)), {**b.extra, **a.extra},
                 a.context or b.context)
