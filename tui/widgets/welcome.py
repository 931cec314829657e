"""What an empty store's first screen says: where the store is and how to point an
agent at it (the CLI, an MCP client's config, the Python API), in a few lines.

Shown by the Sessions pane, the first screen, while nothing has been recorded;
it goes as soon as an agent writes. Text is shown as typed (a path is never
markup) and wraps rather than being cut, so a long path can still be copied.
"""

from __future__ import annotations

import json

from rich.text import Text
from textual.widgets import Static


def agent_lines(location: str) -> list[tuple[str, str]]:
    """(door, what to give an agent) for a store at ``location``: the CLI, an MCP
    client's server entry and the Python API."""
    server = {"command": "memwork", "args": ["mcp"], "env": {"MEMWORK_DB": location}}
    return [
        ("CLI", f"MEMWORK_DB={location} memwork context --task <task>"),
        ("MCP", f'"memwork": {json.dumps(server)}'),
        ("Python", f"from memwork import Memory; memory = Memory({location!r})"),
    ]


def welcome_text(location: str) -> Text:
    """The first screen of an empty store."""
    out = Text()
    out.append("This store is empty: no agent has written to it yet.\n", style="bold")
    out.append("It is at ", style="dim")
    out.append(f"{location}\n")
    out.append("Give an agent ", style="dim")
    out.append(f"MEMWORK_DB={location}", style="bold")
    out.append(", through one of its doors:\n", style="dim")
    for door, line in agent_lines(location):
        out.append(f"  {door:<7}", style="bold")
        out.append(f"{line}\n")
    out.append(
        "What agents write shows up here as it happens (README: the agent's loop).",
        style="dim italic",
    )
    return out


class Welcome(Static):
    """The empty store's orientation, spanning the pane."""

    DEFAULT_CSS = """
    Welcome {
        height: auto;
        padding: 1 2;
        margin: 0 0 1 0;
        background: $boost;
        border-left: thick $accent;
    }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", markup=False, **kwargs)  # type: ignore[arg-type]
        self.display = False

    def show_for(self, location: str | None) -> None:
        """Show the orientation for a store at ``location``; None hides it."""
        self.display = location is not None
        if location is not None:
            self.update(welcome_text(location))
