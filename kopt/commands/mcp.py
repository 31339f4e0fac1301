"""`kopt mcp`: serve kopt's tools to a coding agent over MCP (stdio for a local agent, HTTP for a remote one).

HTTP always needs a bearer token: one is generated and printed (stderr) unless given. Serving beyond this
machine (a non-loopback --host) needs a token chosen explicitly, so nobody exposes the tools by accident."""

from __future__ import annotations

import ipaddress
import secrets
import sys
from pathlib import Path

import click

MIN_TOKEN = 16  # characters of a token given explicitly: anything shorter is guessable


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name other than localhost may resolve anywhere
        return False


def parse_limits(values: tuple[str, ...]) -> dict[str, float]:
    """`--tool-timeout SECONDS` (every tool) and `--tool-timeout TOOL=SECONDS` (one), later ones winning."""
    from kopt.errors import KoptError
    from kopt.mcp_server import TOOL_LIMITS_S

    limits: dict[str, float] = {}
    for value in values:
        tool, _, seconds = value.rpartition("=")
        if tool and tool not in TOOL_LIMITS_S:
            raise KoptError(f"--tool-timeout {value}: unknown tool {tool!r}; tools: {', '.join(TOOL_LIMITS_S)}")
        try:
            number = float(seconds)
        except ValueError:
            number = -1.0
        if not 0 < number < 1e7:
            raise KoptError(f"--tool-timeout {value}: give seconds > 0, as SECONDS or TOOL=SECONDS")
        limits.update({tool: number} if tool else dict.fromkeys(TOOL_LIMITS_S, number))
    return limits


@click.command("mcp")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True,
              help="stdio: the agent starts kopt itself; http: streamable HTTP at http://HOST:PORT/mcp.")
@click.option("--workspace", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="The only folder the tools may read or write; the rounds store lives in its .kopt/.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="HTTP only: the address to listen on; a non-loopback one needs --token.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="HTTP only: the port to listen on.")
@click.option("--token", envvar="KOPT_MCP_TOKEN", show_envvar=True,
              help="HTTP only: the bearer token clients must send (Authorization: Bearer TOKEN); default: a new "
                   "random one, printed at start.")
@click.option("--tool-timeout", "tool_timeouts", multiple=True, metavar="[TOOL=]SECONDS",
              help="Time limit of every tool, or of one (repeatable); a call past it fails and its work is killed.")
def mcp_cmd(transport: str, workspace: Path, host: str, port: int, token: str | None,
            tool_timeouts: tuple[str, ...]) -> None:
    """Serve search, ask, compile_ir, diagnose, validate, bench, profile, start_run, record_round, runs and
    synthesize as MCP tools, every path confined to the workspace."""
    from kopt.errors import KoptError
    from kopt.mcp_server import serve

    if not workspace.is_dir():
        raise KoptError(f"{workspace}: --workspace must be an existing directory")
    limits = parse_limits(tool_timeouts)
    if transport == "http":
        if token is not None and len(token) < MIN_TOKEN:
            raise KoptError(f"--token / KOPT_MCP_TOKEN is {len(token)} characters; use at least {MIN_TOKEN} "
                            "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')")
        if token is None and not is_loopback(host):
            raise KoptError(f"--host {host} is not a loopback address: serving beyond this machine needs a token "
                            "chosen explicitly (--token or KOPT_MCP_TOKEN)")
        if token is None:
            token = secrets.token_urlsafe(32)
            print(f"kopt mcp: clients of http://{host}:{port}/mcp must send the header 'Authorization: Bearer {token}' "
                  "(set --token or KOPT_MCP_TOKEN to choose it)", file=sys.stderr, flush=True)
    serve(workspace, transport, host, port, token=token, limits=limits)
