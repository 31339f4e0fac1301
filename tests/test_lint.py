"""The guard-rails run with the tests (so CI runs them): ruff's rules from pyproject.toml over kopt/, index/,
ingest/, corpora/ and tests/, and mypy over the files pyproject.toml names (the ground floor and a few stable
modules). `make lint` runs the same two commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing_in_kopt_and_tests():
    done = run("ruff", "check", "--no-cache", "kopt", "index", "ingest", "corpora", "tests")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_would_catch_an_unused_import(tmp_path):
    """The check is live: the same configuration rejects a file with an unused import."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n")
    done = run("ruff", "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(bad))
    assert done.returncode == 1 and "F401" in done.stdout


def test_mypy_passes_on_the_ground_floor():
    done = run("mypy", "--no-incremental")
    assert done.returncode == 0, done.stdout + done.stderr
