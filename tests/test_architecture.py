"""The import contract of ARCHITECTURE.md: no module imports from a layer above its own.

The layer table is read from ARCHITECTURE.md itself, so the document and the check cannot drift apart.
Every import counts, also one inside a function or under TYPE_CHECKING: a lazy upward import is still a loop.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def layer_table(text: str) -> dict[str, int]:
    """Module prefix -> layer number, from the ```layers block."""
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    assert block, "ARCHITECTURE.md has no ```layers block"
    table = {}
    for line in block.group(1).splitlines():
        number, _name, *modules = line.split()
        table.update({module: int(number) for module in modules})
    return table


def package_dirs(root: Path) -> dict[str, Path]:
    """Package name -> folder, as pyproject installs them (kopt.index lives in index/, ...)."""
    mapping = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    return {package: root / folder for package, folder in mapping.items()}


def modules(root: Path) -> dict[str, Path]:
    """Every kopt module -> its file (folders mapped by pyproject, symlinks not followed twice)."""
    found: dict[str, Path] = {}
    dirs = package_dirs(root)
    for package, folder in dirs.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join([package, *parts])
            if not any(name.startswith(other + ".") or name == other for other in dirs if len(other) > len(package)
                       and other.startswith(package + ".")):
                found[name] = path
    return found


def imports(name: str, path: Path) -> set[str]:
    """The kopt modules `path` imports, relative imports resolved."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return {module for module in found if module == "kopt" or module.startswith("kopt.")}


def placed_as(module: str, table: dict[str, int]) -> str | None:
    """The longest table entry that covers `module` (the bare `kopt` covers only kopt/__init__.py)."""
    covering = [entry for entry in table if module == entry or "." in entry and module.startswith(entry + ".")]
    return max(covering, key=len, default=None)


def violations(root: Path, table: dict[str, int]) -> list[str]:
    """Each upward import and each module the table does not place, as one readable line."""
    problems = []
    for name, path in sorted(modules(root).items()):
        entry = placed_as(name, table)
        if entry is None:
            problems.append(f"{name} is in no layer of ARCHITECTURE.md")
            continue
        targets = {placed_as(target, table) for target in imports(name, path)} - {None}
        problems += [f"{name} (layer {table[entry]}) imports {target} (layer {table[target]})"
                     for target in sorted(targets) if table[target] < table[entry]]
    return problems


def test_no_module_imports_from_a_higher_layer():
    table = layer_table((ROOT / "ARCHITECTURE.md").read_text())
    assert violations(ROOT, table) == []


def make_project(tmp: Path, files: dict[str, str]) -> Path:
    (tmp / "pyproject.toml").write_text('[tool.setuptools]\npackage-dir = {"kopt" = "kopt"}\n')
    for rel, text in files.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    return tmp


TOY_TABLE = {"kopt.cli": 1, "kopt.diagnose": 5, "kopt.vocabulary": 9, "kopt": 9}


def test_the_check_catches_an_upward_import_even_a_lazy_or_relative_one(tmp_path):
    root = make_project(tmp_path, {
        "kopt/__init__.py": "",
        "kopt/cli.py": "from kopt.diagnose import l1\n",
        "kopt/vocabulary.py": "def f():\n    from kopt.cli import main\n",
        "kopt/diagnose/__init__.py": "",
        "kopt/diagnose/l1.py": "from .. import cli\nfrom . import l2\n",
        "kopt/diagnose/l2.py": "import kopt.vocabulary\n",
        "kopt/stray.py": "",
    })
    assert violations(root, TOY_TABLE) == [
        "kopt.diagnose.l1 (layer 5) imports kopt.cli (layer 1)",
        "kopt.stray is in no layer of ARCHITECTURE.md",
        "kopt.vocabulary (layer 9) imports kopt.cli (layer 1)",
    ]


def test_the_layer_table_is_read_from_the_document():
    table = layer_table("text\n```layers\n1 entry   kopt.cli kopt.commands\n9 ground  kopt.errors\n```\n")
    assert table == {"kopt.cli": 1, "kopt.commands": 1, "kopt.errors": 9}
