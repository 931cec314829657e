"""Completion from the names a store knows (tasks, projects), for free-text inputs.

The person may type any name (an agent may ask for a task nothing was recorded
for yet); a known one that starts with what was typed is offered inline, and →
takes it. The list is replaced whenever the store moves.
"""

from __future__ import annotations

from textual.suggester import Suggester


class KnownNames(Suggester):
    """Suggests the first known name that starts with the typed text (case aside)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=False)
        self.names: list[str] = []

    async def get_suggestion(self, value: str) -> str | None:
        if not value:
            return None
        for name in self.names:
            if name.casefold().startswith(value) and name.casefold() != value:
                return name
        return None
