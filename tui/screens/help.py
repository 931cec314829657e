"""The help screen: every key, app-wide and per pane, with what it does."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class HelpScreen(ModalScreen[None]):
    """Keys by pane; escape or ? closes it."""

    BINDINGS = [Binding("escape,question_mark,q,f1", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 96; height: 90%; padding: 1 2;
        border: thick $accent 60%; background: $surface;
    }
    """

    def __init__(self, panes: Sequence[type]) -> None:
        super().__init__()
        self.panes = panes

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(self._table())

    def _table(self) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        table.add_row(Text("memwork — keys", style="bold underline"), "")
        table.add_row("", "")
        table.add_row(Text("Everywhere", style="bold"), "")
        for n, pane in enumerate(self.panes, start=1):
            table.add_row(str(n), f"go to {pane.TITLE}")
        for binding in self.app.BINDINGS:
            if (
                isinstance(binding, Binding)
                and binding.description
                and "show_pane" not in binding.action
            ):
                table.add_row(binding.key_display or binding.key, binding.description)
        table.add_row("ctrl+p", "command palette: every action, and search over all memory")
        for pane in self.panes:
            bindings = [b for b in getattr(pane, "BINDINGS", []) if isinstance(b, Binding)]
            if not bindings:
                continue
            table.add_row("", "")
            table.add_row(
                Text(pane.TITLE, style="bold"), Text(getattr(pane, "HELP", ""), style="italic")
            )
            for binding in bindings:
                if binding.description:
                    table.add_row(binding.key_display or binding.key, binding.description)
        return table
