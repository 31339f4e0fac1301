"""doc2query through the prompt exchange: questions an LLM writes per chunk, as training pairs (issue 19, item 2).

`write` cuts the source trees as `kopt ingest` does and writes one exchange request per batch of definitions
(the chunk's code, cut to its first lines) asking for the questions whose answer is that code: a compiler
engineer's (the default voice); with `--voice kernel`, a kernel author's, who sees symptoms, launch options and
messages rather than the compiler's names; with `--voice stage`, an engineer's tracing something across the
compiler's stages, naming the stage before or after the code; with `--voice contrast`, questions that tell the code
from the neighbours hybrid search confuses it with (found in the index in KOPT_HOME). Anyone answering exchange
requests replies (first line `model: NAME`); `collect` reads the replies and writes the voice's pairs file
(`doc2query.jsonl`, `doc2query-kernel.jsonl`, `doc2query-stage.jsonl`, `doc2query-contrast.jsonl`) beside the other
miners' pairs, each row carrying the replier's model. No eval set is read.

    python -m kopt.ingest.doc2query write --triton ~/src/triton --ascend ~/src/triton-ascend --exchange DIR \
        [--voice kernel|stage|contrast]
    python -m kopt.ingest.doc2query collect --exchange DIR --out evals/retrieval/pairs

`write --new-only evals/retrieval/pairs` asks only about chunks that file has no question for (a corpus that grew);
`collect` replaces the rows of the chunks its exchange asked about and keeps the file's other rows.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from kopt.errors import KoptError
from kopt.exchange import Exchange, make_request
from kopt.ingest.chunk import Chunk
from kopt.ingest.expansion import committed_pairs
from kopt.ingest.pairs import MAX_QUERY, MIN_WORDS, _ref, load_corpus

KINDS = {"function", "class", "pass", "code", "td_record"}  # code a question can be about (not lit tests or docs)
SKIP_PREFIXES = ("test/", "docs/", "unittest/")
PER_REQUEST = 80
CODE_LINES = 30      # lines of each chunk shown
CODE_CHARS = 1200
QUESTIONS = 3
MIN_CODE_LINES = 3
_TRIVIAL = re.compile(r"^\s*(?:$|#\s*include\b|import\b|from\s+\S+\s+import\b|[\W_]*$|//|#define GEN_PASS)")
_LINE = re.compile(r"^\s*\[(\d+)\]\s*(.+?)\s*$")


def _prompt(task: str) -> str:
    """A voice's system message: what the engine is, the voice's task, the one answer format every voice parses."""
    return ("You write search questions for a code search engine over a GPU compiler's source (Triton and its Ascend "
            "port: Python front end, MLIR dialects and passes in C++, LLVM lowering, TableGen).\n"
            f'{task} Each question stands alone (no "this function").\n'
            "Answer with one line per question, `[N] question`, N the excerpt's number, and nothing else.")


SYSTEM = _prompt(f"""For each numbered code excerpt, write {QUESTIONS} different questions that a compiler engineer, \
who has not seen this code, would type to find it: what it does, where something happens, why a behaviour occurs, \
what condition triggers it. Use the words an engineer would use, not the code's identifiers: at most one of the \
{QUESTIONS} questions may name an identifier from the excerpt.""")
KERNEL_QUESTIONS = 2
SYSTEM_KERNEL = _prompt(f"""The people searching are kernel authors: they write Triton kernels in Python, not the \
compiler. They search when their kernel is slow, fails to compile, gives wrong results or behaves unexpectedly, or \
when they want to know what an option, hint or environment variable does. For each numbered code excerpt, write \
{KERNEL_QUESTIONS} different questions such a person could be asking when the answer lies in that code: the symptom \
they see, the kernel code or launch setting they wrote (tl.dot, tl.load with a mask, num_warps, num_stages, block \
pointers, autotune configs, and so on), or the message they got, in their own words. Do not use the excerpt's class, \
function, pass or variable names; name only what a kernel author writes or sees. For code no kernel author would \
search for, ask about the behaviour it causes that they could notice.""")
STAGE_QUESTIONS = 2
SYSTEM_STAGE = _prompt(f"""The people searching are tracing something through the compiler's stages: a kernel's \
Python op (tl.dot, tl.load, tl.reduce, ...) becomes Triton IR (TTIR), is converted to TritonGPU IR (TTGIR) with \
layouts and encodings, is transformed there (coalescing, pipelining, layout conversions, warp specialization, ...), \
is lowered to LLVM IR and then PTX or AMDGCN, and is compiled, cached and launched at run time; the Ascend port has \
its own path from TTIR to its backend. For each numbered code excerpt (its path says where in that pipeline it \
sits), write {STAGE_QUESTIONS} different questions whose answer includes this code, each naming a stage before or \
after it and what passes between them: the op, attribute, layout, hint, option or value that this code receives from \
an earlier stage or hands to a later one (for example: where a layout chosen for a dot operand is turned into \
shared-memory loads, or how a num_stages setting reaches the pass that multi-buffers loads). Use plain words and the \
names a kernel author or compiler engineer knows (tl.* ops, IR op names, stage names, options); at most one of the \
{STAGE_QUESTIONS} questions may name a class, function or variable of the excerpt.""")
CONTRAST_QUESTIONS = 2
NEIGHBOURS = 3  # chunks of other files shown beside each excerpt (voice contrast)
SYSTEM_CONTRAST = _prompt(f"""The engine already finds the right neighbourhood; it fails to rank first the one \
excerpt that answers, because nearby code (the pass class beside the function that decides, the op's builder beside \
its lowering, a helper of another stage) shares its words. Each numbered excerpt below comes with the neighbours the \
engine confuses it with. For each excerpt, write {CONTRAST_QUESTIONS} different questions that this excerpt answers \
and its neighbours do not: about what this code alone decides, checks, computes or emits, the condition or case it \
handles, or the symptom or message a person would see because of it. Use plain words and the names a kernel author \
or compiler engineer knows (tl.* ops, IR op names, options); at most one of the {CONTRAST_QUESTIONS} questions may \
name a class, function or variable of the excerpt.""")
VOICES = {"compiler": (SYSTEM, "doc2query"), "kernel": (SYSTEM_KERNEL, "doc2query-kernel"),
          "stage": (SYSTEM_STAGE, "doc2query-stage"), "contrast": (SYSTEM_CONTRAST, "doc2query-contrast")}


def selected(corpus_chunks: dict[str, list[Chunk]]) -> list[Chunk]:
    """The definitions a question can be about, in a fixed order."""
    return [c for rel in sorted(corpus_chunks) if not rel.startswith(SKIP_PREFIXES)
            for c in corpus_chunks[rel] if c.kind in KINDS and _substantial(c.text)]


def _substantial(text: str) -> bool:
    """At least MIN_CODE_LINES lines that are not includes, imports or lone punctuation (`};`, a banner)."""
    return sum(1 for line in text.splitlines() if not _TRIVIAL.match(line)) >= MIN_CODE_LINES


def excerpt(chunk: Chunk) -> str:
    lines = chunk.text.strip("\n").splitlines()
    if lines and lines[0].startswith(f"{chunk.path}:"):  # the chunk's own header line: the request names it already
        lines = lines[1:]
    text = "\n".join(lines[:CODE_LINES])[:CODE_CHARS]
    return text + ("\n..." if len(text) < len("\n".join(lines)) else "")


def requests_for(corpus: str, chunks: list[Chunk], per_request: int = PER_REQUEST, voice: str = "compiler",
                 neighbours: dict[tuple, list[str]] | None = None) -> list[tuple[dict, list[dict]]]:
    """(exchange request, the chunk references its numbers stand for) per batch; `neighbours` (voice contrast): per
    chunk key, the lines that name the chunks it is confused with."""
    system, purpose = VOICES[voice]
    out = []
    for start in range(0, len(chunks), per_request):
        batch = chunks[start:start + per_request]
        body = "\n\n".join(f"[{k}] {c.path} ({c.kind} {c.qualname or c.symbol or ''})\n```\n{excerpt(c)}\n```"
                           + _neighbour_lines((neighbours or {}).get(_key(_ref(corpus, c))))
                           for k, c in enumerate(batch, 1))
        messages = [{"role": "system", "content": system},
                    {"role": "user", "content": f"{len(batch)} excerpts from {corpus}:\n\n{body}"}]
        request = make_request(messages, None, {"purpose": purpose, "corpus": corpus,
                                                "batch": start // per_request + 1})
        out.append((request, [_ref(corpus, c) for c in batch]))
    return out


def _neighbour_lines(lines: list[str] | None) -> str:
    return "\nNeighbours it is confused with:\n" + "\n".join(f"- {line}" for line in lines) if lines else ""


def neighbours(corpus: str, chunks: list[Chunk], pairs: Path, k: int = NEIGHBOURS) -> dict[tuple, list[str]]:
    """Per chunk that has a doc2query question in `pairs`: the first k hybrid hits of other files for that question,
    over the corpus as the index in KOPT_HOME holds it, as `path (kind name): its first line`."""
    from kopt.config import load_settings
    from kopt.index import open_index

    first: dict[tuple, str] = {}
    for row in _rows(pairs / f"{VOICES['compiler'][1]}.jsonl"):
        first.setdefault(_key(row["positive"]), row["query"])
    if not first:
        raise KoptError(f"{pairs}: no doc2query.jsonl to find neighbours with (voice contrast)")
    index, out = open_index(load_settings()), {}
    try:
        for chunk in chunks:
            key = _key(_ref(corpus, chunk))
            if key in first:
                hits = [h for h in index.search(first[key], corpus=corpus, k=10) if h.chunk.path != chunk.path]
                out[key] = [f"{h.chunk.path} ({h.chunk.kind} {h.chunk.qualname or h.chunk.symbol or ''}): "
                            f"{_first_line(h.text)}" for h in hits[:k]]
    finally:
        index.close()
    return out


def _first_line(text: str) -> str:
    """A hit's first line of code (its header line, blank lines and includes skipped), cut to 120 characters."""
    lines = [line.strip() for line in text.splitlines()[1:] if not _TRIVIAL.match(line)]
    return (lines[0] if lines else "")[:120]


def _key(ref: dict) -> tuple:
    return ref["corpus"], ref["path"], ref["lines"][0], ref["lines"][1]


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


def write(trees: dict[str, Path], folder: Path, per_request: int = PER_REQUEST, voice: str = "compiler",
          new_only: Path | None = None, pairs: Path | None = None) -> int:
    """Write every batch's request and `batches.json` (the voice; request id -> chunk references); returns the count.
    With `new_only` (a pairs folder), chunks that already have a question of this voice there are left out."""
    if new_only and not new_only.is_dir():
        raise KoptError(f"{new_only}: no such pairs folder (--new-only)")
    asked = {_key(r["positive"]) for r in _rows(new_only / f"{VOICES[voice][1]}.jsonl")} if new_only else set()
    exchange, batches = Exchange(folder), {}
    for name, root in trees.items():
        chunks = [c for c in selected(load_corpus(name, root).chunks) if _key(_ref(name, c)) not in asked]
        near = neighbours(name, chunks, pairs or committed_pairs()) if voice == "contrast" else None
        for request, refs in requests_for(name, chunks, per_request, voice, near):
            exchange.write(request)
            batches[request["id"]] = refs
    (folder / "batches.json").write_text(json.dumps({"voice": voice, "requests": batches}, indent=1, sort_keys=True) + "\n")
    return len(batches)


def parse(text: str, refs: list[dict], model: str, source: str = "doc2query") -> list[dict]:
    """Pair rows from one reply: `[N] question` lines; other lines, unknown numbers and short questions dropped."""
    rows, seen = [], set()
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m or not 1 <= int(m.group(1)) <= len(refs):
            continue
        query = " ".join(m.group(2).split())[:MAX_QUERY]
        key = (query.lower(), int(m.group(1)))
        if len(query.split()) >= MIN_WORDS and key not in seen:
            seen.add(key)
            rows.append({"query": query, "positive": refs[int(m.group(1)) - 1], "source": source, "model": model})
    return rows


def collect(folder: Path, out: Path) -> tuple[int, int, int]:
    """The voice's pairs file (doc2query.jsonl, doc2query-kernel.jsonl, ...) from the replies there; (requests,
    answered, rows). Requests without a reply wait."""
    if not (folder / "batches.json").is_file():
        raise KoptError(f"{folder}: no batches.json here; `write` makes the requests and it first")
    written = json.loads((folder / "batches.json").read_text())
    batches, source = written["requests"], VOICES[written["voice"]][1]
    exchange, rows, answered = Exchange(folder), [], 0
    for rid in sorted(batches):
        as_json, _, reply, _ = exchange.paths(rid)
        if not reply.is_file():
            continue
        got = exchange.ask(json.loads(as_json.read_text()))
        rows += parse(got.text, batches[rid], got.model, source)
        answered += 1
    asked = {_key(ref) for refs in batches.values() for ref in refs}
    rows += [r for r in _rows(out / f"{source}.jsonl") if _key(r["positive"]) not in asked]  # other chunks' rows stay
    rows.sort(key=lambda r: (r["positive"]["corpus"], r["positive"]["path"], r["positive"]["lines"], r["query"]))
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{source}.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    return len(batches), answered, len(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kopt.ingest.doc2query", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    w = sub.add_parser("write", help="write the exchange requests")
    w.add_argument("--triton", type=Path)
    w.add_argument("--ascend", type=Path)
    w.add_argument("--per-request", type=int, default=PER_REQUEST)
    w.add_argument("--voice", choices=sorted(VOICES), default="compiler",
                   help="whose questions: a compiler engineer's, a kernel author's, an engineer's tracing code across "
                   "stages, or ones that tell a chunk from its neighbours (the index in KOPT_HOME finds them)")
    w.add_argument("--new-only", type=Path, metavar="PAIRS_DIR",
                   help="only chunks this pairs folder has no question of this voice for")
    w.add_argument("--pairs", type=Path, metavar="PAIRS_DIR", help="voice contrast: the folder whose doc2query.jsonl "
                   "questions find each chunk's neighbours (default: the committed evals/retrieval/pairs)")
    c = sub.add_parser("collect", help="read the replies into the voice's pairs file")
    c.add_argument("--out", type=Path, default=Path("evals/retrieval/pairs"))
    for p in (w, c):
        p.add_argument("--exchange", type=Path, required=True, help="the exchange folder")
    args = ap.parse_args(argv)
    try:
        if args.step == "write":
            trees = {name: root for name, root in (("triton", args.triton), ("triton-ascend", args.ascend)) if root}
            if not trees:
                raise KoptError("give --triton DIR and/or --ascend DIR")
            count = write(trees, args.exchange, args.per_request, args.voice, args.new_only, args.pairs)
            print(f"{count} requests in {args.exchange}")
        else:
            total, answered, rows = collect(args.exchange, args.out)
            print(f"{answered} of {total} requests answered: {rows} pairs in {args.out}")
    except (KoptError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
