"""Corpus manifests (corpora/<name>.toml): where a corpus lives, which files it takes, its version.

Three kinds of source: `git` (a checkout; version = the commit, and `--rev` reads another commit
straight from git without touching the work tree), `package` (an installed Python package;
version = its __version__; with `toolchain`, the package as installed in that toolchain's own environment),
`project` (kopt's own corpora/ folders; version = a digest of content).
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib
import os
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from kopt.errors import KoptError

LANGUAGES = {".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".c": "cpp", ".h": "cpp", ".hpp": "cpp", ".cu": "cpp",
             ".cuh": "cpp", ".py": "python", ".td": "tablegen", ".mlir": "mlir", ".md": "markdown", ".rst": "rst",
             ".yaml": "yaml", ".yml": "yaml"}
MAX_BYTES = 1_000_000


def corpora_dir() -> Path:
    """The knowledge shipped with kopt (the repository's corpora/, installed as kopt.corpora)."""
    from kopt.corpora import CORPORA_DIR

    return CORPORA_DIR


@dataclass
class Manifest:
    name: str
    source: str
    include: list[str]
    exclude: list[str] = field(default_factory=list)
    description: str = ""
    path_env: str | None = None
    package: str | None = None
    dir: str | None = None
    toolchain: str | None = None  # a package corpus read from this toolchain's environment (kopt.toolchain)


def load_manifest(name: str) -> Manifest:
    path = corpora_dir() / f"{name}.toml"
    if not path.is_file():
        known = sorted(p.stem for p in corpora_dir().glob("*.toml") if p.stem != "glossary")
        raise KoptError(f"unknown corpus {name!r}; known: {', '.join(known)}")
    try:
        data = tomllib.loads(path.read_text())
        return Manifest(**data)
    except (tomllib.TOMLDecodeError, TypeError) as exc:
        raise KoptError(f"{path}: bad corpus manifest ({exc})") from exc


def _toolchain_package(manifest: Manifest) -> tuple[Path, str]:
    """The package dir and `<distribution>-<version>` (triton-ascend-3.2.0, not the `triton` it installs as), as the
    toolchain's own Python sees them: the package is not importable from kopt's environment."""
    from kopt.toolchain import toolchain_python

    try:
        python = toolchain_python(manifest.toolchain)
    except KoptError as exc:
        raise KoptError(f"corpus {manifest.name} reads the {manifest.toolchain} toolchain's {manifest.package} package, "
                        f"which is not set up: run `kopt toolchain add {manifest.toolchain}` (or give --path DIR)") from exc
    pkg = manifest.package
    code = (f"import os, importlib.metadata as m, {pkg}; print(os.path.dirname({pkg}.__file__)); "
            f"dist = m.packages_distributions()[{pkg!r}][0]; print(dist, m.version(dist))")
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise KoptError(f"corpus {manifest.name}: the {manifest.toolchain} toolchain cannot import {manifest.package} "
                        f"({last}); run `kopt toolchain doctor`")
    root, dist_version = done.stdout.strip().splitlines()[-2:]
    return Path(root), "-".join(dist_version.split())


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if done.returncode:
        raise KoptError(f"git {' '.join(args)} failed in {root}: {done.stderr.strip()[:200]}")
    return done.stdout


@dataclass
class Source:
    """The resolved corpus: its root, version, and a reader of its selected files."""

    manifest: Manifest
    root: Path
    version: str
    files: list[str]
    rev: str | None = None  # a git revision to read the files from (None: the files on disk)
    exported: bool = False  # a git corpus's exported tree: version named by the caller, no history to read

    def read(self, rel: str) -> bytes:
        if self.rev:
            return subprocess.run(["git", "-C", str(self.root), "show", f"{self.rev}:{rel}"], capture_output=True,
                                  check=True).stdout
        return (self.root / rel).read_bytes()

    def size(self, rel: str) -> int:
        if self.rev:
            return int(_git(self.root, "cat-file", "-s", f"{self.rev}:{rel}").strip())
        return (self.root / rel).stat().st_size


def selected(paths: list[str], include: list[str], exclude: list[str]) -> list[str]:
    """Paths matching an include glob and no exclude glob (`**/` also matches zero folders)."""
    def match(p: str, globs: list[str]) -> bool:
        return any(fnmatch.fnmatchcase(p, g) or fnmatch.fnmatchcase(p, g.replace("/**/", "/"))
                   or (g.startswith("**/") and fnmatch.fnmatchcase(p, g[3:])) for g in globs)

    return sorted(p for p in paths if match(p, include) and not match(p, exclude))


def resolve(manifest: Manifest, path: Path | None = None, rev: str | None = None) -> Source:
    if manifest.source == "git":
        root = path or (Path(os.environ[manifest.path_env]) if manifest.path_env and os.environ.get(manifest.path_env) else None)
        if root is None:
            raise KoptError(f"corpus {manifest.name} needs a checkout: kopt ingest {manifest.name} --path DIR"
                            + (f" (or set {manifest.path_env})" if manifest.path_env else ""))
        root = Path(root).expanduser().resolve()
        if not root.is_dir():
            raise KoptError(f"{root}: no such directory (corpus {manifest.name})")
        if not (root / ".git").exists():  # an exported tree (a release tarball): the caller names its revision
            if not rev:
                raise KoptError(f"{root}: not a git checkout (corpus {manifest.name} takes its version from git); "
                                f"for an exported source tree, name its revision: --rev REV")
            listing = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
            return Source(manifest, root, rev, selected(listing, manifest.include, manifest.exclude), exported=True)
        ref = rev or "HEAD"
        version = _git(root, "rev-parse", "--short=8", f"{ref}^{{commit}}").strip()
        listing = _git(root, "ls-tree", "-r", "--name-only", ref) if rev else _git(root, "ls-files")
        files = selected(listing.splitlines(), manifest.include, manifest.exclude)
        return Source(manifest, root, version, files, rev)
    if rev:
        raise KoptError(f"--rev applies to git corpora; {manifest.name} is a {manifest.source} corpus")
    if manifest.source == "package" and manifest.toolchain and path is None:
        root, version = _toolchain_package(manifest)
    elif manifest.source == "package":
        try:
            module = importlib.import_module(manifest.package)
        except ImportError as exc:
            raise KoptError(f"corpus {manifest.name}: package {manifest.package!r} is not importable ({exc})") from exc
        root = path or Path(module.__file__).parent
        version = f"{manifest.package}-{getattr(module, '__version__', 'unknown')}"
    else:
        root = path or corpora_dir() / (manifest.dir or manifest.name)
        if not root.is_dir():
            raise KoptError(f"{root}: no such directory (corpus {manifest.name})")
    root = Path(root).resolve()
    files = selected([str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()], manifest.include, manifest.exclude)
    if manifest.source == "project" or path is not None:
        digest = hashlib.sha256()
        for rel in files:
            digest.update(rel.encode() + b"\0" + (root / rel).read_bytes())
        version = digest.hexdigest()[:8]
    return Source(manifest, root, version, files)
