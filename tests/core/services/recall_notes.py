"""Notes written through the CLI into one session, then searched: what the recall
tests ask of a store in each language and shape."""

from __future__ import annotations

from typing import Any


def first_found(cli: Any, notes: list[str], query: str) -> str:  # noqa: ANN401
    """The text of the first hit ``memwork search query`` gives once ``notes`` are
    observed into a new session, checked to be found by its words (not filled in)."""
    sid = cli("session", "start", "--title", "notes").out.strip()
    for note in notes:
        assert cli("observe", "--session", sid, note).code == 0
    found = cli("--json", "search", query).json()
    assert found, query
    assert not found[0].get("filled")  # found by its words, not filled in
    return str(found[0]["title"].split(": ", 1)[1])
