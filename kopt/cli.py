"""The `kopt` command line.

Commands live in kopt/commands/<module>.py and load lazily, so `kopt --help` stays fast
and a command's heavy imports (torch, triton, qdrant) cost nothing to the others.
Every command shares one grammar: a KoptError is one line and exit 1, anything else is
a bug, shown in full only with --debug (or KOPT_DEBUG=1); `--json` prints one object with
the envelope keys `schema` and `kopt` (errors too: {"error": ..., "kind": ...}), written by
kopt/output.py, which commands import instead of this module.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

import click

from kopt.commands.groups import LazyGroup
from kopt.errors import KoptError
from kopt.output import envelope, json_emitted

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
    "findings": "findings:findings_cmd",
    "toolchain": "toolchain:toolchain_cmd",
    "doctor": "doctor:doctor_cmd",
}


class KoptGroup(LazyGroup):
    """The top-level group: the command table above, loaded lazily."""

    lazy = COMMANDS


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from kopt.commands.doctor import version_line

    click.echo(version_line())
    ctx.exit()


COMPLETION = 'Shell completion: eval "$(_KOPT_COMPLETE=bash_source kopt)" in ~/.bashrc (zsh_source, fish_source).'


@click.group(cls=KoptGroup, epilog=COMPLETION)
@click.option("--debug", is_flag=True, envvar="KOPT_DEBUG", help="Show full tracebacks.")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show kopt's, Python's, Triton's and torch's versions and the GPU, then exit.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """kopt: find out why a Triton kernel is slow, and make it faster."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def _fail(message: str, kind: str, code: int, as_json: bool) -> None:
    """Report an error in the output's grammar and exit: a JSON object on stdout under --json, else one stderr line."""
    if as_json and not json_emitted():
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


if __name__ == "__main__":  # `python -m kopt.cli`
    main()
