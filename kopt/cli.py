"""The `kopt` command line.

Commands live in kopt/commands/<module>.py and load lazily, so `kopt --help` stays fast
and a command's heavy imports (torch, triton, qdrant) cost nothing to the others.
Every command shares one grammar: a KoptError is one line and exit 1, anything else is
a bug, shown in full only with --debug (or KOPT_DEBUG=1); `--json` prints one object with
the envelope keys `schema` and `kopt` (errors too: {"error": ..., "kind": ...}).
"""

from __future__ import annotations

import datetime
import difflib
import importlib
import json
import os
import sys
import traceback
from typing import TYPE_CHECKING, Any, Callable

import click

from kopt import __version__
from kopt.errors import KoptError

if TYPE_CHECKING:
    from rich.console import Console

SCHEMA = 1  # the --json envelope's version: bump it when a key changes meaning or goes away
JSON_HELP = "Print one JSON object (keys schema and kopt, then the result's) instead of text."
DATE_KEYS = {"created", "updated"}  # epoch seconds under these keys become ISO 8601 (UTC) in --json output
PIPED_WIDTH = 100  # columns when stdout is not a terminal and COLUMNS is not set

# command name -> "module:attribute" under kopt.commands
COMMANDS: dict[str, str] = {
    "compile": "harness:compile_cmd",
    "validate": "harness:validate_cmd",
    "bench": "harness:bench_cmd",
    "ingest": "knowledge:ingest_cmd",
    "search": "knowledge:search_cmd",
    "index": "knowledge:index_cmd",
    "diagnose": "diagnose:diagnose_cmd",
    "ask": "ask:ask_cmd",
    "optimize": "optimize:optimize_cmd",
    "runs": "runs:runs_cmd",
    "synthesize": "synthesize:synthesize_cmd",
    "eval": "evals:eval_cmd",
    "mcp": "mcp:mcp_cmd",
    "skills": "skills:skills_cmd",
    "toolchain": "toolchain:toolchain_cmd",
    "doctor": "doctor:doctor_cmd",
}


def json_option(f: Callable) -> Callable:
    """The `--json` flag every command that prints results takes, with the one wording."""
    return click.option("--json", "as_json", is_flag=True, help=JSON_HELP)(f)


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

    lazy: dict[str, str] = COMMANDS

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


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from kopt.commands.doctor import version_line

    click.echo(version_line())
    ctx.exit()


COMPLETION = 'Shell completion: eval "$(_KOPT_COMPLETE=bash_source kopt)" in ~/.bashrc (zsh_source, fish_source).'


@click.group(cls=LazyGroup, epilog=COMPLETION)
@click.option("--debug", is_flag=True, envvar="KOPT_DEBUG", help="Show full tracebacks.")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show kopt's, Python's, Triton's and torch's versions and the GPU, then exit.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """kopt: find out why a Triton kernel is slow, and make it faster."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def _iso_dates(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (datetime.datetime.fromtimestamp(v, datetime.timezone.utc).isoformat(timespec="seconds")
                    if k in DATE_KEYS and isinstance(v, (int, float)) and not isinstance(v, bool) else _iso_dates(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_iso_dates(v) for v in value]
    return value


def envelope(payload: object) -> dict[str, Any]:
    """The --json document: schema and kopt versions, then the payload's keys (a list goes under `items`)."""
    body = payload if isinstance(payload, dict) else {"items": payload}
    return {"schema": SCHEMA, "kopt": __version__, **_iso_dates(body)}


_emitted = False  # a result is on stdout: an error after it goes to stderr, so stdout stays one JSON document


def emit_json(payload: object) -> None:
    """Print a result as JSON for scripts (`--json`), in the shared envelope."""
    global _emitted
    click.echo(json.dumps(envelope(payload), indent=2, default=str))
    _emitted = True


def console() -> Console:
    """The rich console every command prints to: no auto-highlighting; the terminal's width, else COLUMNS or
    PIPED_WIDTH when piped (colour only on a terminal)."""
    from rich.console import Console

    columns = os.environ.get("COLUMNS", "")
    width = None if sys.stdout.isatty() else int(columns) if columns.isdigit() and int(columns) > 0 else PIPED_WIDTH
    return Console(highlight=False, width=width)


def _fail(message: str, kind: str, code: int, as_json: bool) -> None:
    """Report an error in the output's grammar and exit: a JSON object on stdout under --json, else one stderr line."""
    if as_json and not _emitted:
        click.echo(json.dumps(envelope({"error": message, "kind": kind}), indent=2))
    else:
        plain = kind in ("usage", "aborted", "interrupted")
        click.echo(message if plain else f"kopt: {'internal ' if kind == 'internal' else ''}error: {message}", err=True)
    sys.exit(code)


def error_kind(exc: KoptError) -> str:
    """TaskError -> "task", CompileError -> "compile", IndexError_ -> "index", KoptError -> "error"."""
    return type(exc).__name__.rstrip("_").removesuffix("Error").lower() if type(exc) is not KoptError else "error"


def main() -> None:
    # --debug is welcome anywhere on the line (`kopt compile X --debug`), not only before the command.
    debug = "--debug" in sys.argv[1:] or os.environ.get("KOPT_DEBUG") == "1"
    as_json = "--json" in sys.argv[1:]
    if debug:
        sys.argv[1:] = ["--debug", *(arg for arg in sys.argv[1:] if arg != "--debug")]
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        _fail("aborted", "aborted", 130, as_json)
    except click.ClickException as exc:
        if as_json:
            _fail(exc.format_message(), "usage", exc.exit_code, as_json)
        exc.show()
        sys.exit(exc.exit_code)
    except KoptError as exc:
        if debug:
            traceback.print_exc()
        _fail(str(exc), error_kind(exc), exc.exit_code, as_json)
    except KeyboardInterrupt:
        _fail("interrupted", "interrupted", 130, as_json)
    except Exception as exc:  # a bug: one line unless --debug
        if debug:
            traceback.print_exc()
        _fail(f"{type(exc).__name__}: {exc}" + ("" if debug else " (run with --debug for the traceback)"), "internal", 2,
              as_json)


if __name__ == "__main__":  # `python -m kopt.cli`: run the importable module, so commands and main share its state
    from kopt.cli import main as kopt_main

    kopt_main()
