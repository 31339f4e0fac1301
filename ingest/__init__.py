"""Corpus ingest: sources -> code-aware chunks -> enrichment -> embeddings -> the index (kopt.ingest)."""

from kopt.ingest.pipeline import IngestSummary, ingest_corpus

__all__ = ["IngestSummary", "ingest_corpus"]
