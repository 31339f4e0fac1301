"""Training pairs (query, positive chunk) mined from the compiler sources themselves (issue 19, item 2).

Each miner reads a corpus the way `kopt ingest` chunks it, so a positive is a chunk the index really holds:
doc comments and docstrings -> their definition; TableGen pass summary/description -> the pass's implementation;
lit tests (RUN pass flags + CHECK lines) -> that implementation; diagnostic strings -> the code raising them;
pass-note sections -> the code their anchors cite. No eval set is read. Output is deterministic (sorted files,
sorted rows), so a re-run on the same commits writes the same files.

    python -m kopt.ingest.pairs --triton ~/src/triton --ascend ~/src/triton-ascend --out evals/retrieval/pairs
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from kopt.errors import KoptError
from kopt.ingest.chunk import Chunk
from kopt.ingest.enrich import Registry, diagnostics_in
from kopt.ingest.manifest import LANGUAGES, MAX_BYTES, corpora_dir, load_manifest, resolve
from kopt.ingest.pipeline import chunk_file
from kopt.ingest.text_chunks import chunk_mlir, front_matter

MIN_WORDS = 4          # a query shorter than this is a name, not a question
MAX_QUERY = 600        # characters
DEFINITIONS = {"function", "class", "pass", "td_record"}
LIT_PER_PASS = 25      # lit cases kept per pass: a few passes have hundreds of tests
CHECKS_PER_CASE = 6

_IDENT = re.compile(r":\w+:|`[^`]*`|\b\w*(?:[a-z][A-Z]|_)\w*\b|\b\w+::\w+\b")
_TD_PASS_HEAD = re.compile(r"\bdef\s+(\w+)\s*:\s*(?:\w+)?Pass<\s*(?:/\*[^*]*\*/\s*)?\"([\w-]+)\"")
_TD_SUMMARY = re.compile(r"let\s+summary\s*=\s*\"((?:[^\"\\]|\\.)*)\"")
_TD_DESCRIPTION = re.compile(r"let\s+description\s*=\s*(?:\[\{(.*?)\}\]|((?:\"(?:[^\"\\]|\\.)*\"\s*)+));", re.S)
_IMPL_BASE = re.compile(r"\bimpl::(\w+)Base\b")
_GEN_DEF = re.compile(r"\bGEN_PASS_DEF_(\w+)")
_CREATE = re.compile(r"\bcreate(\w+)Pass\s*\(")
_CHECK = re.compile(r"//\s*CHECK(?:-[A-Z]+)?:\s*(.*)")
_BANNER = re.compile(r"^[\W_]*$|^[=\-*/]{5,}")
_FILECHECK_VAR = re.compile(r"\[\[(\w+)(?::[^\]]*)?\]\]|\{\{[^}]*\}\}")


@dataclass
class Corpus:
    """One corpus as `kopt ingest` would chunk it: its files' text and chunks, and its pass registry."""

    name: str
    texts: dict[str, str] = field(default_factory=dict)
    chunks: dict[str, list[Chunk]] = field(default_factory=dict)
    registry: Registry = field(default_factory=Registry)
    lit: list[Chunk] = field(default_factory=list)   # every lit case of the checkout, indexed or not

    def at(self, path: str, line: int) -> Chunk | None:
        """The narrowest chunk of path holding line."""
        hits = [c for c in self.chunks.get(path, []) if c.start_line <= line <= c.end_line]
        return min(hits, key=lambda c: (c.end_line - c.start_line, c.start_line)) if hits else None


def load_corpus(name: str, root: Path | None = None) -> Corpus:
    """Chunk every selected file of a corpus (a git checkout, or kopt's own pass notes when root is None)."""
    source = resolve(load_manifest(name), root)
    corpus = Corpus(name)
    for rel in source.files:
        if Path(rel).suffix.lower() not in LANGUAGES or source.size(rel) > MAX_BYTES:
            continue
        data = source.read(rel)
        if b"\0" in data[:8192]:
            continue
        text = data.decode("utf-8", "replace")
        corpus.texts[rel] = text
        if rel.endswith(".td"):
            corpus.registry.learn(text)
        corpus.chunks[rel] = chunk_file(rel, data, "pass_note" if name == "passes" else None)[0]
    if source.manifest.source == "git":
        listing = subprocess.run(["git", "-C", str(source.root), "ls-files", "*.mlir"], capture_output=True, text=True)
        for rel in sorted(listing.stdout.splitlines()):
            corpus.lit += chunk_mlir(rel, (source.root / rel).read_text("utf-8", "replace"))
    return corpus


def _pair(query: str, corpus: str, chunk: Chunk, source: str) -> dict | None:
    query = " ".join(query.split())[:MAX_QUERY].strip()
    name = chunk.symbol or chunk.qualname
    if len(query.split()) < MIN_WORDS or query.strip("`'\"(). ") in {name, chunk.qualname}:
        return None
    return {"query": query, "positive": {"corpus": corpus, "path": chunk.path, "symbol": chunk.qualname or chunk.symbol,
                                         "lines": [chunk.start_line, chunk.end_line]}, "source": source}


def without_identifiers(text: str) -> str:
    """Prose of a comment with code names (backticked, camelCase, snake_case, a::b) taken out."""
    return _IDENT.sub(" ", text)


# ---- miners ---------------------------------------------------------------------------------------------------

def _leading_comment(body: str) -> str:
    """The comment block a C++ chunk opens with (the doc comment of its definition)."""
    out = []
    for line in body.splitlines():
        s = line.strip()
        if s.startswith("//"):
            out.append(s.lstrip("/!<").strip())
        elif s.startswith(("/*", "*")) and not s.startswith("*/"):
            out.append(s.lstrip("/*!").rstrip("*/").strip())
        if out and _BANNER.match(out[-1]):
            out.pop()
        elif s.startswith("*/") or (not s and not out):
            continue
        else:
            break
    return " ".join(x for x in out if x)


def _docstring(body: str) -> str:
    """The first paragraph of the docstring of the definition a Python chunk holds ('' when it does not parse)."""
    try:
        tree = ast.parse(textwrap.dedent(body))
    except (SyntaxError, ValueError):
        return ""
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    doc = ast.get_docstring(defs[0]) if defs else None
    return doc.split("\n\n")[0] if doc else ""


def mine_docs(corpus: Corpus) -> list[dict]:
    """Doc comments (C++) and docstrings (Python) -> the chunk holding the definition they document."""
    pairs = []
    for path, chunks in corpus.chunks.items():
        for c in chunks:
            if c.kind not in DEFINITIONS or c.kind == "td_record":
                continue
            if c.language == "cpp":
                doc = _leading_comment(c.body)
            elif c.language == "python":
                doc = _docstring(c.body)
            else:
                continue
            if doc and "license" not in doc.lower() and "copyright" not in doc.lower():
                pairs.append(_pair(without_identifiers(doc), corpus.name, c, "docstring"))
    return pairs


def _td_passes(text: str) -> list[tuple[str, str, str]]:
    """(record, flag, summary + description) of each pass record in a TableGen file."""
    heads = list(_TD_PASS_HEAD.finditer(text))
    out = []
    for m, nxt in zip(heads, heads[1:] + [None]):
        block = text[m.end(): nxt.start() if nxt else len(text)]
        summary = _TD_SUMMARY.search(block)
        desc = _TD_DESCRIPTION.search(block)
        words = summary.group(1) if summary else ""
        if desc:
            words += ". " + (desc.group(1) if desc.group(1) is not None else " ".join(re.findall(r"\"((?:[^\"\\]|\\.)*)\"", desc.group(2))))
        out.append((m.group(1), m.group(2), words))
    return out


def implementations(corpus: Corpus) -> dict[str, Chunk]:
    """Pass record -> the C++ chunk that implements it (`impl::<Record>Base`, else GEN_PASS_DEF_, else create<X>Pass)."""
    upper = {record.upper(): record for record in corpus.registry.passes}
    found: dict[str, tuple[int, Chunk]] = {}
    for path, chunks in corpus.chunks.items():
        if not path.endswith((".cpp", ".cc")):
            continue
        for c in chunks:
            named = ([(0, r) for r in _IMPL_BASE.findall(c.body)] + [(1, upper.get(r, "")) for r in _GEN_DEF.findall(c.body)]
                     + [(2, r) for r in _CREATE.findall(c.body)])
            for rank, record in named:
                if record in corpus.registry.passes and (record not in found or rank < found[record][0]):
                    found[record] = (rank, c)
    return {record: chunk for record, (_, chunk) in found.items()}


def mine_tablegen(corpus: Corpus, impls: dict[str, Chunk]) -> list[dict]:
    """A pass's TableGen summary and description -> its implementation."""
    pairs = []
    for path, text in corpus.texts.items():
        if path.endswith(".td"):
            for record, _flag, words in _td_passes(text):
                if record in impls:
                    pairs.append(_pair(words, corpus.name, impls[record], "tablegen"))
    return pairs


def mine_lit(corpus: Corpus, impls: dict[str, Chunk]) -> list[dict]:
    """A lit case's RUN pass flags and CHECK lines -> the implementation of the (first known) pass it runs."""
    by_flag = {flag: record for record, flag in corpus.registry.passes.items()}
    pairs, per_pass = [], {}
    for c in corpus.lit:
        records = [by_flag[f] for f in c.passes if by_flag.get(f) in impls]
        checks = [_FILECHECK_VAR.sub(r"\1", m.group(1)).strip() for m in _CHECK.finditer(c.body)]
        checks = [x for x in checks if x][:CHECKS_PER_CASE]
        if not records or not checks:
            continue
        record = records[0]
        per_pass[record] = per_pass.get(record, 0) + 1
        if per_pass[record] <= LIT_PER_PASS:
            flags = " ".join("--" + f for f in c.passes)
            pairs.append(_pair(f"{flags} " + " ; ".join(checks), corpus.name, impls[record], "lit"))
    return pairs


def mine_diagnostics(corpus: Corpus) -> list[dict]:
    """Error, warning and remark strings -> the chunk that emits them."""
    pairs = []
    for path, chunks in corpus.chunks.items():
        for c in chunks:
            if c.language in ("cpp", "python") and c.kind != "mlir_test":
                pairs += [_pair(msg, corpus.name, c, "diagnostic") for msg in diagnostics_in(c.body)]
    return pairs


def _anchor_chunk(corpus: Corpus, path: str, symbol: str) -> Chunk | None:
    tail = symbol.split("::")[-1]
    hits = [c for c in corpus.chunks.get(path, []) if symbol in (c.qualname, c.symbol) or c.qualname.endswith("::" + symbol)
            or c.symbol == tail or re.search(rf"\b{re.escape(tail)}\b", c.body)]
    return min(hits, key=lambda c: (symbol not in (c.qualname, c.symbol), c.start_line)) if hits else None


def mine_pass_notes(notes: Corpus, trees: dict[str, Corpus]) -> list[dict]:
    """Each section of a pass note -> the anchors it names (the first anchor for the note's opening)."""
    pairs = []
    for path, text in notes.texts.items():
        meta, skip = front_matter(text)
        corpus = trees.get(str(meta.get("version", "")).split("@")[0])
        if corpus is None or not meta.get("anchors"):
            continue
        anchors = [(a["path"], a["symbol"]) for a in meta["anchors"] if isinstance(a, dict) and "path" in a and "symbol" in a]
        body = "\n".join(text.splitlines()[skip:])
        for n, section in enumerate(re.split(r"(?m)^## ", body)):
            named = [a for a in anchors if re.search(rf"\b{re.escape(a[1].split('::')[-1])}\b", section)]
            for anchor_path, symbol in named or (anchors[:1] if n == 0 else []):
                chunk = _anchor_chunk(corpus, anchor_path, symbol)
                if chunk is not None:
                    pairs.append(_pair(section.lstrip("# "), corpus.name, chunk, "pass_note"))
    return pairs


def mine(trees: dict[str, Corpus], notes: Corpus | None) -> dict[str, list[dict]]:
    """All miners over all corpora -> {miner: sorted, de-duplicated pairs}."""
    found: dict[str, list[dict]] = {"docstring": [], "tablegen": [], "lit": [], "diagnostic": [], "pass_note": []}
    for corpus in trees.values():
        impls = implementations(corpus)
        found["docstring"] += mine_docs(corpus)
        found["tablegen"] += mine_tablegen(corpus, impls)
        found["lit"] += mine_lit(corpus, impls)
        found["diagnostic"] += mine_diagnostics(corpus)
    if notes is not None:
        found["pass_note"] += mine_pass_notes(notes, trees)
    out = {}
    for miner, pairs in found.items():
        unique = {json.dumps(p, sort_keys=True): p for p in pairs if p is not None}
        out[miner] = [unique[k] for k in sorted(unique)]
    return out


def write(pairs: dict[str, list[dict]], out: Path) -> dict[str, int]:
    """One JSONL file per miner; returns rows per file."""
    out.mkdir(parents=True, exist_ok=True)
    for miner, rows in pairs.items():
        (out / f"{miner}.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    return {miner: len(rows) for miner, rows in pairs.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kopt.ingest.pairs", description=__doc__.split("\n\n")[0])
    ap.add_argument("--triton", type=Path, help="a Triton checkout (corpus triton)")
    ap.add_argument("--ascend", type=Path, help="a triton-ascend checkout (corpus triton-ascend)")
    ap.add_argument("--notes", type=Path, default=corpora_dir() / "passes", help="pass notes (default: kopt's own)")
    ap.add_argument("--out", type=Path, default=Path("evals/retrieval/pairs"))
    args = ap.parse_args(argv)
    try:
        trees = {name: load_corpus(name, root) for name, root in (("triton", args.triton), ("triton-ascend", args.ascend)) if root}
        if not trees:
            raise KoptError("give --triton DIR and/or --ascend DIR")
        counts = write(mine(trees, load_corpus("passes", args.notes)), args.out)
    except KoptError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for miner, rows in pairs_by_corpus(args.out).items():
        print(miner, rows)
    print("total", sum(counts.values()))
    return 0


def pairs_by_corpus(folder: Path) -> dict[str, dict[str, int]]:
    """Rows per miner and corpus in a pairs folder."""
    table: dict[str, dict[str, int]] = {}
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            corpus = json.loads(line)["positive"]["corpus"]
            table.setdefault(path.stem, {}).setdefault(corpus, 0)
            table[path.stem][corpus] += 1
    return table


if __name__ == "__main__":
    sys.exit(main())
