"""Index: hybrid retrieval over the ingested corpora, plus exact lookups.

Hybrid search runs a dense and a BM25 query per collection, and a dense one over the vectors of the questions
document expansion gives a chunk, and fuses them in Python with a weighted sum of normalised scores (BM25 / its best
score, cosine min-max over the candidates).
On compiler source BM25 is the stronger signal and equal-weight RRF drags it down;
rank fusion also lets an undecided dense list (cosines within a few hundredths) outvote a BM25
hit on a rare identifier, where score fusion keeps the dense vote as small as its confidence.
BM25 queries also carry the code vocabulary that corpora/glossary.toml maps the engineer's words
to ("hopper" -> sm_90, "wgmma" -> MMAv3), at half a typed word's weight. Candidates of all searched
corpora are normalised together, so no corpus's best hit gets a free top score. Pass notes
match questions better than the code they explain, so a note in the top k lends part of its score
to the source its front matter anchors; a file whose commit subjects match the question gains a little;
a question asking for a remedy favours patterns, one asking how something is lowered disfavours the
front end, and one that pastes a compiler message favours its emitter.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from functools import cache, lru_cache

from kopt.errors import KoptError
from kopt.index import query_encoder
from kopt.index.backends import DENSE, NONEMPTY, QUESTIONS, SPARSE, open_backend
from kopt.index.hits import Hit, StoredChunk
from kopt.index.tokenize import query_vector, tokens

# sparse and dense: first tuned on all of gold.yaml before the dev/test split (dense refit below). QUESTIONS, a
# chunk's questions' mean vector against the query's (engineer question to LLM-written question, what MiniLM was
# trained for): chosen on dev before blind-2026-12c was written (the mean, not the best cosine; 0.1-0.5 tried),
# tune.yaml file MRR 0.802 -> 0.834; on that blind set 0.747 -> 0.773, holdout.yaml 0.562 -> 0.627 (evals/RESULTS.md).
# REFIT marks the constants refit on the eight looked-at blind sets (805 questions in 36 writers' words, pooled file MRR
# 0.756 -> 0.791); on the unread blind-2026-12i file MRR 0.764 -> 0.792, symbol 0.662 -> 0.728 (evals/RESULTS.md).
# REFIT: dense 0.15 -> 0.05 (the generic MiniLM is the weakest reader of a blind question), questions 0.2 -> 0.3.
WEIGHTS = {SPARSE: 1.0, DENSE: 0.05, QUESTIONS: 0.3}
EXPANSION_WEIGHT = 0.5  # glossary terms count half a typed word in BM25 (gold set: best of 0-1)
# Lit tests echo every op name, TableGen records and docs restate it: unless the question is about IR,
# the code that acts explains better. mlir_test: triton-only hybrid R@10 0.737 -> 0.800 (gold set);
# td_record/doc/code (code: windows of files without definitions) at 0.8: dev MRR 0.682 -> 0.697. A pass class
# mostly wires patterns and helpers together and names the pass's whole topic; the function it calls decides
# (dev: answers 1 question, ranked above the answer in 9; x0.9: MRR 0.743 -> 0.751, x0.8 loses one).
KIND_PRIOR = {"mlir_test": 0.7, "td_record": 0.8, "doc": 0.8, "code": 0.8, "pass": 0.9}
ANCHOR_WEIGHT = 0.6  # share of a hit note's score lent to its anchored source (dev: 0.9; REFIT: 0.6)
ANCHOR_ORDER_DECAY = 0.02  # earlier anchors in a note's front matter are its main ones
# The order of the top k must not depend on k (a caller asking for 20 hits, as the reranker does, got another top 10):
# every search scores the same pool of candidates per retriever, and notes lend their score from the same depth.
POOL = 50  # candidates per retriever and corpus (more only when k asks for more)
ANCHOR_DEPTH = 10  # notes ranked this high lend score to the source they anchor
# A question that asks for a remedy wants a pattern (a rewrite), not the code that explains the symptom.
_REMEDY_QUERY = re.compile(r"\b(?:instead|rewrite|fix|fixes|what should i do|how do i keep|avoid)\b", re.I)
REMEDY_PRIOR = 1.6  # pattern scores x1.6 on remedy questions (dev half: MRR 0.643 -> 0.673)
_IR_QUERY = re.compile(r"%\w|\b(?:tt|ttg|ttng|nvgpu|llvm|scf|arith)\.\w|#\w+\.\w|RUN:|CHECK")
# A question about how something is lowered, transformed (folded, fused, simplified, hoisted) or emitted wants the
# compiler code that does it, not the front end that only builds the op (its docstring restates the question's
# words), its CPU interpreter, or the docs. Transform words: dev MRR 0.751 -> 0.759.
_LOWERING_QUERY = re.compile(r"\b(?:lower(?:ed|s|ing)?|implement(?:ed|s)?|turned into|emit(?:ted|s)?|generated|ptx|sass"
                             r"|fold(?:ed|s|ing)?|simplif\w*|fus(?:e|ed|es|ing|ion)|hoist\w*)\b", re.I)
_FRONT_END = re.compile(r"(?:^|/)(?:language/|runtime/interpreter\.py$|docs/)")
FRONT_END_PRIOR = 0.5  # dev: MRR 0.703 -> 0.730 (cumsum-lowering 6 -> 1, atomic-cas 2 -> 1, block-ptr miss -> 4)
# The AMD backend answers questions about AMD GPUs; asked about anything else, its passes and lowering restate the
# NVIDIA ones' words (ping-pong scheduling, its elementwise lowering) and crowd them out of a search kopt's users make
# for NVIDIA and Ascend targets. So it is weighed down unless the question names AMD's words.
_AMD_QUERY = re.compile(r"\b(?:amd\w*|hip|rocm|gfx\d*\w*|mi[23]\d\d\w*|cdna\d?|rdna\d?|mfma|wmma|wavefronts?|waves_per_eu"
                        r"|buffer[ _](?:loads?|stores?|ops?|atomics?)|lds|ds_(?:read|write)\w*|ping-?pong|kpack"
                        r"|matrix_instr_nonkdim|sched_group_barrier|s_waitcnt)\b", re.I)
OFF_TARGET_PRIOR = 0.7
# Gluon (the lower-level front end) and Proton (the profiler) restate tl's and the passes' words in their docstrings and
# wrappers; like the AMD backend they are weighed down unless the question is about them.
_SIDE_PATHS = ("python/triton/experimental/", "python/src/gluon_ir.cc", "third_party/proton/")  # checkout paths
_SIDE_QUERY = re.compile(r"\b(?:gluon\w*|ttgl|proton|profil\w*|instrument\w*|intra-?kernel)\b", re.I)
# A question about Ascend is answered by triton-ascend (of the 342 looked-at questions that name Ascend's words, two
# have a gold in Triton's own tree, each beside one in triton-ascend's), so Triton's compiler weighs down on it as the
# AMD backend does on other questions. triton-ascend also carries its own copies of many upstream files (the front
# end, the runtime, the compiler driver) that restate Triton's words: any other question is answered by Triton's own
# copy, so when both trees' copies of a file are candidates, the other tree's weighs down.
_ASCEND_QUERY = re.compile(r"\b(?:ascend\w*|npus?|cann|davinci|ai ?cores?|aiv|aic|hivm\w*|bisheng\w*|hfusion|hacc|linalg"
                           r"|torch_npu|atlas|910\w*|mindspore|cube (?:cores?|units?)|vector cores?|unified buffer|msprof\w*"
                           r"|ttadapter)\b", re.I)
# A question that pastes a compiler message ("remark: ...", 'ValueError: ...') is answered by the code that emits it.
_QUOTED = re.compile(r"\"([^\"]{12,})\"|(?<!\w)'([^']{12,})'(?!\w)|\b\w*(?:Error|Warning|remark|error|warning):\s*(.{12,})")
MESSAGE_WEIGHT = 1.0  # added x the message's Dice overlap with the chunk's best emitted diagnostic
MESSAGE_MIN_OVERLAP = 0.6  # dev: MRR 0.730 -> 0.743 (pipelining-in-registers-remark 4 -> 1)
# The n-th further chunk of a file ranked above scores x0.85^n (dev: x0.9 lifted R@10 0.949 -> 0.966, x0.95 gave the
# right chunk of a big file back: symbol R@5 0.678 -> 0.746; REFIT: 0.85, more distinct files in the top 10).
FILE_REPEAT_DECAY = 0.85
# The commit subjects of a file (ingest/history.py) are a vote for it: each candidate chunk gains HISTORY_WEIGHT x its
# file's BM25 score over them (over the best file's). Fresh tuning questions (tune.yaml): MRR 0.711 -> 0.742, up at
# every weight 0.05-0.3 and history length tried; dev half 0.760 both ways; test (look 9) 0.680 -> 0.671, R@10 0.94 -> 0.96.
HISTORY_WEIGHT = 0.2
HISTORY_FILES = 200  # files scored per query; a file past these would gain under 0.2 x its small share
# The symbol graph (ingest/symbol_graph.py), mode hybrid+graph: each of the top GRAPH_SOURCES hybrid hits lends
# LINK_WEIGHTS[kind] x its score to the candidates its links lead to (a pass's TableGen def or Python binding -> its
# implementation, a pattern list -> the patterns). A fixed number of sources, so the order of the top k does not
# depend on k. Opt-in: on the tuning questions it moves 2 of 124 (dev file MRR 0.780 -> 0.797, tune 0.813 both ways);
# adding linked chunks the query did not retrieve, or following caller -> callee links, pays less or loses
# (evals/RESULTS.md, "Symbol-graph expansion"); a query naming a pass's flag finds its implementation first.
GRAPH_MODE = "hybrid+graph"
GRAPH_SOURCES = 10
LINK_WEIGHTS = {"implements": 0.9, "binds": 0.9, "adds": 0.9}
RERANKED = "hybrid+rerank"  # the hybrid top RERANK_DEPTH reordered by kopt's trained cross-encoder (index/rerank.py)
LEARNED = "hybrid+ltr"  # hybrid, sparse and dense candidates ordered by the learned ranker's trees (index/ranker.py)
MODES = ("hybrid", "dense", "sparse", RERANKED, GRAPH_MODE, LEARNED)
_EXACT_FILTERS = {"language": "language", "kind": "kind", "passes": "passes", "symbol": "symbols"}


@cache
def glossary() -> dict[str, list[str]]:
    from kopt.ingest.manifest import corpora_dir

    path = corpora_dir() / "glossary.toml"
    if not path.is_file():
        return {}
    try:
        return {k.lower(): v for k, v in tomllib.loads(path.read_text()).get("terms", {}).items()}
    except tomllib.TOMLDecodeError as exc:
        raise KoptError(f"{path}: not valid TOML: {exc}") from exc


def expand(query: str) -> str:
    """The code vocabulary the query's engineer words stand for (empty when none match)."""
    lower = query.lower()
    return " ".join(t for term, adds in glossary().items() if re.search(rf"(?<!\w){re.escape(term)}(?!\w)", lower)
                    for t in adds)


class Index:
    """The knowledge index of one settings object (Edge on disk, or a Qdrant server)."""

    def __init__(self, settings):
        self.settings = settings
        self.backend = open_backend(settings)
        try:
            self.catalog = self.backend.pin()  # this Index keeps the versions served now until it closes
        except Exception:
            self.backend.close()
            raise
        self.where = settings.qdrant_url or str(settings.index_path)
        self._stored: dict[str, dict[str, StoredChunk]] = {}  # collection -> point id -> its fields, read once
        self._points: dict[tuple, tuple[str, str]] = {}  # a chunk's Hit.key -> (collection, point id): for its text

    def preload(self) -> None:
        """Read every served point's fields (not its text) now, as a long-lived searcher (the worker) does after its
        warm-up: a query then converts no payload (~0.5 s once for both compiler trees, ~15 ms less per query)."""
        for _, entry in self._entries(None):
            for collection in filter(None, (entry["collection"], entry.get("history"))):
                self._remember(collection, self.backend.scroll(collection, text=False))

    def _query(self, collection: str, searches: dict, limit: int, flt: dict | None) -> dict[str, list]:
        """backend.query's (id, score, StoredChunk) lists: the fields come from the cache, read on first sight."""
        found = self.backend.query(collection, searches, limit, flt, payload=False)
        stored = self._stored.setdefault(collection, {})
        missing = {pid for hits in found.values() for pid, _, _ in hits if pid not in stored}
        if missing:
            self._remember(collection, self.backend.retrieve(collection, sorted(missing), text=False).items())
        return {key: [(pid, score, stored[pid]) for pid, score, _ in hits] for key, hits in found.items()}

    def _remember(self, collection: str, payloads) -> None:
        """Keep (point id, payload without text) pairs as StoredChunks, and where each chunk's text is."""
        stored = self._stored.setdefault(collection, {})
        for pid, meta in payloads:
            chunk = stored[pid] = StoredChunk.from_payload(meta)
            self._points[chunk.key] = (collection, pid)

    def corpora(self) -> list[dict]:
        return [{"name": name, "version": e["version"], "points": e.get("points"), "collection": e["collection"],
                 "model": e.get("model"), "ingested": e.get("ingested"), "root": e.get("root"),
                 "expansion": e.get("expansion"), "questions": e.get("questions"), "graph": e.get("graph")}
                for name, e in sorted(self.catalog.get("corpora", {}).items())]

    def _entries(self, corpus: str | list[str] | None, target: str | None = None) -> list[tuple[str, dict]]:
        served = self.catalog.get("corpora", {})
        if not served:
            raise KoptError(f"the index at {self.where} is empty",
                            hint="run `kopt ingest triton-pkg` (no checkout needed) or `kopt ingest triton --path DIR`")
        if target and not corpus:  # the target's compiler sources that are served, and the shared notes and patterns
            if target not in TARGET_CORPORA:
                raise KoptError(f"unknown target {target!r}; use {' or '.join(TARGET_CORPORA)}")
            corpus = [n for n in served if n in TARGET_CORPORA[target] or n not in ALL_COMPILER_CORPORA]
        names = [corpus] if isinstance(corpus, str) else list(corpus or served)
        missing = [n for n in names if n not in served]
        if missing:
            path = " --path DIR" if missing[0] in ("triton", "triton-ascend") else ""
            raise KoptError(f"corpus {missing[0]!r} is not in the index at {self.where}",
                            hint=f"run `kopt ingest {missing[0]}{path}`")
        return [(n, served[n]) for n in names]

    def search(self, query: str, *, corpus: str | list[str] | None = None, k: int = 10, mode: str = "hybrid",
               filters: dict | None = None, dense_vector: list[float] | None = None) -> list[Hit]:
        """The top k hits; `dense_vector` is the query's dense vector when the caller embedded it already (the trainer
        embeds thousands in batches), under the model of every corpus searched."""
        if mode not in MODES:
            raise KoptError(f"unknown search mode {mode!r}; use one of {', '.join(MODES)}")
        if not tokens(query):
            raise KoptError(f"no searchable words in the query {query!r}")
        if mode == RERANKED:
            from kopt.index.rerank import RERANK_DEPTH, rerank
            from kopt.index.train import RERANKER

            hits = self.search(query, corpus=corpus, k=max(k, RERANK_DEPTH), filters=filters, dense_vector=dense_vector)
            return rerank(RERANKER, query, hits)[:k]
        if mode == LEARNED:
            from kopt.index.ranker import rank

            ranked = rank(self, query, corpus, k, filters)
            if len(ranked) < k:  # k past the candidates: hybrid's further hits follow, in its order
                seen = {h.key for h in ranked}
                ranked += [h for h in self.search(query, corpus=corpus, k=k, filters=filters) if h.key not in seen]
            return ranked[:k]
        if k > POOL:  # past the pool: its top hits as any smaller k gets them, then a wider pool's further ones
            head = self._fused(query, corpus, POOL, mode, filters, dense_vector, POOL)
            seen = {h.key for h in head}
            wide = self._fused(query, corpus, k, mode, filters, dense_vector, k)
            return head + [h for h in wide if h.key not in seen][:k - len(head)]
        return self._fused(query, corpus, k, mode, filters, dense_vector, POOL)

    def _fused(self, query: str, corpus, k: int, mode: str, filters: dict | None, dense_vector: list[float] | None,
               pool: int) -> list[Hit]:
        """The top k of one mode's fused candidates, each retriever asked for its top `pool` per corpus."""
        graph, mode = mode == GRAPH_MODE, "hybrid" if mode == GRAPH_MODE else mode
        flt, path_glob = _filters(filters)
        fetch = pool * (4 if path_glob else 1)
        sparse = query_vector(query, expand(query), EXPANSION_WEIGHT) if mode != "dense" else None
        found: dict[str, list] = {}  # candidates of every corpus, normalised together so no corpus gets a free top score
        for _, entry in self._entries(corpus, (filters or {}).get("target")):
            dense = (dense_vector or _query_embedding(entry["model"], query, query_encoder())) if mode != "sparse" else None
            searches = {DENSE: dense, SPARSE: sparse, QUESTIONS: dense if mode == "hybrid" and entry.get("questions") else None}
            for key, hits in self._query(entry["collection"], {k: v for k, v in searches.items() if v is not None},
                                         fetch, flt).items():
                found.setdefault(key, []).extend(hits)
        if path_glob:
            found = {key: [h for h in hits if fnmatch.fnmatchcase(h[2].path, path_glob)] for key, hits in found.items()}
        hits = _fuse(found, mode)
        if mode == "hybrid":
            for h in hits:
                h.score = round(h.score * prior(query, h.chunk), 4)
            _weigh_down_other_trees_copies(hits, query)
        if mode == "hybrid" and not path_glob:
            hits = self._credit_emitters(hits, query, corpus, flt)
        hits = sorted(hits, key=lambda h: -h.score)
        if graph and not path_glob:
            hits = self._credit_links(hits)
        if mode == "hybrid" and not path_glob:
            hits = _spread_files(self._credit_history(self._credit_anchors(hits, corpus, flt), query, corpus))
        return self._with_texts(_one_copy(hits)[:k])

    def _with_texts(self, hits: list[Hit]) -> list[Hit]:
        """The chunk text of the hits returned, read for them alone (candidates come without it)."""
        wanted: dict[str, list[str]] = {}
        for h in hits:
            if not h.text and h.key in self._points:
                collection, pid = self._points[h.key]
                wanted.setdefault(collection, []).append(pid)
        texts = {(collection, pid): payload.get("text", "") for collection, ids in wanted.items()
                 for pid, payload in self.backend.retrieve(collection, ids, text=True).items()}
        for h in hits:
            if not h.text and h.key in self._points:
                h.text = texts.get(self._points[h.key], "")
        return hits

    def _credit_emitters(self, hits: list[Hit], query: str, corpus, flt: dict) -> list[Hit]:
        """The chunks that emit the message a question quotes gain MESSAGE_WEIGHT x how well it matches.

        Dice overlap (not the share of the emitted text found) so a short generic message such as
        "unsupported type" does not match every pasted sentence that happens to contain its words.
        """
        match = _QUOTED.search(query)
        want = set(tokens(next(g for g in match.groups() if g))) if match else set()
        if len(want) < 3:
            return hits
        by_key = {h.key: h for h in hits}
        for _, entry in self._entries(corpus):
            found = self._query(entry["collection"], {SPARSE: query_vector(" ".join(want))}, 50,
                                {**flt, "diagnostics": NONEMPTY})
            for _, _, chunk in found[SPARSE]:
                best = max((_dice(want, set(tokens(d))) for d in chunk.diagnostics), default=0.0)
                if best >= MESSAGE_MIN_OVERLAP:
                    hit = by_key.setdefault(chunk.key, Hit(0.0, "", chunk))
                    hit.score = round(hit.score + MESSAGE_WEIGHT * best, 4)
        return list(by_key.values())

    def _credit_links(self, hits: list[Hit]) -> list[Hit]:
        """The top GRAPH_SOURCES hits lend part of their score to the candidates their symbol-graph links lead to."""
        credit: dict[tuple, float] = {}
        for h in hits[:GRAPH_SOURCES]:
            for kind, path, line in links_of(h.chunk):
                if kind in LINK_WEIGHTS:
                    key = (h.chunk.corpus, path, line)
                    credit[key] = max(credit.get(key, 0.0), LINK_WEIGHTS[kind] * h.score)
        for h in hits:
            h.score = round(h.score + credit.get(h.key, 0.0), 4)
        return sorted(hits, key=lambda h: -h.score)

    def _credit_anchors(self, hits: list[Hit], corpus, flt: dict) -> list[Hit]:
        """A note in the top ANCHOR_DEPTH lends part of its score to the source chunks its front matter anchors.

        Notes are written in the engineer's words, so they match questions better than the code they
        explain; the code is what L4 cites. Each anchored chunk gains ANCHOR_WEIGHT x the note's score
        (the best note, when several anchor it); one the query did not retrieve is fetched by symbol.
        """
        notes = [h for h in hits[:ANCHOR_DEPTH] if h.chunk.anchors]
        if not notes:
            return hits
        by_key = {h.key: h for h in hits}
        credit: dict[tuple, float] = {}
        for note in notes:
            for i, anchor in enumerate(note.chunk.anchors):
                for meta in self._anchored(anchor, corpus):
                    key = _payload_key(meta)
                    if key not in by_key:
                        if any(meta.get(f) != v for f, v in flt.items() if isinstance(v, str)):
                            continue
                        by_key[key] = Hit.from_payload(0.0, meta)
                    gain = ANCHOR_WEIGHT * note.score * (1 - ANCHOR_ORDER_DECAY * i)
                    credit[key] = max(credit.get(key, 0.0), gain)
        for key, gain in credit.items():
            by_key[key].score = round(by_key[key].score + gain, 4)
        return sorted(by_key.values(), key=lambda h: -h.score)

    def _credit_history(self, hits: list[Hit], query: str, corpus) -> list[Hit]:
        """Each hit gains HISTORY_WEIGHT x how well its file's commit subjects match the question (best file = 1)."""
        votes: dict[tuple, float] = {}
        for name, entry in self._entries(corpus):
            if entry.get("history"):
                found = self._query(entry["history"], {SPARSE: query_vector(query)}, HISTORY_FILES, None)[SPARSE]
                votes.update(((name, chunk.path), score) for _, score, chunk in found)
        best = max(votes.values(), default=0.0)
        if best <= 0:
            return hits
        for h in hits:
            h.score = round(h.score + HISTORY_WEIGHT * votes.get((h.chunk.corpus, h.chunk.path), 0.0) / best, 4)
        return sorted(hits, key=lambda h: -h.score)

    def _anchored(self, anchor: str, corpus) -> list[dict]:
        """Source chunks an anchor 'path:symbol' names, in the searched corpora that hold that path."""
        path, _, symbol = anchor.rpartition(":")
        short = re.split(r"::|\.|\s", symbol.strip())[-1]
        if not path or not short:
            return []
        found = []
        for _, entry in self._entries(corpus):
            found += self._scroll_cached(entry["collection"], path, short)
        return found

    @lru_cache(maxsize=4096)  # noqa: B019 - one Index per process; anchors repeat across queries
    def _scroll_cached(self, collection: str, path: str, short: str) -> list[dict]:
        metas = [meta for _, meta in self.backend.scroll(collection, {"path": path, "symbols": short}, limit=8)]
        return [m for m in metas if m.get("kind") != "mlir_test"]

    def lookup_symbol(self, name: str, corpus: str | list[str] | None = None) -> list[Hit]:
        """Chunks that define `name` (a short name, or a qualified one such as CoalescePass::runOnOperation)."""
        short = re.split(r"::|\.", name)[-1]
        hits = []
        for _, entry in self._entries(corpus):
            for _, meta in self.backend.scroll(entry["collection"], {"symbols": short}, limit=200):
                owner = name[: -len(short)].rstrip(":.")  # Class in Class::method; a whole class chunk holds its methods
                hit = Hit.from_payload(1.0, meta)
                quals = [q.strip().split(" (part")[0] for q in hit.chunk.qualname.split(",")]
                if short != name and not any(q.endswith(name) or q.endswith(owner) for q in quals):
                    continue
                hits.append(hit)
        rank = {"function": 0, "pass": 0, "class": 1, "td_record": 2}
        return sorted(hits, key=lambda h: (rank.get(h.chunk.kind, 3), h.chunk.path, h.chunk.start_line or 0))

    def find_emitter(self, message: str, corpus: str | list[str] | None = None, k: int = 5) -> list[Hit]:
        """The functions whose emitted diagnostics best match a message seen in a log."""
        want = set(tokens(message))
        if not want:
            raise KoptError("empty message")
        hits = []
        for _, entry in self._entries(corpus):
            found = self.backend.query(entry["collection"], {SPARSE: query_vector(message)}, 100, {"diagnostics": NONEMPTY})
            for _, _, meta in found[SPARSE]:
                best = max(((_overlap(want, set(tokens(d))), d) for d in meta.get("diagnostics", [])), default=(0.0, ""))
                if best[0] > 0:
                    hits.append(Hit.from_payload(round(best[0], 4), {**meta, "matched_diagnostic": best[1]}))
        return sorted(hits, key=lambda h: -h.score)[:k]

    def close(self) -> None:
        self.backend.close()


def prior(query: str, chunk: StoredChunk) -> float:
    """How much the question's shape trusts a chunk of this kind and place (a factor on its fused score)."""
    about_ir, about_lowering, wants_remedy, about_amd, about_side, about_ascend = _query_shape(query)
    factor = 1.0
    if not about_ir:
        factor *= KIND_PRIOR.get(chunk.kind, 1.0)
    if about_lowering and _FRONT_END.search(chunk.path):
        factor *= FRONT_END_PRIOR
    if wants_remedy and chunk.kind == "pattern":
        factor *= REMEDY_PRIOR
    if chunk.path.startswith("third_party/amd/") and not about_amd:
        factor *= OFF_TARGET_PRIOR
    if (checkout_path(chunk.corpus, chunk.path) or chunk.path).startswith(_SIDE_PATHS) and not about_side:
        factor *= OFF_TARGET_PRIOR
    if about_ascend and TREE_OF.get(chunk.corpus) == "nvidia":
        factor *= OFF_TARGET_PRIOR
    return factor


@lru_cache(maxsize=64)
def _query_shape(query: str) -> tuple[bool, bool, bool, bool, bool, bool]:
    """(about IR, about lowering, asks for a remedy, about AMD, about Gluon or Proton, about Ascend): read once per
    query, not once per candidate."""
    return (bool(_IR_QUERY.search(query)), bool(_LOWERING_QUERY.search(query)), bool(_REMEDY_QUERY.search(query)),
            bool(_AMD_QUERY.search(query)), bool(_SIDE_QUERY.search(query)), bool(_ASCEND_QUERY.search(query)))


def links_of(chunk: StoredChunk) -> list:
    """A chunk's symbol-graph edges [kind, path, start_line], as ingest stored them (none in an older index)."""
    return chunk.extra.get("links", [])


def _dice(a: set[str], b: set[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def _overlap(want: set[str], have: set[str]) -> float:
    """How much of the emitted message's fixed text the observed message contains."""
    return len(want & have) / len(have) if have else 0.0


def _spread_files(hits: list[Hit]) -> list[Hit]:
    """Demote, not drop, the later chunks of a file already ranked, so one file does not fill the top k.

    Dropping them (at most 1-2 chunks per file) lifted file recall but lost the right chunk of a big
    file (symbol R@10 0.864 -> 0.712 on dev); a gentle decay keeps it within reach.
    """
    for h, score in zip(hits, spread_scores([h.chunk.path for h in hits], [h.score for h in hits])):
        h.score = score
    return sorted(hits, key=lambda h: -h.score)


def spread_scores(paths: list[str], scores: list[float]) -> list[float]:
    """Each score (listed best first) x FILE_REPEAT_DECAY^n, n the chunks of its file listed before it."""
    seen: dict[str, int] = {}
    spread = []
    for path, score in zip(paths, scores):
        spread.append(round(score * FILE_REPEAT_DECAY ** seen.get(path, 0), 4))
        seen[path] = seen.get(path, 0) + 1
    return spread


def _payload_key(meta: dict) -> tuple:
    """A stored point's `Hit.key`."""
    return meta.get("corpus"), meta.get("path"), meta.get("start_line")


# A target's compiler corpora, richest first (a checkout, then the installed package): `kopt search --target` searches
# those ingested with the shared pass notes and patterns, not the other target's compiler (triton-ascend questions
# ranked 0.44 file MRR searching everything); L4 cites the first one ingested
TARGET_CORPORA = {"nvidia": ("triton", "triton-pkg"), "ascend": ("triton-ascend", "triton-ascend-pkg")}
ALL_COMPILER_CORPORA = {n for names in TARGET_CORPORA.values() for n in names}
TREE_OF = {name: target for target, names in TARGET_CORPORA.items() for name in names}
CHECKOUT_OF = {package: checkout for checkout, package in TARGET_CORPORA.values()}
# A package corpus mirrors part of its checkout corpus: checkout path prefix -> the same files' path in the package
PKG_ROOTS = {"triton-pkg": {"third_party/nvidia/backend/": "backends/nvidia/", "third_party/proton/proton/": "profiler/",
                            "python/triton/": ""},
             "triton-ascend-pkg": {"third_party/ascend/backend/": "backends/ascend/", "python/triton/": ""}}


def checkout_path(corpus: str, path: str) -> str | None:
    """A package corpus's file as its checkout names it (None: not a package corpus, or a file the map misses)."""
    for prefix, root in sorted(PKG_ROOTS.get(corpus, {}).items(), key=lambda pr: -len(pr[1])):
        if path.startswith(root):
            return prefix + path.removeprefix(root)
    return None


def _weigh_down_other_trees_copies(hits: list[Hit], query: str) -> None:
    """Where both trees' copies of a file are candidates, weigh down the copy in the tree the question is not about."""
    def place(h: Hit) -> tuple[str | None, str]:
        return TREE_OF.get(h.chunk.corpus), checkout_path(h.chunk.corpus, h.chunk.path) or h.chunk.path

    asked = "ascend" if _query_shape(query)[5] else "nvidia"
    held = {path for tree, path in map(place, hits) if tree == asked}
    for h in hits:
        tree, path = place(h)
        if tree not in (None, asked) and path in held:
            h.score = round(h.score * OFF_TARGET_PRIOR, 4)


def _one_copy(hits: list[Hit]) -> list[Hit]:
    """One hit per chunk when a package corpus and its checkout both hold the file: the checkout's (its path is the
    one a reader opens), at the better of the two ranks."""
    kept: list[Hit] = []
    where: dict[tuple, int] = {}
    for h in hits:
        c = h.chunk
        mirror = checkout_path(c.corpus, c.path)
        key = (CHECKOUT_OF.get(c.corpus, c.corpus), mirror or c.path, c.start_line, c.symbol)
        if key not in where:
            where[key] = len(kept)
            kept.append(h)
        elif mirror is None and kept[where[key]].chunk.corpus in CHECKOUT_OF:  # the checkout's copy replaces the package's
            h.score = kept[where[key]].score
            kept[where[key]] = h
    return kept


def _filters(filters: dict | None) -> tuple[dict, str | None]:
    flt, path_glob = {}, None
    for key, value in (filters or {}).items():
        if value in (None, "", []):
            continue
        if key == "path":
            if any(ch in str(value) for ch in "*?["):
                path_glob = str(value)
            else:
                flt["path"] = value
        elif key in _EXACT_FILTERS:
            flt[_EXACT_FILTERS[key]] = value
        elif key not in ("corpus", "target"):  # both choose corpora (_entries), not chunks
            raise KoptError(f"unknown search filter {key!r}; use corpus, target, language, kind, path, passes, symbol")
    return flt, path_glob


def _fuse(found: dict[str, list], mode: str) -> list[Hit]:
    """Hits (without their text yet) from (id, score, StoredChunk) candidates per named vector."""
    if mode != "hybrid":
        return [Hit(round(score, 4), "", chunk) for _, score, chunk in found[SPARSE if mode == "sparse" else DENSE]]
    scores: dict[str, float] = {}
    chunks: dict[str, StoredChunk] = {}
    for key, hits in found.items():
        norm = _by_max if key == SPARSE else _min_max
        for (pid, _, chunk), value in zip(hits, norm([score for _, score, _ in hits])):
            scores[pid] = scores.get(pid, 0.0) + WEIGHTS[key] * value
            chunks[pid] = chunk
    return [Hit(round(s, 4), "", chunks[pid]) for pid, s in scores.items()]


def _by_max(values: list[float]) -> list[float]:
    top = max(values, default=0.0)
    return [v / top for v in values] if top > 0 else [0.0] * len(values)


def _min_max(values: list[float]) -> list[float]:
    lo, hi = min(values, default=0.0), max(values, default=0.0)
    return [(v - lo) / (hi - lo) for v in values] if hi > lo else [1.0] * len(values)


@lru_cache(maxsize=1024)  # bounded: a search worker lives on between commands
def _query_embedding(model: str, query: str, encoder: str = "") -> list[float]:
    """`encoder` (KOPT_QUERY_ENCODER, read by embed_query) keys the cache alone."""
    from kopt.index.embed import embed_query

    return embed_query(model, query)


def open_index(settings) -> Index:
    return Index(settings)
