"""The baseline MCP server of ``bench_agent.py``: one trivial echo tool on the same SDK."""

from __future__ import annotations

import logging

from mcp.server import MCPServer
from mcp.server.mcpserver import server as sdk_server

# The same plain logging as `memwork mcp`, so neither side pays for rich.
sdk_server.configure_logging = lambda level="WARNING": logging.basicConfig(level=level)

server = MCPServer("echo", log_level="WARNING")


@server.tool()
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    server.run("stdio")
