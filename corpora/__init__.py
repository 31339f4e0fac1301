"""The project's own knowledge, shipped inside kopt as `kopt.corpora`: corpus manifests, the query
glossary, pass notes and the pattern catalog. Everything that reads them finds them through CORPORA_DIR,
so a wheel install works the same as a checkout."""

from pathlib import Path

CORPORA_DIR = Path(__file__).resolve().parent
