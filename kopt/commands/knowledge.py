"""`kopt ingest`, `kopt search` and `kopt index`: build, query and look after the knowledge index."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from kopt.commands.groups import Group
from kopt.config import load_settings
from kopt.errors import KoptError
from kopt.output import emit_json

INGEST_NICE = 10  # an ingest runs this much nicer than the searches, asks and MCP servers reading the index meanwhile


@contextmanager
def steps(enabled: bool = True) -> Iterator[Callable[[str], None]]:
    """A spinner on stderr naming the current step, on a terminal only (never under --json or when piped).

    Yields the function that names the next step; the spinner is gone when the block ends.
    """
    from rich.console import Console

    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield lambda _text: None
        return
    with console.status("starting", spinner="dots") as status:
        yield status.update


def yield_cpu_to_readers() -> None:
    """Lower this process's priority, so that readers of the index get the CPU first while it is rebuilt.

    With as many readers as cores, an ingest at the same priority takes its share from every search; at nice 10
    it gets about a tenth of a contended core and still all of an idle one.
    """
    try:
        os.nice(INGEST_NICE)
    except OSError:  # not allowed here: the ingest runs at the usual priority
        pass


@click.command("ingest")
@click.argument("corpus")
@click.option("--path", type=click.Path(file_okay=False, path_type=Path), help="Source folder (a checkout for triton/triton-ascend).")
@click.option("--rev", help="Git revision to ingest (read from git; the work tree is not touched); for an exported "
              "tree without .git, the revision it is.")
@click.option("--embed-model", help="sentence-transformers model name (default: settings.embed_model).")
@click.option("--expand", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="Pair files (JSONL) or a pairs folder whose queries expand the chunks' BM25 text (repeatable; "
                   "default for triton and triton-ascend: the committed evals/retrieval/pairs, where present).")
@click.option("--no-expand", is_flag=True, help="No document expansion.")
@click.option("--qdrant-url", help="A Qdrant server instead of the embedded index.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def ingest_cmd(corpus: str, path: Path | None, rev: str | None, embed_model: str | None, expand: tuple[Path, ...],
               no_expand: bool, qdrant_url: str | None, as_json: bool) -> None:
    """Ingest CORPUS (triton, triton-ascend, triton-pkg, patterns, passes) into the index."""
    if expand and no_expand:
        raise KoptError("give --expand or --no-expand, not both")
    from kopt.ingest import ingest_corpus

    yield_cpu_to_readers()
    settings = load_settings(embed_model=embed_model, qdrant_url=qdrant_url)
    summary = ingest_corpus(corpus, settings, path=path, rev=rev, progress=not as_json,
                            expand=[] if no_expand else list(expand) or None)
    if as_json:
        emit_json(summary.to_dict())
        return
    s = summary
    click.echo(f"{s.corpus}@{s.version} -> {s.collection}: {s.files} files, {s.chunks} chunks "
               f"(new {s.new}, reused {s.reused}, deleted {s.deleted}; embedded {s.embedded}), "
               f"{s.fallbacks} fallbacks, {s.skipped} skipped, {s.seconds:.1f}s")


@click.command("search")
@click.argument("query")
@click.option("--corpus", multiple=True, help="Corpus to search (repeatable or comma-separated; default: all).")
@click.option("--k", default=10, show_default=True, type=click.IntRange(1, 200))
@click.option("--mode", default="hybrid+ltr", show_default=True,
              type=click.Choice(["hybrid+ltr", "hybrid", "dense", "sparse", "hybrid+llm", "hybrid+rerank",
                                 "hybrid+graph"]),
              help="hybrid+ltr: hybrid, sparse and dense candidates ordered by kopt's learned ranker (trees fitted on "
                   "blind questions, weighed at half and spread over files; the best order measured without an LLM, "
                   "evals/RESULTS.md). "
                   "hybrid: the fused scores alone. hybrid+llm: the hybrid top 20 reordered by the configured LLM "
                   "(one call). hybrid+rerank: reordered by a cross-encoder you trained (kopt index train; it has not "
                   "beaten hybrid). hybrid+graph: hybrid, then the top hits lend score along the symbol graph (a "
                   "pass's TableGen def -> its implementation).")
@click.option("--target", type=click.Choice(["nvidia", "ascend"]),
              help="Only this target's compiler sources (with the pass notes and patterns); not with --corpus.")
@click.option("--language", help="Filter: cpp, python, tablegen, mlir, markdown, rst, yaml.")
@click.option("--kind", help="Filter: function, class, pass, td_record, mlir_test, doc, pattern, pass_note, code.")
@click.option("--path", "path_glob", help="Filter: a path or glob, e.g. 'lib/Dialect/TritonGPU/*'.")
@click.option("--pass", "pass_name", help="Filter: a pass record or flag, e.g. tritongpu-coalesce.")
@click.option("--symbol", help="Exact lookup of a defined symbol instead of a search.")
@click.option("--emitter", is_flag=True, help="Treat QUERY as a diagnostic message and find the code that emits it.")
@click.option("--qdrant-url", help="A Qdrant server instead of the embedded index.")
@click.option("--json", "as_json", is_flag=True)
def search_cmd(query: str, corpus: tuple[str, ...], k: int, mode: str, target: str | None, language: str | None,
               kind: str | None, path_glob: str | None, pass_name: str | None, symbol: str | None, emitter: bool,
               qdrant_url: str | None, as_json: bool) -> None:
    """Search the compiler sources, pass notes and patterns."""
    from kopt.index import worker

    if target and corpus:
        raise KoptError("give --target or --corpus, not both: --target chooses the corpora")
    if target and (symbol or emitter):
        raise KoptError("--target scopes a search; with --symbol or --emitter name the corpus with --corpus")
    corpora = [name.strip() for names in corpus for name in names.split(",") if name.strip()] or None
    settings = load_settings(qdrant_url=qdrant_url)
    llm, fetch = None, k
    if mode == "hybrid+llm" and not (symbol or emitter):
        from kopt.index.llm_rerank import RERANK_DEPTH, configured_llm

        llm, mode, fetch = configured_llm(settings), "hybrid", max(k, RERANK_DEPTH)  # the LLM reorders the top 20
    if symbol:
        op, args, kwargs = "lookup_symbol", (symbol, corpora), {}
    elif emitter:
        op, args, kwargs = "find_emitter", (query, corpora), {"k": k}
    else:
        op, args, kwargs = "search", (query,), {"corpus": corpora, "k": fetch, "mode": mode, "filters": {
            "target": target, "language": language, "kind": kind, "path": path_glob, "passes": pass_name}}
    with steps(not as_json) as step:
        step("asking the index's search worker")
        hits = worker.call(settings, op, *args, **kwargs)
        if hits is None:  # no warm worker (the first search of an index starts one): search here
            step("opening the index")
            from kopt.index import open_index

            index = open_index(settings)
            try:
                step({"lookup_symbol": f"looking up {symbol}", "find_emitter": "finding the code that emits the message",
                      "search": "embedding the query and searching" if mode != "sparse" else "searching"}[op])
                hits = getattr(index, op)(*args, **kwargs)
            finally:
                index.close()
        if llm is not None:
            from kopt.index.llm_rerank import rerank

            step(f"asking {getattr(llm, 'model', 'the LLM')} to rerank the top {len(hits)}")
            hits, fell_back = rerank(llm, query, hits)
            if fell_back:
                click.echo(fell_back, err=True)
    hits = hits[:k]
    if as_json:
        emit_json([{"rank": i, **h.to_dict()} for i, h in enumerate(hits, 1)])
        return
    if not hits:
        click.echo("no results")
    for i, h in enumerate(hits, 1):
        c = h.chunk
        snippet = " ".join(h.text.splitlines()[1:4]).strip()[:160]
        click.echo(f"{i:2d}. {h.score:.4f}  {h.cite()}  {c.qualname or c.symbol}  [{c.kind}]")
        click.echo(f"      {snippet}")


@click.group("index", cls=Group)
def index_cmd() -> None:
    """Look after the knowledge index: list, drop, doctor."""


@index_cmd.command("list")
@click.option("--json", "as_json", is_flag=True)
def index_list(as_json: bool) -> None:
    """Corpora in the index with their versions and sizes."""
    from kopt.index import open_index
    from kopt.ingest.pipeline import building_state

    index = open_index(load_settings())
    rows, building = index.corpora(), index.catalog.get("building", {})
    index.close()
    building = {name: {**b, "state": building_state(b)} for name, b in building.items()}
    if as_json:
        emit_json({"corpora": rows, "building": building, "where": index.where})
        return
    if not rows and not building:
        click.echo(f"the index at {index.where} is empty; run `kopt ingest triton-pkg` to start")
    for r in rows:
        x = r["expansion"]
        expanded = f"  expanded: {x['chunks']} chunks by {', '.join(x['files'])} ({x['digest']})" if x else ""
        if x:  # an index built before the question vectors serves without them until its next ingest
            expanded += (f", {r['questions']} with question vectors" if r.get("questions")
                         else f", no question vectors (re-run `kopt ingest {r['name']}`)")
        g = r["graph"]
        linked = f"  graph: {g['links']} links (v{g['version']}, {g['digest']})" if g else ""
        click.echo(f"{r['name']:<14} {r['version']:<14} {r['points']:>7} points  {r['collection']}  ({r['ingested']})"
                   f"{expanded}{linked}")
    for name, b in building.items():
        rerun = "" if b["state"].startswith("ingest in progress") else f"; re-run `kopt ingest {name}`"
        click.echo(f"{name:<14} {b['version']:<14} ({b['state']} into {b['collection']}{rerun})")


@index_cmd.command("drop")
@click.argument("corpus")
@click.option("--json", "as_json", is_flag=True)
def index_drop(corpus: str, as_json: bool) -> None:
    """Remove CORPUS (and any unfinished build of it) from the index."""
    from kopt.index.backends import entry_collections, open_backend

    backend = open_backend(load_settings())
    try:
        with backend.writer_lock(f"drop of {corpus}"):
            catalog = backend.read_catalog()
            entries = [e for e in (catalog["corpora"].pop(corpus, None), catalog["building"].pop(corpus, None)) if e]
            if not entries:
                raise KoptError(f"corpus {corpus!r} is not in the index")
            backend.write_catalog(catalog)
            collections = [c for e in entries for c in entry_collections(e)]
            backend.retire(collections)  # searches already running keep their view of it
    finally:
        backend.close()
    if as_json:
        emit_json({"dropped": corpus, "collections": collections})
    else:
        click.echo(f"dropped {corpus} ({', '.join(collections)})")


@index_cmd.command("doctor")
@click.option("--fix", is_flag=True, help="Remove collections no corpus uses (orphans of interrupted ingests).")
@click.option("--json", "as_json", is_flag=True)
def index_doctor(fix: bool, as_json: bool) -> None:
    """Check that every served collection opens and holds the points the catalog says.

    It reads the served versions as any search does (a running ingest does not disturb them) and leaves
    orphans alone while an ingest runs: its unfinished collections are not orphans.
    """
    from kopt.index.backends import open_backend
    from kopt.ingest.pipeline import building_state

    backend = open_backend(load_settings())
    problems, report = [], []
    try:
        try:
            catalog = backend.pin()
        except KoptError as exc:  # its own hint says "run kopt index doctor": say here what that means
            raise KoptError(f"{exc.args[0]}; move it aside and re-run `kopt ingest CORPUS` for each corpus you use "
                            "(then `kopt index doctor --fix` removes the old collections)") from exc
        for name, e in sorted(catalog["corpora"].items()):
            try:
                count = backend.count(e["collection"])
                ok = count == e.get("points")
                report.append({"corpus": name, "collection": e["collection"], "points": count, "ok": ok})
                if not ok:
                    problems.append(f"{name}: {count} points, catalog says {e.get('points')}; re-run `kopt ingest {name}`")
            except KoptError as exc:
                report.append({"corpus": name, "collection": e["collection"], "ok": False, "error": str(exc)})
                problems.append(f"{name}: {exc}; re-run `kopt ingest {name}`")
        building = {name: building_state(b) for name, b in sorted(catalog["building"].items())}
        writer = backend.writer()
        orphans = [] if writer else _orphans(backend)
        if fix and orphans:
            with backend.writer_lock("index doctor --fix"):
                orphans = _orphans(backend)  # again, now that no ingest can start
                backend.retire(orphans)
    finally:
        backend.close()
    if as_json:
        emit_json({"corpora": report, "building": building, "writer": writer, "orphans": orphans, "fixed": fix,
                   "problems": problems, **({"error": "; ".join(problems), "kind": "index"} if problems else {})})
    else:
        for r in report:
            click.echo(f"{'ok ' if r['ok'] else 'BAD'} {r['corpus']:<14} {r['collection']}  {r.get('points', r.get('error'))}")
        for name, state in building.items():
            click.echo(f"... {name:<14} {state}")
        if writer:
            click.echo(f"{writer}: orphan check skipped")
        if orphans:
            click.echo(f"{'removed' if fix else 'orphan collections (kopt index doctor --fix removes them)'}: {', '.join(orphans)}")
        click.echo("healthy" if not problems else "\n".join(problems))
    if problems:
        raise SystemExit(1)


def _orphans(backend) -> list[str]:
    """Collections neither served nor being built (left by interrupted ingests)."""
    from kopt.index.backends import entry_collections

    catalog = backend.read_catalog()
    used = {c for e in [*catalog["corpora"].values(), *catalog["building"].values()] for c in entry_collections(e)}
    return [c for c in backend.names() if c not in used]


from kopt.commands.train import train_cmd  # noqa: E402  (its own module: kopt/index/train.py's one command)

index_cmd.add_command(train_cmd)
