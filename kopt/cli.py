"""The `kopt` command line.

Commands live in kopt/commands/<module>.py and load lazily, so `kopt --help` stays fast
and a command's heavy imports (torch, triton, qdrant) cost nothing to the others.
Every command shares one error policy: a KoptError is one line and exit 1; anything else
is a bug, shown in full only with --debug (or KOPT_DEBUG=1).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback
from typing import TYPE_CHECKING

import click

from kopt.errors import KoptError

if TYPE_CHECKING:
    from rich.console import Console

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
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use; `lazy` maps name -> "module:attribute"
    under kopt.commands (a module not written yet simply hides its command)."""

    lazy: dict[str, str] = COMMANDS

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
        return getattr(module, attr, None)


@click.group(cls=LazyGroup)
@click.option("--debug", is_flag=True, envvar="KOPT_DEBUG", help="Show full tracebacks.")
@click.version_option(package_name="kopt")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """kopt: find out why a Triton kernel is slow, and make it faster."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def emit_json(payload: object) -> None:
    """Print a result as JSON for scripts (`--json`)."""
    click.echo(json.dumps(payload, indent=2, default=str))


def console() -> Console:
    """The rich console every command prints to: no auto-highlighting; 160 wide when piped, so output is stable."""
    from rich.console import Console

    return Console(highlight=False, width=None if sys.stdout.isatty() else 160)


def main() -> None:
    # --debug is welcome anywhere on the line (`kopt compile X --debug`), not only before the command.
    debug = "--debug" in sys.argv[1:] or os.environ.get("KOPT_DEBUG") == "1"
    if debug:
        sys.argv[1:] = ["--debug", *(arg for arg in sys.argv[1:] if arg != "--debug")]
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except KoptError as exc:
        if debug:
            traceback.print_exc()
        click.echo(f"kopt: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # a bug: one line unless --debug
        if debug:
            traceback.print_exc()
        else:
            click.echo(f"kopt: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
