"""``memwork serve``: the store over HTTP (MCP at /mcp, the operations under /v1/)."""

from __future__ import annotations

from .main import Context


def run(ctx: Context) -> int:
    from ...storage.paths import resolve_store_path
    from ..http.app import serve

    return serve(
        resolve_store_path(ctx.args.db),
        host=ctx.args.host,
        port=ctx.args.port,
        tools=ctx.args.tools,
        search_workers=ctx.args.search_workers,
    )
