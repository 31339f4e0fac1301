"""Fetch the real-kernel dev set's third-party sources and build its kopt tasks: `python -m evals.realkernels.fetch`.

Nothing third-party is committed. manifest.toml pins each package (version and the wheel's sha256); this
downloads the wheels from PyPI with pip, checks their hashes, unpacks their packages into .cache/tasks/, and
writes one runnable task per kernel, .cache/tasks/<name>.py: the third-party module that holds the kernels,
verbatim except that relative imports become absolute, followed by our task file (tasks/<name>.py) minus its
`# kopt: inline` import of that module. The kernels then sit in the file kopt diagnoses and rewrites, and the
rest of the package imports as a sibling of the task. Run it again after editing a task; it re-downloads nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
WHEELS = CACHE / "wheels"
TASKS_OUT = CACHE / "tasks"
INLINE_MARK = "# kopt: inline"
RELATIVE_IMPORT = re.compile(r"^(\s*)from\s+(\.+)([\w.]*)\s+import\b", re.M)


class FetchError(Exception):
    """A download, a hash or a task that does not fit the manifest: one line to act on."""


def load_manifest(path: Path = HERE / "manifest.toml") -> dict:
    manifest = tomllib.loads(path.read_text())
    packages = {p["name"]: p for p in manifest["package"]}
    for kernel in manifest["kernel"]:
        if kernel["package"] not in packages:
            raise FetchError(f"manifest: kernel {kernel['name']} names unknown package {kernel['package']}")
    return {"packages": packages, "kernels": manifest["kernel"]}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def download(package: dict) -> Path:
    """The package's pinned wheel in .cache/wheels (downloaded once), its sha256 checked."""
    WHEELS.mkdir(parents=True, exist_ok=True)
    wheel = WHEELS / package["wheel"]
    if not wheel.is_file():
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
               f"{package['name']}=={package['version']}", "-d", str(WHEELS)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0 or not wheel.is_file():
            raise FetchError(f"pip download {package['name']}=={package['version']} failed: "
                             f"{(done.stderr or done.stdout).strip().splitlines()[-1:]}")
    if sha256(wheel) != package["sha256"]:
        raise FetchError(f"{wheel.name}: sha256 {sha256(wheel)} is not the pinned {package['sha256']}")
    return wheel


def unpack(wheel: Path) -> None:
    """The wheel's importable files (not its .dist-info) into .cache/tasks/."""
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if ".dist-info/" not in name and not name.endswith("/"):
                archive.extract(name, TASKS_OUT)


def absolute_imports(source: str, module: str) -> str:
    """`from .utils import x` in module a.b.c -> `from a.b.utils import x` (the inlined copy is no package)."""
    package = module.split(".")[:-1]

    def absolute(match: re.Match) -> str:
        indent, dots, rest = match.groups()
        base = package[:len(package) - (len(dots) - 1)]
        target = ".".join([*base, rest] if rest else base)
        return f"{indent}from {target} import"

    return RELATIVE_IMPORT.sub(absolute, source)


def build_task(kernel: dict, package: dict) -> Path:
    """.cache/tasks/<name>.py: the kernel module, then our task without its inline import."""
    ours = HERE / "tasks" / f"{kernel['name']}.py"
    module_file = TASKS_OUT / (kernel["module"].replace(".", "/") + ".py")
    if not ours.is_file():
        raise FetchError(f"{ours}: no task file for kernel {kernel['name']}")
    if not module_file.is_file():
        raise FetchError(f"{module_file}: not in {package['wheel']}")
    lines = ours.read_text().splitlines(keepends=True)
    kept = [line for line in lines if INLINE_MARK not in line]
    if len(kept) == len(lines):
        raise FetchError(f"{ours}: no `{INLINE_MARK}` import of {kernel['module']}")
    head = (f"# kopt real-kernel task {kernel['name']}, built by `python -m evals.realkernels.fetch`: do not edit.\n"
            f"# Above the task part: {kernel['module']} from {package['name']} {package['version']} "
            f"({package['license']}), verbatim but for absolute imports.\n")
    third_party = absolute_imports(module_file.read_text(), kernel["module"])
    out = TASKS_OUT / f"{kernel['name']}.py"
    family = kernel["family"].replace("-", "_")  # FAMILY: an operator of `kopt eval suite --suite .cache/tasks`
    out.write_text(head + third_party.rstrip() + "\n\n\n# --- kopt task part (evals/realkernels/tasks/"
                   f"{kernel['name']}.py) ---\n" + "".join(kept).rstrip() + f'\n\nFAMILY = "{family}"\n')
    return out


def fetch(names: list[str] | None = None) -> list[Path]:
    """Download and unpack every pinned package, then build the tasks (all, or those named)."""
    manifest = load_manifest()
    TASKS_OUT.mkdir(parents=True, exist_ok=True)
    for package in manifest["packages"].values():
        unpack(download(package))
    kernels = [k for k in manifest["kernels"] if not names or k["name"] in names]
    unknown = set(names or []) - {k["name"] for k in kernels}
    if unknown:
        raise FetchError(f"not in the manifest: {', '.join(sorted(unknown))}")
    return [build_task(k, manifest["packages"][k["package"]]) for k in kernels]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="kernels to build (default: all)")
    args = parser.parse_args()
    try:
        built = fetch(args.names)
    except FetchError as exc:
        sys.exit(f"fetch: {exc}")
    print(f"{len(built)} tasks in {TASKS_OUT}")


if __name__ == "__main__":
    main()
