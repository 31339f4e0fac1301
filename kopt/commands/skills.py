"""`kopt skills list|install DIR`: the SKILL.md files shipped in kopt/skills/, copied into an agent's skill
folder (e.g. .claude/skills or ~/.codex/skills) so the agent follows kopt's discipline."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import click

from kopt.commands.groups import Group
from kopt.errors import KoptError
from kopt.output import emit_json, json_option


def skills_root() -> Path:
    return Path(__file__).resolve().parents[1] / "skills"


def front_matter(skill_md: Path) -> dict[str, str]:
    """The `name:` and `description:` lines between the leading `---` fences."""
    lines = skill_md.read_text().splitlines()
    if not lines or lines[0].strip() != "---" or "---" not in (ln.strip() for ln in lines[1:]):
        raise KoptError(f"{skill_md}: no front matter (--- name/description ---)")
    end = next(i for i, ln in enumerate(lines[1:], 1) if ln.strip() == "---")
    meta = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(":")
        if sep:
            meta[key.strip()] = value.strip()
    return meta


def shipped_skills() -> list[tuple[str, str, Path]]:
    """(name, description, folder) of every shipped skill."""
    out = []
    for skill_md in sorted(skills_root().glob("*/SKILL.md")):
        meta = front_matter(skill_md)
        out.append((meta.get("name", skill_md.parent.name), meta.get("description", ""), skill_md.parent))
    return out


def install(dest: Path, force: bool = False) -> list[dict[str, str]]:
    """Copy every skill folder into dest/<name>/. A file that exists there with other content is never
    overwritten without `force`: the whole install is refused first, so nothing is half-copied."""
    skills = shipped_skills()
    plan = [(src, dest / name / src.relative_to(folder)) for name, _, folder in skills
            for src in sorted(folder.rglob("*")) if src.is_file()]
    conflicts = [str(dst) for src, dst in plan if dst.exists() and not (dst.is_file() and filecmp.cmp(src, dst, False))]
    if conflicts and not force:
        raise KoptError(f"{conflicts[0]}: exists with other content ({len(conflicts)} file(s) differ); "
                        "kept as is", hint="pass --force to overwrite")
    results = []
    try:
        for src, dst in plan:
            same = dst.is_file() and filecmp.cmp(src, dst, False)
            if not same:
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
            results.append({"file": str(dst), "status": "unchanged" if same else "written"})
    except OSError as exc:
        raise KoptError(f"{dest}: cannot install skills: {exc.strerror or exc}") from exc
    return results


@click.group("skills", cls=Group)
def skills_cmd() -> None:
    """Skills (SKILL.md) that teach a coding agent kopt's discipline."""


@skills_cmd.command("list")
@json_option
def list_cmd(as_json: bool) -> None:
    """The skills kopt ships."""
    skills = shipped_skills()
    if as_json:
        emit_json([{"name": n, "description": d, "path": str(f)} for n, d, f in skills])
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"kopt skills ({skills_root()})")
    table.add_column("name")
    table.add_column("description")
    for name, description, _ in skills:
        table.add_row(name, description)
    Console().print(table)


@skills_cmd.command("install")
@click.argument("dest", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite skill files that were changed there.")
@json_option
def install_cmd(dest: Path, force: bool, as_json: bool) -> None:
    """Copy kopt's skills into DEST, an agent's skill folder: .claude/skills (Claude Code, per project) or
    ~/.claude/skills, ~/.codex/skills (Codex), or any folder your agent reads SKILL.md files from."""
    if dest.exists() and not dest.is_dir():
        raise KoptError(f"{dest}: not a directory")
    results = install(dest, force)
    if as_json:
        emit_json({"dest": str(dest), "files": results})
        return
    written = sum(r["status"] == "written" for r in results)
    click.echo(f"{len(shipped_skills())} skills in {dest}: {written} file(s) written, "
               f"{len(results) - written} unchanged")
