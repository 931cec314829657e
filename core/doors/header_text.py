"""An HTTP header's value as text, read as UTF-8 at every server door.

ASGI servers hand header values over as bytes, and Starlette (so the MCP SDK's
request context) reads them as Latin-1. An agent's name is UTF-8 everywhere else
(``MEMWORK_AGENT``, ``memwork mcp --agent``, an agent token's name): read as
Latin-1, ``café`` would become another agent over HTTP.
"""

from __future__ import annotations

from ..base.errors import InvalidInput


def header_text(value: bytes | str, name: str) -> str:
    """``value`` (the header's bytes, or the Latin-1 text made of them) read as UTF-8;
    InvalidInput naming the header ``name`` when its bytes are not UTF-8. Text that
    Latin-1 cannot hold was read as text already and is returned as it is."""
    if isinstance(value, bytes):
        raw = value
    else:
        try:
            raw = value.encode("latin-1")
        except UnicodeEncodeError:
            return value
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(name, "must be UTF-8 text") from None
