"""Pass notes: our own explanations of compiler passes, machine-readable through YAML front matter.

L3 maps "which pass introduced this structure" to a note (by pass name or flag, in pipeline order),
L4 retrieves notes beside compiler source, and ingest chunks them. A malformed note must fail loudly,
naming the file and field, so a bad edit never silently drops knowledge from the index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kopt.errors import KoptError
from kopt.vocabulary import FINDING_IDS

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: ~10x faster on the catalog

# pass: one pass of the pipeline; analysis: what passes query; lowering: how one family of ops becomes LLVM/PTX inside
# the to-LLVM conversion
KINDS = ("pass", "analysis", "lowering")
STAGES = ("ttir", "ttgir", "llir", "ttadapter")
PIPELINE_FNS = ("make_ttir", "make_ttgir", "make_llir", "ttir_to_linalg")
REQUIRED_FIELDS = ("pass", "kind", "stage", "pipeline_fn", "flags", "anchors", "findings", "version")
# Every note answers the same questions, so retrieval and L4 can quote the right part.
REQUIRED_SECTIONS = (
    "What it decides",
    "What steers it",
    "How it shows in the IR",
    "When it gives up",
    "What the source must satisfy",
)
VERSION_RE = re.compile(r"^(triton|triton-ascend)@[0-9a-f]{7,40}$")
INDEX_FILES = ("PIPELINE.md", "README.md")  # notes indexes, not notes

_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n(.*)\Z", re.DOTALL)


@dataclass
class PassNote:
    """One pass note: front matter fields plus the markdown body split into sections."""

    pass_name: str
    kind: str
    stage: str
    pipeline_fn: str | None
    flags: list[str]
    anchors: list[dict[str, str]]
    findings: list[str]
    version: str
    title: str
    body: str
    path: Path
    sections: dict[str, str] = field(default_factory=dict)

    @property
    def corpus(self) -> str:
        """Which compiler the note describes: 'triton' or 'triton-ascend'."""
        return self.version.split("@", 1)[0]


def _split(text: str) -> tuple[dict[str, Any] | None, str, str | None]:
    """Return (front matter, body, problem) for a note's text."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return None, text, "front matter: missing (the file must start with a '---' YAML block closed by '---')"
    try:
        meta = yaml.load(match.group(1), Loader=SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark else ""
        return None, match.group(2), f"front matter: not valid YAML{where}"
    if not isinstance(meta, dict):
        return None, match.group(2), "front matter: must be a YAML mapping"
    return meta, match.group(2), None


def _sections(body: str) -> tuple[str, dict[str, str]]:
    """The '# ' title and the text under each '## ' heading."""
    title = ""
    sections: dict[str, str] = {}
    current: str | None = None
    for line in body.splitlines():
        if line.startswith("# ") and not title:
            title = line[2:].strip()
        elif line.startswith("## "):
            current = line[3:].strip()
            sections[current] = ""
        elif current is not None:
            sections[current] += line + "\n"
    return title, {k: v.strip() for k, v in sections.items()}


def _anchor_problem(i: int, anchor: Any) -> str | None:
    if not isinstance(anchor, dict) or set(anchor) != {"path", "symbol"}:
        return f"anchors[{i}]: must be a mapping with exactly 'path' and 'symbol'"
    for key in ("path", "symbol"):
        value = anchor[key]
        if not isinstance(value, str) or not value.strip():
            return f"anchors[{i}].{key}: must be a non-empty string"
    if anchor["path"].startswith("/") or ".." in Path(anchor["path"]).parts:
        return f"anchors[{i}].path: must be relative to the checkout root"
    return None


def _problems(meta: dict[str, Any], title: str, sections: dict[str, str]) -> list[str]:
    problems = [f"{name}: missing" for name in REQUIRED_FIELDS if name not in meta]
    if not isinstance(meta.get("pass", ""), str) or not str(meta.get("pass", "")).strip():
        problems.append("pass: must be a non-empty string")
    if "kind" in meta and meta["kind"] not in KINDS:
        problems.append(f"kind: {meta['kind']!r} is not one of {', '.join(KINDS)}")
    if "stage" in meta and meta["stage"] not in STAGES:
        problems.append(f"stage: {meta['stage']!r} is not one of {', '.join(STAGES)}")
    fn = meta.get("pipeline_fn")
    if fn is not None and fn not in PIPELINE_FNS:
        problems.append(f"pipeline_fn: {fn!r} is not null or one of {', '.join(PIPELINE_FNS)}")
    if meta.get("kind") == "pass" and "pipeline_fn" in meta and fn is None:
        problems.append("pipeline_fn: a pass must name the pipeline function that runs it")
    flags = meta.get("flags", [])
    if not isinstance(flags, list) or not all(isinstance(f, str) and f.startswith("--") for f in flags):
        problems.append("flags: must be a list of strings starting with '--'")
    anchors = meta.get("anchors", [])
    if not isinstance(anchors, list) or not anchors:
        problems.append("anchors: must be a non-empty list")
    else:
        problems += [p for i, a in enumerate(anchors) if (p := _anchor_problem(i, a))]
    findings = meta.get("findings", [])
    if not isinstance(findings, list):
        problems.append("findings: must be a list of finding ids")
    else:
        problems += [f"findings: unknown finding id {f!r}" for f in findings if f not in FINDING_IDS]
    if "version" in meta and not VERSION_RE.match(str(meta["version"])):
        problems.append(f"version: {meta['version']!r} is not triton@<rev> or triton-ascend@<rev>")
    if not title:
        problems.append("title: missing (a '# ' heading after the front matter)")
    problems += [f"section: missing '## {s}'" for s in REQUIRED_SECTIONS if not sections.get(s)]
    return problems


def _parse(path: Path) -> tuple[PassNote | None, list[str]]:
    """The note and every schema problem in it, read and parsed once (no note when there is a problem)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [f"file: cannot read ({exc})"]
    meta, body, problem = _split(text)
    if meta is None:  # _split said why
        return None, [str(problem)]
    title, sections = _sections(body)
    problems = _problems(meta, title, sections)
    if problems:
        return None, problems
    return PassNote(
        pass_name=meta["pass"], kind=meta["kind"], stage=meta["stage"], pipeline_fn=meta["pipeline_fn"],
        flags=list(meta["flags"]), anchors=[dict(a) for a in meta["anchors"]], findings=list(meta["findings"]),
        version=str(meta["version"]), title=title, body=body.strip(), path=path, sections=sections,
    ), []


def check_pass_note(path: Path | str) -> list[str]:
    """Every schema problem in one note, as 'field: problem' strings; empty when the note is valid."""
    return _parse(Path(path))[1]


def read_pass_note(path: Path | str) -> PassNote:
    """Parse one note; KoptError names the file and the first bad field."""
    path = Path(path)
    note, problems = _parse(path)
    if note is None:
        raise KoptError(f"{path}: {problems[0]}", hint=f"{len(problems)} problem(s) in this pass note" if len(problems) > 1 else None)
    return note


def note_paths(dirs: list[Path | str] | Path | str) -> list[Path]:
    """All note files under the given folders (recursively), index files left out, in a stable order."""
    if isinstance(dirs, (str, Path)):
        dirs = [dirs]
    paths: set[Path] = set()
    for d in map(Path, dirs):
        if not d.is_dir():
            raise KoptError(f"{d}: pass notes folder not found")
        paths.update(p for p in d.rglob("*.md") if p.name not in INDEX_FILES)
    return sorted(paths)


def load_pass_notes(dirs: list[Path | str] | Path | str, *, strict: bool = True) -> list[PassNote]:
    """Load every note under dirs. Strict: the first malformed note raises KoptError; else it is skipped."""
    notes = []
    for path in note_paths(dirs):
        if strict:
            notes.append(read_pass_note(path))
        elif (note := _parse(path)[0]) is not None:
            notes.append(note)
    return notes


def resolve_anchor(anchor: dict[str, str], checkout: Path | str) -> bool:
    """True when the anchor's file exists in the checkout and its symbol appears in that file."""
    target = Path(checkout) / anchor["path"]
    try:
        return target.is_file() and anchor["symbol"] in target.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def notes_by_flag(notes: list[PassNote]) -> dict[str, PassNote]:
    """Map every pass name and command-line flag (without '--') to its note, for L3's trajectory lookup."""
    table: dict[str, PassNote] = {}
    for note in notes:
        table.setdefault(note.pass_name, note)
        for flag in note.flags:
            table.setdefault(flag.lstrip("-"), note)
    return table


@dataclass
class PipelineStep:
    """One row of a PIPELINE.md: position, pipeline function, pass name, and the note explaining it."""

    order: int
    pipeline_fn: str
    pass_name: str
    note: Path | None


_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*(\w+)\s*\|\s*`([^`]+)`\s*\|\s*(.*?)\s*\|")
_LINK = re.compile(r"\]\(([^)]+\.md)\)")


def load_pipeline(path: Path | str) -> list[PipelineStep]:
    """The ordered pass list of a PIPELINE.md table (| n | pipeline_fn | `pass` | [note](file.md) |)."""
    path = Path(path)
    if not path.is_file():
        raise KoptError(f"{path}: pipeline index not found")
    steps = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = _ROW.match(line)
        if row:
            link = _LINK.search(row.group(4))
            note = (path.parent / link.group(1)) if link else None
            steps.append(PipelineStep(int(row.group(1)), row.group(2), row.group(3), note))
    if not steps:
        raise KoptError(f"{path}: no pipeline rows found (expected '| n | pipeline_fn | `pass` | [note](x.md) |')")
    return steps
