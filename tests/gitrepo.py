"""Fixture checkouts: kopt reads the triton corpora from git, so test trees are committed before they are ingested."""

from __future__ import annotations

import subprocess
from pathlib import Path

GIT = ["git", "-c", "user.name=kopt", "-c", "user.email=kopt@example.invalid"]


def commit_all(root: Path, message: str = "fixture") -> Path:
    """Commit everything under `root` (made a repository first if it is not one) and return `root`."""
    if not (Path(root) / ".git").exists():
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(GIT + ["-C", str(root), "commit", "-qm", message], check=True)
    return Path(root)
