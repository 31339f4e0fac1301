"""L4 compiler-source escalation: why the compiler lowered the code the way L3 saw, and what a
rewrite must satisfy to change it.

Keyed by an L3 finding: the pass notes whose front matter lists the finding id give the mechanism
(in the engineers' words) and the anchors (compiler symbols); the anchors are looked up exactly in
the ingested compiler corpus, and a hybrid search keyed by the finding adds the code around them.
Every cited chunk carries path:lines@version so a reader can check the claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from kopt.config import Settings
from kopt.errors import KoptError
from kopt.index.search import PKG_ROOTS, TARGET_CORPORA
from kopt.passnotes import PassNote, load_pass_notes
from kopt.vocabulary import FINDING_IDS, Evidence, Finding

# Per compiler family, the corpora to cite, richest first: a checkout, else the installed package.
COMPILER_CORPORA = {"triton": TARGET_CORPORA["nvidia"], "triton-ascend": TARGET_CORPORA["ascend"]}
MAX_NOTES = 2
MAX_CITES = 6


@dataclass
class Cited:
    """One compiler-source chunk behind an L4 explanation."""

    cite: str  # path:start-end@version
    symbol: str
    corpus: str
    why: str
    excerpt: str

    def evidence(self) -> Evidence:
        return Evidence("L4", "compiler_source", f"{self.symbol}: {self.why}",
                        {"corpus": self.corpus, "symbol": self.symbol, "excerpt": self.excerpt}, self.cite)


def notes_dir() -> Path:
    from kopt.corpora import CORPORA_DIR  # not through kopt.ingest: importing it costs `ask` ~0.15 s

    return CORPORA_DIR / "passes"


@cache
def pass_notes() -> tuple[PassNote, ...]:
    """The project's pass notes (loaded once; a malformed note is skipped here, `kopt ingest passes` names it)."""
    return tuple(load_pass_notes(notes_dir(), strict=False))


def words(text: str) -> set[str]:
    from kopt.index.tokenize import tokens

    return set(tokens(text))


def notes_for(finding: Finding, notes: tuple[PassNote, ...] | list[PassNote] | None = None,
              corpus: str = "triton") -> list[PassNote]:
    """The notes that explain a finding, best first: the id central to the note, the pass seen in the
    trajectory evidence, and words shared with the finding's message."""
    notes = pass_notes() if notes is None else notes
    passes_seen = {str(e.data.get(k, "")).lstrip("-") for e in finding.evidence for k in ("pass_name", "flag")} - {""}
    said = words(finding.message + " " + " ".join(finding.conditions))
    scored = []
    for note in notes:
        if finding.id not in note.findings or note.corpus != corpus:
            continue
        centrality = 1.0 / (1 + note.findings.index(finding.id))
        seen = 1.0 if passes_seen & {note.pass_name, *(f.lstrip("-") for f in note.flags)} else 0.0
        overlap = len(said & words(note.title + " " + note.sections.get("When it gives up", ""))) / (len(said) or 1)
        scored.append((centrality + seen + overlap, note))
    scored.sort(key=lambda t: (-t[0], t[1].pass_name))
    return [n for score, n in scored[:MAX_NOTES] if score >= 0.6 * scored[0][0]]


def bullets(section: str) -> list[str]:
    """A markdown section's bullet points (continuation lines joined), or its paragraphs when it has none."""
    items: list[str] = []
    for line in section.splitlines():
        if re.match(r"^\s*[-*] ", line):
            items.append(line.strip()[2:].strip())
        elif line.strip() and items and line.startswith("  "):
            items[-1] += " " + line.strip()
        elif line.strip() and not items:
            items.append(line.strip())
        elif line.strip():
            items[-1] += " " + line.strip()
    return [" ".join(i.split()) for i in items if i]


def relevant(items: list[str], about: set[str], n: int) -> list[str]:
    """The n items sharing most words with `about`, in their original order (all when none share any)."""
    scored = [(len(words(item) & about), i) for i, item in enumerate(items)]
    best = sorted(scored, key=lambda t: (-t[0], t[1]))[:n]
    if not any(score for score, _ in best):
        return items[:n]
    return [items[i] for _, i in sorted(best, key=lambda t: t[1])]


def section_cite(note: PassNote, section: str) -> str:
    """corpora/passes/<note>.md:start-end@version for one '## ' section of a note."""
    lines = note.path.read_text(encoding="utf-8").splitlines()
    start = next((i for i, ln in enumerate(lines, 1) if ln.strip() == f"## {section}"), 1)
    end = next((i - 1 for i, ln in enumerate(lines[start:], start + 1) if ln.startswith("## ")), len(lines))
    try:
        rel = note.path.resolve().relative_to(notes_dir().parents[1].resolve())
    except ValueError:
        rel = note.path
    return f"{rel}:{start}-{end}@{note.version}"


def ingest_hint(family: str) -> str:
    """The `kopt ingest` commands that add a family's compiler source to the index."""
    if family == "triton-ascend":
        return ("`kopt ingest triton-ascend-pkg` (the ascend toolchain's installed package, no checkout needed; "
                "after `kopt toolchain add ascend`) or `kopt ingest triton-ascend --path DIR`")
    return "`kopt ingest triton-pkg` (no checkout needed) or `kopt ingest triton --path DIR`"


def compiler_corpus(index: Any, family: str = "triton") -> tuple[str | None, str | None]:
    """(the ingested compiler corpus to cite, a line saying what is missing or stale)."""
    if index is None:
        return None, f"no knowledge index: run {ingest_hint(family)}"
    served = {c["name"]: c for c in index.corpora()}
    for name in COMPILER_CORPORA[family]:
        if name in served:
            return name, _staleness(name, served[name])
    return None, f"the index at {index.where} has no {family} compiler source: run {ingest_hint(family)}"


def _staleness(name: str, entry: dict) -> str | None:
    if name == "triton-pkg":
        import triton

        want = f"triton-{triton.__version__}"
        if not str(entry.get("version", "")).startswith(want):
            return (f"the index holds {name}@{entry.get('version')} but triton {triton.__version__} is installed: "
                    f"run `kopt ingest triton-pkg`")
        return None
    notes_rev = {n.version.split("@")[1] for n in pass_notes() if n.corpus == name}
    have = str(entry.get("version", ""))
    if notes_rev and not any(have.startswith(r) or r.startswith(have) for r in notes_rev):
        return (f"the index holds {name}@{have} but the pass notes describe {name}@{', '.join(sorted(notes_rev))}: "
                f"symbols may have moved; re-run `kopt ingest {name} --path DIR` at that revision")
    return None


def _anchor_symbol(symbol: str) -> str | None:
    """The identifier to look up for a note anchor ('class AxisInfo' -> 'AxisInfo'); None for text anchors."""
    name = re.sub(r"^(class|struct|def)\s+", "", symbol.strip())
    return name if re.fullmatch(r"[A-Za-z_][\w:.]*", name) else None


def _pkg_path(anchor_path: str, corpus: str) -> str | None:
    """Anchors are checkout paths; a package corpus is rooted at the installed `triton` (None: not in it)."""
    if corpus not in PKG_ROOTS:
        return anchor_path
    for prefix, root in PKG_ROOTS[corpus].items():
        if anchor_path.startswith(prefix):
            return root + anchor_path.removeprefix(prefix)
    return None


def _excerpt(text: str, n: int = 6) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[:n])


def cite_anchors(note: PassNote, index: Any, corpus: str) -> list[Cited]:
    """The note's anchors resolved to chunks (exact symbol lookup, filtered to the anchor's file)."""
    out = []
    for anchor in note.anchors:
        symbol = _anchor_symbol(anchor["symbol"])
        path = _pkg_path(anchor["path"], corpus)
        if symbol is None or path is None:
            continue  # a text anchor, or C++ the installed package does not carry
        try:
            hits = index.lookup_symbol(symbol, corpus)
        except KoptError:
            continue
        hit = next((h for h in hits if h.chunk.path == path), None) or _enclosing(index, symbol, path, corpus)
        if hit:
            out.append(Cited(hit.cite(), symbol, corpus, f"anchor of the {note.pass_name} pass note", _excerpt(hit.text)))
    return out


def _enclosing(index: Any, symbol: str, path: str, corpus: str) -> Any:
    """The chunk of `path` that mentions a symbol defined inside a bigger chunk (a method in a class chunk)."""
    try:
        hits = index.search(symbol, corpus=corpus, k=3, mode="sparse", filters={"path": path})
    except KoptError:
        return None
    return next((h for h in hits if symbol.split("::")[-1] in h.text), None)


def search_code(finding: Finding, notes: list[PassNote], index: Any, corpus: str, k: int = 4) -> list[Cited]:
    """Hybrid search of the compiler source for the finding, in the vocabulary of its notes' anchors."""
    anchors = " ".join(s for n in notes for a in n.anchors if (s := _anchor_symbol(a["symbol"])))
    query = f"{FINDING_IDS[finding.id]}. {' '.join(n.pass_name for n in notes)} {anchors}"
    try:
        hits = index.search(query, corpus=corpus, k=k)
    except KoptError:
        return []
    return [Cited(h.cite(), h.chunk.symbol or Path(h.chunk.path).name, corpus,
                  f"retrieved for {finding.id}", _excerpt(h.text)) for h in hits]


def escalate_l4(finding: Finding, index: Any, settings: Settings | None = None, *, family: str = "triton") -> Finding:
    """The L3 finding explained from the compiler: mechanism (pass notes), cited compiler source, and the
    conditions a rewrite must satisfy. Without an ingested compiler corpus the notes still speak and one
    evidence line says which `kopt ingest` would add the citations."""
    notes = notes_for(finding, corpus=family)
    about = words(finding.message)
    evidence = list(finding.evidence)
    mechanism, conditions = [], list(finding.conditions)
    for note in notes:
        why = relevant(bullets(note.sections.get("When it gives up", "")), about, 2)
        decides = bullets(note.sections.get("What it decides", ""))[:2]
        decides = decides if decides and decides[0].endswith(":") else decides[:1]  # "It also:" needs its item
        mechanism.append(f"{note.pass_name}: {' '.join(decides)[:300]} It gives up when: {' / '.join(why)}")
        evidence.append(Evidence("L4", "pass_note", note.title, {"pass": note.pass_name, "mechanism": mechanism[-1]},
                                 section_cite(note, "When it gives up")))
        must = relevant(bullets(note.sections.get("What the source must satisfy", "")), about, 2)
        conditions += [c for c in must if c not in conditions]
    corpus, problem = compiler_corpus(index, family)
    cited: list[Cited] = []
    if corpus:
        for note in notes:
            cited += cite_anchors(note, index, corpus)
        cited += search_code(finding, notes, index, corpus)
    first: dict[str, Cited] = {}
    for c in cited:
        first.setdefault(c.cite, c)  # an anchor's reason beats the same chunk found by search
    cited = list(first.values())[:MAX_CITES]
    evidence += [c.evidence() for c in cited]
    if problem:
        evidence.append(Evidence("L4", "compiler_source", problem, {"missing": corpus is None}))
    if not notes:
        mechanism.append(f"no pass note lists {finding.id}; the cited source is the retrieval's best guess")
    message = f"{finding.message}; compiler: {' '.join(mechanism)[:400]}"
    return Finding(finding.id, "L4", message, finding.confidence, evidence, list(finding.kernel_lines), conditions,
                   list(finding.patterns))


def mechanism_of(finding: Finding) -> list[str]:
    """The mechanism lines of an L4 finding, one per pass note (empty for other levels)."""
    return [e.data["mechanism"] for e in finding.evidence if e.source == "pass_note" and "mechanism" in e.data]
