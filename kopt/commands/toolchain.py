"""`kopt toolchain add|list|doctor`: the compiler environments targets compile through."""

from __future__ import annotations

import click

from kopt.commands.groups import Group
from kopt.errors import KoptError
from kopt.output import emit_json, json_option
from kopt.toolchain import SPECS, add_toolchain, inspect_toolchain, list_toolchains


def _print_table(toolchains) -> None:
    for tc in toolchains:
        click.echo(f"{tc.name:8} {'ready' if tc.ready else 'NOT READY':9} {tc.python}")
        for key, value in tc.facts.items():
            if value:
                click.echo(f"{'':18} {key}: {value}")
        for problem in tc.problems:
            click.echo(f"{'':18} problem: {problem}")


@click.group("toolchain", cls=Group)
def toolchain_cmd() -> None:
    """Compiler toolchains: NVIDIA Triton (built in, default) and triton-ascend (its own venv)."""


@toolchain_cmd.command("add")
@click.argument("name", type=click.Choice(sorted(SPECS)))
@click.option("--python", "python", default=None, help="Base interpreter for the venv (default: kopt's own).")
@json_option
def add_cmd(name: str, python: str | None, as_json: bool) -> None:
    """Create NAME's environment under KOPT_HOME/toolchains (idempotent; re-run to repair)."""
    tc = add_toolchain(name, python=python, say=(lambda _: None) if as_json else lambda m: click.echo(m, err=True))
    if as_json:
        emit_json(tc.to_dict())
    else:
        _print_table([tc])


@toolchain_cmd.command("list")
@json_option
def list_cmd(as_json: bool) -> None:
    """Every toolchain kopt knows, and whether it is ready."""
    toolchains = list_toolchains()
    if as_json:
        emit_json([tc.to_dict() for tc in toolchains])
    else:
        _print_table(toolchains)


@toolchain_cmd.command("doctor")
@click.argument("name", required=False)
@json_option
def doctor_cmd(name: str | None, as_json: bool) -> None:
    """Check toolchains (all, or NAME) actually work; exit 1 if one named is broken."""
    toolchains = [inspect_toolchain(name)] if name else list_toolchains()
    broken = None
    if name and not toolchains[0].ready:
        broken = f"toolchain {name} is not ready: {'; '.join(toolchains[0].problems)}"
    if as_json:
        failure = {"error": broken, "kind": "toolchain"} if broken else {}
        emit_json({"items": [tc.to_dict() for tc in toolchains], **failure})
    else:
        _print_table(toolchains)
    if broken:
        raise KoptError(broken)
