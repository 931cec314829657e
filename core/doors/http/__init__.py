"""``memwork serve``: the store over HTTP (MCP at ``/mcp``, the operations under ``/v1/``)."""
