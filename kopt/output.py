"""How kopt prints: the rich console and the `--json` envelope.

Its own ground-floor module (ARCHITECTURE.md) so that commands and reports can print without importing
the CLI that loads them: one console width rule and one JSON grammar for every command.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
from typing import TYPE_CHECKING, Any, Callable

import click

from kopt import __version__

if TYPE_CHECKING:
    from rich.console import Console

SCHEMA = 1  # the --json envelope's version: bump it when a key changes meaning or goes away
JSON_HELP = "Print one JSON object (keys schema and kopt, then the result's) instead of text."
DATE_KEYS = {"created", "updated"}  # epoch seconds under these keys become ISO 8601 (UTC) in --json output
PIPED_WIDTH = 100  # columns when stdout is not a terminal and COLUMNS is not set


def json_option(f: Callable) -> Callable:
    """The `--json` flag every command that prints results takes, with the one wording."""
    return click.option("--json", "as_json", is_flag=True, help=JSON_HELP)(f)


def iso_dates(value: Any) -> Any:
    """A copy of `value` where epoch seconds under DATE_KEYS read as ISO 8601 (UTC)."""
    if isinstance(value, dict):
        return {k: (datetime.datetime.fromtimestamp(v, datetime.UTC).isoformat(timespec="seconds")
                    if k in DATE_KEYS and isinstance(v, (int, float)) and not isinstance(v, bool) else iso_dates(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [iso_dates(v) for v in value]
    return value


def envelope(payload: object) -> dict[str, Any]:
    """The --json document: schema and kopt versions, then the payload's keys (a list goes under `items`)."""
    body = payload if isinstance(payload, dict) else {"items": payload}
    return {"schema": SCHEMA, "kopt": __version__, **iso_dates(body)}


_emitted = False  # a result is on stdout: an error after it goes to stderr, so stdout stays one JSON document


def emit_json(payload: object) -> None:
    """Print a result as JSON for scripts (`--json`), in the shared envelope."""
    global _emitted
    click.echo(json.dumps(envelope(payload), indent=2, default=str))
    _emitted = True


def json_emitted() -> bool:
    """True once a command printed its JSON result (an error then goes to stderr)."""
    return _emitted


def console() -> Console:
    """The rich console every command prints to: no auto-highlighting; the terminal's width, else COLUMNS or
    PIPED_WIDTH when piped (colour only on a terminal)."""
    from rich.console import Console

    columns = os.environ.get("COLUMNS", "")
    width = None if sys.stdout.isatty() else int(columns) if columns.isdigit() and int(columns) > 0 else PIPED_WIDTH
    return Console(highlight=False, width=width)
