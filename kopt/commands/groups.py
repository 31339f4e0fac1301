"""Click groups the commands share: "did you mean ...?" for a mistyped name, and lazy subcommands.

They live here, under the commands, rather than in kopt/cli.py, so a command group never imports the
CLI that loads it (ARCHITECTURE.md).
"""

from __future__ import annotations

import difflib
import importlib

import click

from kopt.output import JSON_HELP


def uniform_json_help(cmd: click.Command) -> click.Command:
    """Give a command's (and its subcommands') `--json` the shared wording, whoever wrote the option."""
    for param in cmd.params:
        if isinstance(param, click.Option) and "--json" in param.opts:
            param.help = JSON_HELP
    for sub in getattr(cmd, "commands", {}).values():
        uniform_json_help(sub)
    return cmd


class Group(click.Group):
    """A group that answers a mistyped command with the closest names ("did you mean ...?")."""

    def command_names(self, ctx: click.Context) -> list[str]:
        return self.list_commands(ctx)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            close = difflib.get_close_matches(name, self.command_names(ctx), n=3, cutoff=0.6)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            ctx.fail(f"No such command {name!r}.{hint}")
        return super().resolve_command(ctx, args)


class LazyGroup(Group):
    """A group whose subcommands are imported on first use; `lazy` maps name -> "module:attribute"
    under kopt.commands (a module not written yet simply hides its command)."""

    lazy: dict[str, str] = {}

    def command_names(self, ctx: click.Context) -> list[str]:
        return sorted(self.lazy)  # no imports: a typo costs nothing

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in self.lazy if self.get_command(ctx, name) is not None)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = self.lazy.get(name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(f"kopt.commands.{module_name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"kopt.commands.{module_name}":
                return None
            raise
        cmd = getattr(module, attr, None)
        return uniform_json_help(cmd) if cmd is not None else None
