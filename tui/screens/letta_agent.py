"""A Letta agent an import brought: its name, description, model, tools, the slots its
memory blocks became, and its system prompt (read-only; escape closes)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from .dialog import Dialog


def agent_text(agent: dict[str, Any]) -> Text:
    """The agent as the screen shows it (also what a test reads)."""
    text = Text()
    text.append(f"Letta agent {agent.get('name') or agent.get('id') or '?'}\n", style="bold")
    for label, key in (
        ("description", "description"),
        ("model", "model"),
        ("type", "agent_type"),
        ("id", "id"),
        ("import", "import_id"),
    ):
        if agent.get(key):
            text.append(f"{label} ", style="bright_black")
            text.append(f"{agent[key]}\n")
    if agent.get("tool_names"):
        text.append("tools ", style="bright_black")
        text.append(", ".join(agent["tool_names"]) + "\n")
    if agent.get("blocks"):
        text.append("slots ", style="bright_black")
        text.append(", ".join(agent["blocks"]) + "\n")
    text.append("\nSystem prompt\n", style="bold")
    text.append(agent.get("system") or "(none)")
    return text


class LettaAgentScreen(Dialog[None]):
    """One imported Letta agent, scrollable; escape or q closes it."""

    BINDINGS = [Binding("escape,q,a", "dismiss", "Close")]
    DEFAULT_CSS = """
    LettaAgentScreen { align: center middle; }
    LettaAgentScreen > VerticalScroll {
        width: 96; max-width: 100%; height: 90%; padding: 0 2;
        border: thick $accent 60%; background: $surface;
    }
    LettaAgentScreen.-short > VerticalScroll { height: 100%; }
    """

    def __init__(self, agent: dict[str, Any]) -> None:
        super().__init__()
        self.agent = agent

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(agent_text(self.agent), id="letta-agent")
