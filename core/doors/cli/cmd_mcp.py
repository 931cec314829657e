"""``memwork mcp``: serve the store to an agent over MCP on stdin/stdout."""

from __future__ import annotations

from .main import Context


def run(ctx: Context) -> int:
    from ...storage.paths import resolve_store_path
    from ..mcp.server import serve

    # stdout carries the protocol from here on: nothing else may print to it.
    return serve(resolve_store_path(ctx.args.db), agent=ctx.args.agent, tools=ctx.args.tools)
