"""Chunking of MLIR lit tests, Markdown/RST documents and pattern catalogs.

Lit tests split on `// -----` (each case is one chunk) and every case carries the pass flags of
the file's RUN lines. Documents split by section, with the heading path as the qualified name;
Markdown front matter (the pass notes' `pass`, `flags`, `anchors`, `findings`) lands in metadata.
Pattern catalogs give one chunk per pattern entry.
"""

from __future__ import annotations

import re

import yaml

from kopt.ingest.chunk import Chunk

_SPLIT = re.compile(r"^\s*//\s*-{5,}\s*$")
_RUN = re.compile(r"^\s*//\s*RUN:(.*)$")
_FLAG = re.compile(r"(?<![\w-])--?([a-z][a-z0-9]*(?:-[a-z0-9]+)+|[a-z][a-z0-9]+)(?:=(\"[^\"]*\"|'[^']*'|\S+))?")
_NOT_PASSES = {"split-input-file", "verify-diagnostics", "allow-unregistered-dialect", "check-prefix", "check-prefixes",
               "mlir-print-ir-after-all", "mlir-print-debuginfo", "dump-input", "implicit-check-not", "o", "debug",
               "mlir-disable-threading", "strict-whitespace", "input-file", "enable-var-scope", "match-full-lines"}
_FUNC = re.compile(r"\bfunc(?:\.func)?\s+(?:public\s+|private\s+)?@([\w$.]+)")


def run_flags(source: str) -> list[str]:
    """Pass flags named in the RUN lines (continuations joined), minus lit/FileCheck options."""
    run = " ".join(m.group(1).rstrip("\\") for line in source.splitlines() if (m := _RUN.match(line)))
    flags = []
    for cmd in run.split("|"):
        if "FileCheck" in cmd:
            continue
        for m in _FLAG.finditer(cmd):
            name = m.group(1)
            if name not in _NOT_PASSES and name not in flags:
                flags.append(name)
    return flags


def chunk_mlir(path: str, source: str) -> list[Chunk]:
    flags = run_flags(source)
    lines = source.splitlines()
    cuts = [0] + [i + 1 for i, line in enumerate(lines) if _SPLIT.match(line)] + [len(lines) + 1]
    out = []
    for n, (a, b) in enumerate(zip(cuts, cuts[1:]), 1):
        rows = [i for i in range(a, min(b - 1, len(lines))) if lines[i].strip() and not _RUN.match(lines[i])
                and not _SPLIT.match(lines[i])]
        if not rows:
            continue
        start, end = rows[0] + 1, rows[-1] + 1
        body = "\n".join(lines[start - 1 : end])
        funcs = _FUNC.findall(body)
        symbol = funcs[0] if funcs else ""
        out.append(Chunk(path, "mlir", "mlir_test", start, end, body, symbol, f"case {n}" + (f" @{symbol}" if symbol else ""),
                         "RUN: " + " ".join("--" + f for f in flags) if flags else "", funcs, list(flags)))
    return out


# ---- documents ----------------------------------------------------------------------------

_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_RST_RULE = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")


def front_matter(source: str) -> tuple[dict, int]:
    """YAML front matter between leading `---` lines, and how many lines it takes."""
    lines = source.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, 0
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            try:
                data = yaml.safe_load("\n".join(lines[1:i])) or {}
            except yaml.YAMLError:
                return {}, 0
            return (data if isinstance(data, dict) else {}), i + 1
    return {}, 0


def _as_list(value) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [":".join(str(x) for x in v.values()) if isinstance(v, dict) else str(v) for v in items]


def chunk_document(path: str, source: str, language: str, kind: str = "doc") -> list[Chunk]:
    meta, skip = front_matter(source) if language == "markdown" else ({}, 0)
    lines = source.splitlines()
    heads: list[tuple[int, int, str]] = []  # (row, level, title)
    fence = False
    rst_levels: list[str] = []
    for i, line in enumerate(lines):
        if i < skip:
            continue
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if fence:
            continue
        if language == "markdown" and (m := _MD_HEADING.match(line)):
            heads.append((i, len(m.group(1)), m.group(2)))
        elif (language == "rst" and i + 1 < len(lines) and line.strip() and (m := _RST_RULE.match(lines[i + 1]))
              and len(lines[i + 1].strip()) >= len(line.strip())):
            if m.group(1) not in rst_levels:
                rst_levels.append(m.group(1))
            heads.append((i, rst_levels.index(m.group(1)) + 1, line.strip()))
    starts = [skip] + [h[0] for h in heads if h[0] > skip]
    titles: dict[int, str] = {}
    trail: list[tuple[int, str]] = []
    for row, level, title in heads:
        trail = [t for t in trail if t[0] < level] + [(level, title)]
        titles[row] = " > ".join(t for _, t in trail)
    passes = _as_list(meta.get("pass")) + _as_list(meta.get("passes"))
    extra = {k: _as_list(meta.get(k)) for k in ("flags", "anchors", "findings") if meta.get(k)}
    out = []
    for a, b in zip(starts, starts[1:] + [len(lines)]):
        rows = [i for i in range(a, b) if lines[i].strip()]
        if not rows:
            continue
        start, end = rows[0] + 1, rows[-1] + 1
        title = titles.get(a, "")
        out.append(Chunk(path, language, kind, start, end, "\n".join(lines[start - 1 : end]), title.split(" > ")[-1],
                         title, "", [], passes + _as_list(meta.get("flags")), dict(extra)))
    return out


# ---- pattern catalogs ---------------------------------------------------------------------

def chunk_patterns(path: str, source: str) -> list[Chunk]:
    """One chunk per top-level pattern entry (a YAML list item or document with an `id`)."""
    try:
        docs = [d for d in yaml.safe_load_all(source) if d]
    except yaml.YAMLError as exc:
        raise ValueError(f"not valid YAML: {exc}") from exc
    entries = []
    for doc in docs:
        if isinstance(doc, dict) and isinstance(doc.get("patterns"), list):
            entries.extend(doc["patterns"])
        elif isinstance(doc, list):
            entries.extend(doc)
        else:
            entries.append(doc)
    lines = source.splitlines()
    ids = [str(e["id"]) for e in entries if isinstance(e, dict) and e.get("id")]
    starts = []
    for pid in ids:
        row = _id_row(lines, pid)
        while row > 0 and lines[row - 1].lstrip().startswith("#"):
            row -= 1  # a comment above an entry belongs to it
        starts.append(row)
    out = []
    for n, (pid, start) in enumerate(zip(ids, starts)):
        entry = next(e for e in entries if isinstance(e, dict) and str(e.get("id")) == pid)
        end = (starts[n + 1] if n + 1 < len(starts) else len(lines)) - 1
        while end > start and not lines[end].strip():
            end -= 1
        symptoms = entry.get("symptoms")
        findings = _as_list(symptoms.get("findings")) if isinstance(symptoms, dict) else []
        title = str(entry.get("title", ""))
        out.append(Chunk(path, "yaml", "pattern", start + 1, end + 1, "\n".join(lines[start : end + 1]), pid, pid, title,
                         [pid], [], {"family": str(entry.get("family", "")), **({"findings": findings} if findings else {})}))
    return out


def _id_row(lines: list[str], pid: str) -> int:
    pat = re.compile(rf"^\s*(-\s*)?id:\s*['\"]?{re.escape(pid)}['\"]?\s*$")
    return next((i for i, line in enumerate(lines) if pat.match(line)), 0)
