"""Messages the app sends to its panes."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class StoreChanged(Message):
    """Someone (this workbench or an agent's CLI) committed to the store."""

    generation: int


@dataclass
class JumpTo(Message):
    """Show a record: switch to its pane and select it (from search or a link)."""

    pane: str
    ref: str
