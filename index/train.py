"""Train kopt's retrieval models on the pairs mined from the corpora (issue 19, item 3).

Two models, both started from the shipped MiniLM (no other base loads offline here):

- an **embedder**: the MiniLM fine-tuned contrastively (sentence-transformers' MultipleNegativesRankingLoss) on
  (query, positive chunk, hard negative), so questions in an engineer's words land near the code that answers them;
- a **reranker**: a cross-encoder (sentence-transformers' CrossEncoder: the MiniLM's lower layers, mean pooling and a
  one-logit head) trained with binary cross-entropy on (query, chunk) -> is it the answer. Mean pooling, not BERT's
  CLS pooler: the MiniLM was trained to mean-pool, its CLS token says almost the same for every pair, and a CLS
  cross-encoder started from it scored every pair 0.509 and never left BCE ln 2 (evals/RESULTS.md).

A third, the **question embedder** (`kopt-question-minilm`), learns from the questions alone: a question in a kernel
author's words as the anchor, a doc2query question of the same chunk as its positive, and the doc2query question of
another file the base MiniLM finds closest as its hard negative; as a corpus's embedder (`kopt ingest --embed-model
kopt-question-minilm`) it embeds the chunks, their questions (the question vectors) and the query. It won on the dev
sets and lost on a blind set (evals/RESULTS.md), so none of the three ships.

Hard negatives are what kopt's own hybrid retriever ranks highest for the pair's query among chunks of other files
than its positives (a neighbour in the same file is too often a second answer), leaving out chunks that define a
symbol named like the positive's (a pass's TableGen def beside its implementation is a second answer too). The
pairs come from the sources only (evals/retrieval/pairs); no eval set is read. Seeds are fixed, the loops stop at a time budget, and the
weights are saved as fp16 safetensors (half the size; kopt computes in float32 from them).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kopt.errors import KoptError

EMBEDDER = "kopt-code-minilm"
QUESTION_EMBEDDER = "kopt-question-minilm"
ANCHOR_MINERS = ("doc2query-kernel",)  # the question embedder's anchors; its positives and negatives: doc2query
RERANKER = "kopt-rerank-minilm"
SEED = 0
NEGATIVE_DEPTH = 15  # hybrid hits looked at per query for negatives
NEGATIVE_RULE = 2  # how negatives are chosen (part of the saved examples' key): 2 skips same-named symbols


@dataclass
class Example:
    query: str
    positive: str          # the chunk's text as the index holds it (header + body)
    negatives: list[str]   # hybrid hits of other files, best first


def load_pairs(folder: Path) -> list[dict]:
    """Every row of every *.jsonl file in a pairs folder (kopt.ingest.pairs's output), in a fixed order."""
    files = sorted(Path(folder).glob("*.jsonl"))
    if not files:
        raise KoptError(f"no *.jsonl pair files in {folder}", hint="python -m kopt.ingest.pairs --triton DIR --ascend DIR")
    return [json.loads(line) for f in files for line in f.read_text().splitlines() if line.strip()]


def build_examples(index, pairs: list[dict], *, limit: int | None = None, negatives: int = 3, seed: int = SEED,
                   progress: Callable[[str], None] = lambda _: None) -> list[Example]:
    """(query, positive text, hybrid hard negatives) for the pairs whose positive the index holds; `limit` pairs at
    most, drawn at random (seeded) with each miner keeping its share."""
    served = {c["name"]: c for c in index.corpora()}
    pairs = [p for p in pairs if p["positive"]["corpus"] in served]
    rng = random.Random(seed)
    rng.shuffle(pairs)
    if limit:
        pairs = pairs[:limit]
    texts = _chunk_texts(index, pairs)
    pairs = [p for p in pairs if _ref_key(p["positive"]) in texts]
    positives: dict[str, list[dict]] = {}
    for p in pairs:
        positives.setdefault(p["query"], []).append(p["positive"])
    queries = sorted(positives)
    progress(f"embedding {len(queries)} queries for negative mining")
    vectors = _query_vectors(served, queries, pairs)
    found: dict[str, list[str]] = {}
    for n, query in enumerate(queries):
        corpus = positives[query][0]["corpus"]
        paths = {pos["path"] for pos in positives[query]}
        hits = index.search(query, corpus=corpus, k=NEGATIVE_DEPTH, mode="hybrid",
                            dense_vector=vectors.get((corpus, query)))
        names = {n for pos in positives[query] for n in _symbol_names(texts.get(_ref_key(pos), ""))}
        found[query] = [h.text for h in hits if h.chunk.path not in paths
                        and not _names_overlap(names, _symbol_names(h.text))][:negatives]
        if n % 200 == 0:
            progress(f"negatives {n}/{len(queries)}")
    return [Example(p["query"], texts[_ref_key(p["positive"])], found[p["query"]]) for p in pairs if found[p["query"]]]


def _symbol_names(text: str) -> set[str]:
    """The names a chunk's header gives its symbols (`path:lines | ns::Class::method, f | signature`), lower-cased:
    each symbol's last part and its capitalised (class) parts, less the method names every pass or pattern has."""
    fields = text.split("\n", 1)[0].split(" | ")
    if len(fields) < 2:
        return set()
    names = set()
    for symbol in fields[1].split(","):
        parts = [p for p in symbol.strip().split("::") if p]
        names |= {p.lower() for p in parts[-1:] + [p for p in parts[:-1] if p[:1].isupper()]}
    return {n for n in names if len(n) >= 4} - _GENERIC_METHODS


_GENERIC_METHODS = {"runonoperation", "matchandrewrite", "rewrite", "build", "verify", "fold", "initialize",
                    "getdependentdialects", "getname", "print", "parse"}


def _names_overlap(a: set[str], b: set[str]) -> bool:
    """One name inside another (BuildCFG / BuildCFGPass): the same thing under its def and its implementation."""
    return any(x in y or y in x for x in a for y in b)


def _digest(*parts) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _ref_key(ref: dict) -> tuple:
    return ref["corpus"], ref["path"], ref["lines"][0]


def _chunk_texts(index, pairs: list[dict]) -> dict[tuple, str]:
    """(corpus, path, start line) -> the chunk's indexed text, for every positive's file."""
    served = {c["name"]: c["collection"] for c in index.corpora()}
    out = {}
    for corpus, path in sorted({(p["positive"]["corpus"], p["positive"]["path"]) for p in pairs}):
        for _, meta in index.backend.scroll(served[corpus], {"path": path}):
            out[(corpus, path, meta.get("start_line"))] = meta.get("text", "")
    return out


def _query_vectors(served: dict, queries: list[str], pairs: list[dict]) -> dict[tuple, list[float]]:
    """Every query's dense vector under its corpus's model, in batches (one by one costs ~0.1 s a query)."""
    from kopt.index.embed import encode

    corpus_of = {p["query"]: p["positive"]["corpus"] for p in pairs}
    out = {}
    for model in sorted({served[c]["model"] for c in corpus_of.values()}):
        mine = [q for q in queries if served[corpus_of[q]]["model"] == model]
        for q, vec in zip(mine, encode(model, mine)):
            out[(corpus_of[q], q)] = vec.tolist()
    return out


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _batches(examples: list[Example], size: int, seed: int) -> list[list[Example]]:
    """Shuffled batches where no query and no positive repeats: a repeat would be an in-batch negative that is
    really an answer."""
    order = examples[:]
    random.Random(seed).shuffle(order)
    batches, current, seen = [], [], set()
    for ex in order:
        if ex.query in seen or ex.positive in seen:
            continue  # kept out of this epoch rather than breaking the batch (a few percent of rows)
        current.append(ex)
        seen |= {ex.query, ex.positive}
        if len(current) == size:
            batches.append(current)
            current, seen = [], set()
    return batches + ([current] if len(current) > 1 else [])


def _run(steps: list, step: Callable, params, *, lr: float, seconds: float,
         progress: Callable[[str], None]) -> dict:
    """AdamW with linear warm-up (10%) and decay over `steps`, stopped early at `seconds`."""
    import torch

    opt = torch.optim.AdamW(params, lr=lr)
    total, warm = len(steps), max(1, len(steps) // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min((i + 1) / warm, max(0.0, (total - i) / (total - warm + 1))))
    started, done, losses = time.monotonic(), 0, []
    for batch in steps:
        if time.monotonic() - started > seconds:
            break
        loss = step(batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        done += 1
        losses.append(float(loss.detach()))
        if done % 10 == 0:
            progress(f"step {done}/{total} loss {sum(losses[-10:]) / 10:.3f}")
    return {"steps": done, "planned_steps": total, "seconds": round(time.monotonic() - started, 1),
            "first_loss": round(losses[0], 4) if losses else None, "last_loss": round(losses[-1], 4) if losses else None}


def _seed(seed: int) -> None:
    import torch

    random.seed(seed)
    torch.manual_seed(seed)


def train_embedder(examples: list[Example], base: Path, out: Path, *, seconds: float, batch_size: int = 32,
                   query_tokens: int = 64, chunk_tokens: int = 96, trained_layers: int = 3, lr: float = 5e-5,
                   seed: int = SEED, progress: Callable[[str], None] = lambda _: None) -> dict:
    """Fine-tune the sentence encoder at `base` with MultipleNegativesRankingLoss over (query, positive, hardest
    negative) and the rest of the batch; save it as fp16 safetensors in `out`.

    Only the top `trained_layers` layers learn: the token embeddings and lower layers stay as shipped, which halves
    the backward pass on a CPU and keeps the model close to the MiniLM where the pairs say little."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    _seed(seed)
    model = SentenceTransformer(str(base), device=_device(), model_kwargs={"dtype": _float32()})
    bert = model[0].auto_model
    layers = bert.encoder.layer
    for p in [*bert.embeddings.parameters(), *(p for layer in layers[: len(layers) - trained_layers] for p in layer.parameters())]:
        p.requires_grad = False
    model.train()
    loss = MultipleNegativesRankingLoss(model)

    def tokenized(texts: list[str], tokens: int) -> dict:
        model.max_seq_length = tokens
        return _to(model.preprocess(texts), model.device)

    def step(batch: list[Example]):
        return loss([tokenized([e.query for e in batch], query_tokens), tokenized([e.positive for e in batch], chunk_tokens),
                     tokenized([e.negatives[0] for e in batch], chunk_tokens)], None)

    stats = _run(_batches(examples, batch_size, seed), step, [p for p in model.parameters() if p.requires_grad], lr=lr,
                 seconds=seconds, progress=progress)
    model.eval()
    model.max_seq_length = 128
    model.save(str(out))
    return {**stats, "examples": len(examples), **half_precision(out)}


def question_examples(pairs_dir: Path, seed: int = SEED, anchor_miners: tuple[str, ...] = ANCHOR_MINERS) -> list[Example]:
    """(anchor question, a doc2query question of its chunk, the closest doc2query question of another file by the
    base MiniLM's cosine) for every anchor (a row of the `anchor_miners` pair files) whose chunk has doc2query
    questions."""
    import numpy as np

    from kopt.index.embed import DEFAULT_MODEL, encode

    def rows(miner: str) -> list[tuple[tuple, str]]:
        path = Path(pairs_dir) / f"{miner}.jsonl"
        if not path.is_file():
            raise KoptError(f"{path}: missing; the question embedder learns from {', '.join(anchor_miners)} and "
                            f"doc2query pairs")
        return [(_ref_key(r["positive"]) + (r["positive"]["lines"][1],), " ".join(r["query"].split()))
                for r in map(json.loads, path.read_text().splitlines())]

    anchors = [row for miner in anchor_miners for row in rows(miner)]
    others = rows("doc2query")
    of_chunk: dict[tuple, list[int]] = {}
    for i, (key, _) in enumerate(others):
        of_chunk.setdefault(key, []).append(i)
    anchors = [(key, q) for key, q in anchors if key in of_chunk]
    other_vecs = encode(DEFAULT_MODEL, [q for _, q in others], batch_size=128)
    anchor_vecs = encode(DEFAULT_MODEL, [q for _, q in anchors], batch_size=128)
    rng, examples = random.Random(seed), []
    for (key, query), vec in zip(anchors, anchor_vecs):
        positive = others[rng.choice(of_chunk[key])][1]
        closest = np.argsort(-(other_vecs @ vec))[:20]
        negative = next((others[j][1] for j in closest if others[j][0][1] != key[1]), None)  # another file's
        if negative:
            examples.append(Example(query, positive, [negative]))
    return examples


def train_question_embedder(pairs_dir: Path, out: Path, *, seconds: float, seed: int = SEED,
                            anchor_miners: tuple[str, ...] = ANCHOR_MINERS, epochs: int = 1,
                            progress: Callable[[str], None] = lambda _: None) -> dict:
    """The question embedder, saved in out/QUESTION_EMBEDDER (fp16). Each epoch draws every anchor's positive
    afresh (seed, seed + 1, ...): a few hundred engineer questions need several passes, thousands of others one."""
    from kopt.index.embed import DEFAULT_MODEL, model_dir

    examples = [e for n in range(epochs) for e in question_examples(pairs_dir, seed + n, anchor_miners)]
    progress(f"{len(examples)} question triples")
    return train_embedder(examples, model_dir(DEFAULT_MODEL), out / QUESTION_EMBEDDER, seconds=seconds, batch_size=64,
                          query_tokens=64, chunk_tokens=64, seed=seed, progress=progress)


def mined_rows(examples: list[Example], negatives: int = 1, seed: int = SEED) -> list[tuple[str, str, float]]:
    """(query, chunk, label) rows from mined examples: each positive (1), its `negatives` hardest hybrid negatives
    (0) and one easy negative, another example's positive (0: the easy ones teach the head to read the pair at all
    before the hard ones refine it)."""
    rng = random.Random(seed)
    rows = [(e.query, e.positive, 1.0) for e in examples] + [(e.query, n, 0.0) for e in examples for n in e.negatives[:negatives]]
    if len(examples) > 1:
        rows += [(e.query, other.positive, 0.0) for e in examples
                 for other in [rng.choice(examples)] if other.positive != e.positive]
    return rows


def teacher_rows(index, labels: Path) -> list[tuple[str, str, float]]:
    """(query, chunk, relevance / 10) rows from an LLM's graded judgments of the hybrid top 20
    (evals/retrieval/teacher/labels.jsonl: per question, its candidates as [corpus, path, start line, relevance]).
    Every candidate is a row, the ones the LLM left out at 0: the teacher saw them all side by side, so a second
    answer keeps the grade it was given instead of counting as a negative."""
    items = [json.loads(line) for line in Path(labels).read_text().splitlines() if line.strip()]
    served = {c["name"]: c["collection"] for c in index.corpora()}
    texts: dict[tuple, str] = {}
    for corpus, path in sorted({(c[0], c[1]) for item in items for c in item["candidates"]}):
        if corpus in served:
            for _, meta in index.backend.scroll(served[corpus], {"path": path}):
                texts[(corpus, path, meta.get("start_line"))] = meta.get("text", "")
    return [(item["query"], texts[(c[0], c[1], c[2])], c[3] / 10) for item in items for c in item["candidates"]
            if (c[0], c[1], c[2]) in texts]


def train_reranker(rows: list[tuple[str, str, float]], base: Path, out: Path, *, seconds: float, batch_size: int = 16,
                   max_tokens: int = 128, layers: int = 3, lr: float = 1e-4, epochs: int = 1, seed: int = SEED,
                   progress: Callable[[str], None] = lambda _: None) -> dict:
    """Train a cross-encoder from the lower `layers` layers of the encoder at `base`, mean-pooled under a fresh
    one-logit head, with binary cross-entropy on (query, chunk, label in [0, 1]) rows; save it as fp16 safetensors in
    `out`. Three layers of six: a reranker reads 20-30 chunks per query on a CPU."""
    import torch
    from sentence_transformers.base.modules import Dense, Transformer
    from sentence_transformers.cross_encoder import CrossEncoder
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
    from sentence_transformers.sentence_transformer.modules import Pooling

    _seed(seed)
    encoder = Transformer(str(base), max_seq_length=max_tokens, config_kwargs={"num_hidden_layers": layers},
                          model_kwargs={"dtype": _float32()})
    width = encoder.auto_model.config.hidden_size
    model = CrossEncoder(modules=[encoder, Pooling(width, "mean"),
                                  Dense(width, 1, activation_function=torch.nn.Identity(), module_output_name="scores")],
                         device=_device())
    model.train()
    loss = BinaryCrossEntropyLoss(model)
    rng = random.Random(seed)
    steps = []
    for _ in range(epochs):
        order = rows[:]
        rng.shuffle(order)
        steps += [order[i: i + batch_size] for i in range(0, len(order), batch_size)]

    def step(batch: list[tuple]):
        queries, docs, labels = zip(*batch)
        return loss([list(queries), list(docs)], torch.tensor(labels, device=model.device))

    stats = _run(steps, step, list(model.parameters()), lr=lr, seconds=seconds, progress=progress)
    model.eval()
    model.save(str(out))
    return {**stats, "rows": len(rows), **half_precision(out)}


def _float32():
    import torch

    return torch.float32   # transformers would keep fp16 weights in fp16, which CPUs compute slowly and coarsely


def _to(features: dict, device) -> dict:
    return {k: v.to(device) if hasattr(v, "to") else v for k, v in features.items()}


def half_precision(folder: Path) -> dict:
    """Rewrite a saved model's float32 weights (every module's safetensors) as float16: half the bytes; kopt upcasts
    them when it loads."""
    import torch
    from safetensors.torch import load_file, save_file

    total = 0
    for path in sorted(Path(folder).rglob("model.safetensors")):
        weights = load_file(str(path))
        save_file({k: v.half() if v.dtype == torch.float32 else v for k, v in weights.items()}, str(path),
                  metadata={"format": "pt"})
        total += path.stat().st_size
    return {"weights_bytes": total}


def train(index, pairs_dir: Path, out: Path, *, seconds: float, limit: int | None = None, seed: int = SEED,
          which: tuple[str, ...] = ("embedder", "reranker"), teacher: Path | None = None, epochs: int = 1,
          progress: Callable[[str], None] = lambda _: None) -> dict:
    """The whole recipe: hard negatives from `index`, then each model in `which` under half of `seconds`
    (all of it when only one is trained); the models land in out/<EMBEDDER> and out/<RERANKER>. With `teacher`
    (an LLM's graded judgments, see teacher_rows) the reranker learns from those instead of the mined pairs."""
    from kopt.index.embed import DEFAULT_MODEL, model_dir

    started = time.monotonic()
    base = model_dir(DEFAULT_MODEL)
    report: dict = {"device": _device()}
    examples = _examples(index, pairs_dir, out, limit, seed, progress) if "embedder" in which or teacher is None else []
    if examples:
        report.update(examples=len(examples), negatives_seconds=round(time.monotonic() - started, 1))
    budget = seconds / len(which)
    if "embedder" in which:
        report["embedder"] = train_embedder(examples, base, out / EMBEDDER, seconds=budget, seed=seed, progress=progress)
    if "reranker" in which:
        rows = teacher_rows(index, teacher) if teacher is not None else mined_rows(examples, seed=seed)
        if not rows:
            raise KoptError(f"no candidate of {teacher} is in the index", hint="ingest the corpora it was judged on")
        report.setdefault("examples", len(rows))
        report["reranker"] = train_reranker(rows, base, out / RERANKER, seconds=budget, epochs=epochs, seed=seed,
                                            progress=progress)
    return report


def _examples(index, pairs_dir: Path, out: Path, limit: int | None, seed: int, progress: Callable[[str], None]) -> list[Example]:
    """The mined pairs' training examples, hard negatives included; kept in `out` by a digest of what made them."""
    pairs = load_pairs(pairs_dir)
    saved = out / f"examples-{_digest(pairs, limit, seed, index.corpora(), NEGATIVE_RULE)}.jsonl"
    if saved.is_file():  # the same pairs, draw and index: mining negatives again would give the same examples
        return [Example(**json.loads(line)) for line in saved.read_text().splitlines()]
    examples = build_examples(index, pairs, limit=limit, seed=seed, progress=progress)
    if not examples:
        raise KoptError("no training example: the index holds none of the pairs' positives",
                        hint="ingest the corpora the pairs were mined from (kopt ingest triton --path DIR)")
    out.mkdir(parents=True, exist_ok=True)
    saved.write_text("".join(json.dumps(vars(e)) + "\n" for e in examples))
    return examples
