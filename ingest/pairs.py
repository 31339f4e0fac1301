"""Training pairs (query, positive chunk) mined from the compiler sources themselves (issue 19, item 2).

Each miner reads a corpus the way `kopt ingest` chunks it, so a positive is a chunk the index really holds:
doc comments and docstrings -> their definition; TableGen pass summary/description -> the pass's implementation;
lit tests (RUN pass flags + CHECK lines) -> that implementation; diagnostic strings -> the code raising them;
pass-note paragraphs -> the code their anchors cite; commit messages -> the definitions their diff changed. No eval set is read. Output is deterministic (sorted files,
sorted rows), so a re-run on the same commits writes the same files.

    python -m kopt.ingest.pairs --triton ~/src/triton --ascend ~/src/triton-ascend --out evals/retrieval/pairs
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import re
import subprocess
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kopt.errors import KoptError
from kopt.index.tokenize import tokens
from kopt.ingest.chunk import Chunk
from kopt.ingest.enrich import Registry, diagnostics_in
from kopt.ingest.manifest import LANGUAGES, MAX_BYTES, corpora_dir, load_manifest, resolve
from kopt.ingest.pipeline import chunk_file
from kopt.ingest.text_chunks import chunk_mlir, front_matter

MIN_WORDS = 4          # a query shorter than this is a name, not a question
MAX_QUERY = 600        # characters
DEFINITIONS = {"function", "class", "pass"}   # chunk kinds a doc comment can document
LIT_PER_PASS = 25      # lit cases kept per pass: a few passes have hundreds of tests
CHECKS_PER_CASE = 6

_IDENT = re.compile(r":\w+:|[@\\]\w+\b|`[^`]*`|\b\w*(?:[a-z][A-Z]|_)\w*\b|\b\w+::\w+\b")
_TD_PASS_HEAD = re.compile(r"\bdef\s+(\w+)\s*:\s*(?:\w+)?Pass<\s*(?:/\*[^*]*\*/\s*)?\"([\w-]+)\"")
_TD_SUMMARY = re.compile(r"let\s+summary\s*=\s*\"((?:[^\"\\]|\\.)*)\"")
_TD_DESCRIPTION = re.compile(r"let\s+description\s*=\s*(?:\[\{(.*?)\}\]|((?:\"(?:[^\"\\]|\\.)*\"\s*)+));", re.S)
_IMPL_BASE = re.compile(r"\bimpl::(\w+)Base\b")
_GEN_DEF = re.compile(r"\bGEN_PASS_DEF_(\w+)")
_CREATE = re.compile(r"\bcreate(\w+)Pass\s*\(")
_UPSTREAM_FLAGS = {"canonicalize", "cse", "symbol-dce", "inline", "sccp", "loop-invariant-code-motion", "convert-scf-to-cf",
                   "reconcile-unrealized-casts", "convert-func-to-llvm", "convert-cf-to-llvm", "convert-arith-to-llvm",
                   "allow-unregistered-dialect", "split-input-file", "verify-each", "canonicalize-options"}
_CHECK = re.compile(r"//\s*CHECK(?:-[A-Z]+)?:\s*(.*)")
_NOT_DOC = re.compile(r"(?i)license|copyright|https?://|^\s*(?:TODO|FIXME|XXX|NOLINT|clang-format)")  # no description
_BANNER = re.compile(r"^[\W_]*$|^[=\-*/]{5,}")
_FILECHECK_VAR = re.compile(r"\[\[(\w+)(?::[^\]]*)?\]\]|\{\{[^}]*\}\}")
# Commit messages: a commit is a pair source when it is a person's focused change to code the index holds.
COMMIT_MAX_FILES = 20        # a wider commit is a refactor, a move or a merge of many changes: no one answer
COMMIT_MAX_LINES = 600       # changed code lines (added + removed)
COMMIT_MAX_POSITIVES = 3     # changed definitions a message may point at; more and it names none of them well
_CODE_GLOBS = ("*.cpp", "*.cc", "*.cxx", "*.c", "*.h", "*.hpp", "*.cu", "*.cuh", "*.py", "*.td")
_BOT = re.compile(r"(?i)\bbot\b|\[bot\]|-bot\b|dependabot|pre-commit|github-actions")
_COMMIT_NOISE = re.compile(r"(?i)^\s*(?:revert|merge\b|\[?release|bump\b|update\s+(?:llvm|submodule)|cherry-?pick)")
_PR_NUMBER = re.compile(r"\s*\(#\d+\)")
_MESSAGE_END = re.compile(r"(?m)^\s*(?:<!--|#+\s*New contributor declaration|-{3,}\s*$|(?:Description: )?The core Triton is a)")
_TRAILER = re.compile(r"(?i)^\s*(?:[\w-]+-by:|- \[[ x]\]|https?://\S+$|Pull Request resolved:|Differential Revision:"
                      r"|/approve|# message auto-generated|!\d+ merge \S+ into|See merge request)")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)$")
_DEFINED = re.compile(r"^\+(?:\s*(?:async\s+)?(?:def|class)\s+(\w+)|(?!(?:return|if|for|while|switch)\b)[A-Za-z_][\w:<>,*& ]*?[\s*&]([\w:~]+)\s*\()")


@dataclass
class Corpus:
    """One corpus as `kopt ingest` would chunk it: its files' text and chunks, and its pass registry."""

    name: str
    texts: dict[str, str] = field(default_factory=dict)
    chunks: dict[str, list[Chunk]] = field(default_factory=dict)
    registry: Registry = field(default_factory=Registry)
    lit: list[Chunk] = field(default_factory=list)   # every lit case of the checkout, indexed or not


def load_corpus(name: str, root: Path | None = None) -> Corpus:
    """Chunk every selected file of a corpus as `kopt ingest` does; for a checkout, also every lit case in it."""
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
    return {"query": query, "positive": _ref(corpus, chunk), "source": source}


def without_identifiers(text: str) -> str:
    """Prose of a comment with code names (backticked, camelCase, snake_case, a::b) taken out."""
    return _IDENT.sub(" ", text)


# ---- miners ---------------------------------------------------------------------------------------------------

def _leading_comment(body: str) -> str:
    """The comment block right above the definition a C++ chunk opens with, banner lines left out."""
    out = []
    for line in body.splitlines():
        s = line.strip()
        if s.startswith("//"):
            out.append(s.lstrip("/!<").strip())
        elif s.startswith(("/*", "*")) and not s.startswith("*/"):
            out.append(s.lstrip("/*!").rstrip("*/").strip())
        elif not s and out:
            return ""     # a comment a blank line away documents the file or section, not this definition
        elif s and not s.startswith("*/"):
            break
    return " ".join(x for x in out if x and not _BANNER.match(x))


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
    for chunks in corpus.chunks.values():
        for c in chunks:
            if c.kind not in DEFINITIONS or ("(part " in c.qualname and "(part 1/" not in c.qualname):
                continue     # a later part of a long body opens mid-function: its comment documents no definition
            if c.language == "cpp":
                doc = _leading_comment(c.body)
            elif c.language == "python":
                doc = _docstring(c.body)
            else:
                continue
            if doc and not _NOT_DOC.search(doc):
                pairs.append(_pair(without_identifiers(doc), corpus.name, c, "docstring"))
    return pairs


def _td_passes(text: str) -> list[tuple[str, str]]:
    """(record, summary + description) of each pass record in a TableGen file."""
    heads = list(_TD_PASS_HEAD.finditer(text))
    out = []
    for m, nxt in zip(heads, heads[1:] + [None]):
        block = text[m.end(): nxt.start() if nxt else len(text)]
        summary, desc = _TD_SUMMARY.search(block), _TD_DESCRIPTION.search(block)
        words = summary.group(1) if summary else ""
        if desc and desc.group(1) is not None:
            words += ". " + desc.group(1)
        elif desc:   # a description written as adjacent string literals
            words += ". " + " ".join(re.findall(r"\"((?:[^\"\\]|\\.)*)\"", desc.group(2)))
        out.append((m.group(1), words))
    return out


def implementations(corpus: Corpus) -> dict[str, Chunk]:
    """Pass record -> the C++ chunk that implements it (`impl::<Record>Base`, else GEN_PASS_DEF_, else create<X>Pass)."""
    upper = {record.upper(): record for record in corpus.registry.passes}
    found: dict[str, tuple[int, Chunk]] = {}
    for path, chunks in corpus.chunks.items():
        if not path.endswith((".cpp", ".cc")):
            continue
        for c in chunks:
            named = ([(0, r) for r in _IMPL_BASE.findall(c.body)]
                     + [(1, upper.get(r, "")) for r in _GEN_DEF.findall(c.body)]
                     + [(2, r) for r in _CREATE.findall(c.body)])
            for rank, record in named:
                if record in corpus.registry.passes and (record not in found or rank < found[record][0]):
                    found[record] = (rank, c)
    return {record: _run_on_operation(corpus, chunk) for record, (_, chunk) in found.items()}


def _run_on_operation(corpus: Corpus, head: Chunk) -> Chunk:
    """The pass's `runOnOperation` chunk when the class was cut into members (its head alone is a few lines)."""
    cls = head.qualname.split(",")[0].split(" (part")[0].strip()
    tail = "::" + cls.split("::")[-1] + "::runOnOperation"
    for c in corpus.chunks.get(head.path, []):
        if any(name.strip().endswith(tail) or name.strip() == tail[2:] for name in c.qualname.split(",")):
            return c
    return head


def mine_tablegen(corpus: Corpus, impls: dict[str, Chunk]) -> list[dict]:
    """A pass's TableGen summary and description -> its implementation."""
    pairs = []
    for path, text in corpus.texts.items():
        if path.endswith(".td"):
            for record, words in _td_passes(text):
                if record in impls:
                    pairs.append(_pair(words, corpus.name, impls[record], "tablegen"))
    return pairs


def mine_lit(corpus: Corpus, impls: dict[str, Chunk]) -> list[dict]:
    """A lit case's RUN pass flags and CHECK lines -> the implementation of the last pass it runs (the earlier ones
    set the input up: allocate-shared-memory before the LLVM lowering); upstream MLIR passes do not count."""
    by_flag = {flag: record for record, flag in corpus.registry.passes.items()}
    pairs, per_pass = [], {}
    for c in corpus.lit:
        passes = [f for f in c.passes if f not in _UPSTREAM_FLAGS and not f.startswith("mlir-")]
        if not passes or any(by_flag.get(f) not in impls for f in passes):
            continue     # a pass this corpus does not hold runs too (an AMD lowering, a test-only pass)
        checks = [_FILECHECK_VAR.sub(r"\1", m.group(1)).strip() for m in _CHECK.finditer(c.body)]
        checks = [x for x in checks if x][:CHECKS_PER_CASE]
        if not checks:
            continue
        record = by_flag[passes[-1]]
        per_pass[record] = per_pass.get(record, 0) + 1
        if per_pass[record] <= LIT_PER_PASS:
            flags = " ".join("--" + f for f in c.passes)
            pairs.append(_pair(f"{flags} " + " ; ".join(checks), corpus.name, impls[record], "lit"))
    return pairs


def mine_diagnostics(corpus: Corpus) -> list[dict]:
    """Error, warning and remark strings -> the chunk that emits them."""
    pairs = []
    for chunks in corpus.chunks.values():
        for c in chunks:
            if c.language in ("cpp", "python") and c.kind != "mlir_test":
                pairs += [_pair(msg, corpus.name, c, "diagnostic") for msg in diagnostics_in(c.body)]
    return pairs


def _anchor_chunk(corpus: Corpus, path: str, symbol: str) -> Chunk | None:
    tail = symbol.split("::")[-1]
    hits = [c for c in corpus.chunks.get(path, []) if symbol in (c.qualname, c.symbol) or c.qualname.endswith("::" + symbol)
            or c.symbol == tail or re.search(rf"\b{re.escape(tail)}\b", c.body)]
    return min(hits, key=lambda c: (symbol not in (c.qualname, c.symbol), c.start_line)) if hits else None


def _paragraphs(markdown: str) -> list[str]:
    """Prose paragraphs of a note, the title joined to the first; headings, tables and code blocks left out."""
    title, out = "", []
    for block in re.split(r"\n\s*\n", re.sub(r"(?ms)^```.*?^```", "", markdown)):
        lines = [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("|")]
        title = title or next((line[2:] for line in lines if line.startswith("# ")), "")
        prose = [line for line in lines if not line.startswith("#")]
        if prose:
            out.append(" ".join(prose))
    if out and title:
        out[0] = f"{title}. {out[0]}"
    return out


def mine_pass_notes(notes: Corpus, trees: dict[str, Corpus]) -> list[dict]:
    """Each paragraph of a pass note -> the anchors it names (the note's opening paragraph -> its first anchor)."""
    pairs = []
    for text in notes.texts.values():
        meta, skip = front_matter(text)
        corpus = trees.get(str(meta.get("version", "")).split("@")[0])
        if corpus is None or not meta.get("anchors"):
            continue
        anchors = [(a["path"], a["symbol"]) for a in meta["anchors"] if isinstance(a, dict) and "path" in a and "symbol" in a]
        for n, paragraph in enumerate(_paragraphs("\n".join(text.splitlines()[skip:]))):
            named = [a for a in anchors if re.search(rf"\b{re.escape(a[1].split('::')[-1])}\b", paragraph)]
            for anchor_path, symbol in named or (anchors[:1] if n == 0 else []):
                chunk = _anchor_chunk(corpus, anchor_path, symbol)
                if chunk is not None:
                    pairs.append(_pair(paragraph, corpus.name, chunk, "pass_note"))
    return pairs


def commit_message(message: str) -> str:
    """A commit's subject and body as prose: no PR number, PR template, checklist, trailers or bare links."""
    body = _MESSAGE_END.split(_PR_NUMBER.sub("", message), maxsplit=1)[0]
    lines = [line.strip() for line in body.splitlines() if line.strip() and not _TRAILER.match(line)]
    return " ".join(dict.fromkeys(lines))   # triton-ascend's merge tool repeats the subject


def _commits(root: Path) -> list[tuple[str, str, str]]:
    """(author, message, code diff with no context lines) of each non-merge commit up to HEAD, newest first."""
    done = subprocess.run(["git", "-C", str(root), "log", "-p", "-U0", "--no-merges", "--no-renames", "--no-color",
                           "--format=%x00%an <%ae>%x1f%B%x1e", "HEAD", "--", *_CODE_GLOBS],
                          capture_output=True, text=True, errors="replace")
    if done.returncode:
        raise KoptError(f"git log failed in {root}: {done.stderr.strip()[:200]}")
    out = []
    for record in done.stdout.split("\0")[1:]:
        head, _, diff = record.partition("\x1e")
        author, _, message = head.partition("\x1f")
        out.append((author, message, diff))
    return out


def changed_definitions(corpus: Corpus, diff: str) -> list[Chunk] | None:
    """The definition chunks (as indexed now) a diff changed, found by name: the enclosing function git names in
    each hunk header and the definitions the hunk adds. None for a commit too big to have one subject."""
    files, lines, names = 0, 0, {}
    path = None
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            files += 1
            path = None
        elif line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else None
        elif path is None or line.startswith("--- "):
            continue
        elif hunk := _HUNK.match(line):
            names.setdefault(path, set()).update(re.findall(r"\w+", hunk.group(1)))
        elif line[:1] in "+-":
            lines += 1
            if defined := _DEFINED.match(line):
                names.setdefault(path, set()).add((defined.group(1) or defined.group(2)).split("::")[-1])
    if files > COMMIT_MAX_FILES or lines > COMMIT_MAX_LINES:
        return None
    found = []
    for path, words in sorted(names.items()):
        for c in corpus.chunks.get(path, []):
            if (c.kind in DEFINITIONS and c.symbol in words
                    and ("(part " not in c.qualname or "(part 1/" in c.qualname)):
                found.append(c)
    return found


def mine_commits(corpus: Corpus, root: Path) -> list[dict]:
    """A person's commit message (subject + body) -> each definition its diff changed, if it changed at most
    COMMIT_MAX_POSITIVES of them; merges, bots, reverts, releases and huge commits are skipped."""
    pairs = []
    for author, message, diff in _commits(root):
        if _BOT.search(author) or _COMMIT_NOISE.match(message):
            continue
        changed = changed_definitions(corpus, diff)
        if changed and len(changed) <= COMMIT_MAX_POSITIVES:
            query = commit_message(message)
            pairs += [_pair(query, corpus.name, c, "commit") for c in changed]
    return pairs


def mine(trees: dict[str, Corpus], notes: Corpus, roots: dict[str, Path] | None = None) -> dict[str, list[dict]]:
    """All miners over all corpora -> {miner: sorted, de-duplicated pairs}."""
    found: dict[str, list[dict]] = {"docstring": [], "tablegen": [], "lit": [], "diagnostic": [], "pass_note": [],
                                    "commit": []}
    for name, corpus in trees.items():
        impls = implementations(corpus)
        found["docstring"] += mine_docs(corpus)
        found["tablegen"] += mine_tablegen(corpus, impls)
        found["lit"] += mine_lit(corpus, impls)
        found["diagnostic"] += mine_diagnostics(corpus)
        if (roots or {}).get(name) is not None:
            found["commit"] += mine_commits(corpus, roots[name])
    found["pass_note"] += mine_pass_notes(notes, trees)
    out = {}
    for miner, pairs in found.items():
        unique = {json.dumps(p, sort_keys=True): p for p in pairs if p is not None}
        out[miner] = [unique[k] for k in sorted(unique)]
    return out


def add_hard_negatives(pairs: dict[str, list[dict]], trees: dict[str, Corpus], n: int) -> None:
    """Give each pair the n chunks of its corpus that BM25 ranks highest for its query, other than any positive
    of that query: negatives a lexical retriever confuses with the answer (the trainer may add dense ones)."""
    positives: dict[str, set] = {}
    for row in (r for rows in pairs.values() for r in rows):
        positives.setdefault(row["query"], set()).add((row["positive"]["path"], tuple(row["positive"]["lines"])))
    for name, corpus in trees.items():
        docs = [c for path in sorted(corpus.chunks) for c in corpus.chunks[path] if c.kind != "mlir_test"]
        counts = [Counter(tokens(c.text)) for c in docs]
        avgdl = sum(sum(c.values()) for c in counts) / max(len(counts), 1)
        postings: dict[str, list[tuple[int, float]]] = {}
        for i, tf in enumerate(counts):
            norm = 1.2 * (0.25 + 0.75 * sum(tf.values()) / avgdl)
            for term, k in tf.items():
                postings.setdefault(term, []).append((i, k * 2.2 / (k + norm)))
        for row in (r for rows in pairs.values() for r in rows if r["positive"]["corpus"] == name):
            scores: Counter = Counter()
            for term in set(tokens(row["query"])):
                idf = math.log(1 + (len(docs) - len(postings.get(term, ())) + 0.5) / (len(postings.get(term, ())) + 0.5))
                for i, w in postings.get(term, ()):
                    scores[i] += idf * w
            taken = positives[row["query"]]
            ranked = sorted(scores, key=lambda i: (-scores[i], i))
            row["negatives"] = [_ref(name, docs[i]) for i in ranked
                                if (docs[i].path, (docs[i].start_line, docs[i].end_line)) not in taken][:n]


def _ref(corpus: str, chunk: Chunk) -> dict:
    return {"corpus": corpus, "path": chunk.path, "symbol": chunk.qualname or chunk.symbol,
            "lines": [chunk.start_line, chunk.end_line]}


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
    ap.add_argument("--negatives", type=int, default=0, metavar="N", help="add N BM25 hard negatives to each pair")
    ap.add_argument("--out", type=Path, default=Path("evals/retrieval/pairs"))
    args = ap.parse_args(argv)
    try:
        roots = {"triton": args.triton, "triton-ascend": args.ascend}
        trees = {name: load_corpus(name, root) for name, root in roots.items() if root}
        if not trees:
            raise KoptError("give --triton DIR and/or --ascend DIR")
        pairs = mine(trees, load_corpus("passes", args.notes), {name: roots[name] for name in trees})
        if args.negatives:
            add_hard_negatives(pairs, trees, args.negatives)
        counts = write(pairs, args.out)
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
