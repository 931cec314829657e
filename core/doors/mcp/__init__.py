"""``memwork mcp``: the store served to agents over the Model Context Protocol (stdio)."""
