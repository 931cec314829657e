"""The doors agents and people come in by: the CLI, the MCP server and the HTTP server.
Each is generated from the operations' declaration.
"""
