"""`kopt mcp`: serve kopt's tools to a coding agent over MCP (stdio for a local agent, HTTP for a remote one)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("mcp")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True,
              help="stdio: the agent starts kopt itself; http: streamable HTTP at http://HOST:PORT/mcp.")
@click.option("--workspace", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="The only folder the tools may read or write; the rounds store lives in its .kopt/.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP only: the address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="HTTP only: the port to listen on.")
def mcp_cmd(transport: str, workspace: Path, host: str, port: int) -> None:
    """Serve search, ask, compile_ir, diagnose, validate, bench, profile, start_run, record_round, runs and
    synthesize as MCP tools, every path confined to the workspace."""
    from kopt.errors import KoptError
    from kopt.mcp_server import serve

    if not workspace.is_dir():
        raise KoptError(f"{workspace}: --workspace must be an existing directory")
    serve(workspace, transport, host, port)
