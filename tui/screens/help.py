"""The help screen: every key, app-wide and per pane, with what it does.

It opens on the keys of the pane the user is in (listed first; the app's keys and
the other panes' are a scroll away), and lists every key a pane answers, footer or
not (``0``, Tab). Its top says which store this is and the line to give an agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from .dialog import Dialog

if TYPE_CHECKING:
    from ..panes.base import Pane


class HelpScreen(Dialog[None]):
    """Keys by pane; escape or ? closes it."""

    BINDINGS = [Binding("escape,question_mark,q,f1", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 96; max-width: 100%; height: 90%; padding: 0 2;
        border: thick $accent 60%; background: $surface;
    }
    HelpScreen.-short > VerticalScroll { height: 100%; }
    HelpScreen Static { margin-top: 1; }
    HelpScreen #help-store { margin-top: 0; }
    """

    def __init__(self, panes: Sequence[type[Pane]], current: str | None = None) -> None:
        super().__init__()
        self.panes = panes
        self.current = current

    def compose(self) -> ComposeResult:
        # The current pane's keys come first, so the screen opens on them: scrolling to
        # them once it was laid out showed the top for a moment, then jumped.
        first = [p for p in self.panes if p.PANE_ID == self.current and self.pane_bindings(p)]
        with VerticalScroll():
            yield Static(self._store_line(), id="help-store")
            for pane in first:
                yield Static(self._pane_keys(pane), id=f"help-{pane.PANE_ID}")
            yield Static(self._everywhere(), id="help-everywhere")
            for pane in self.panes:
                if pane not in first and self.pane_bindings(pane):
                    yield Static(self._pane_keys(pane), id=f"help-{pane.PANE_ID}")

    def _store_line(self) -> Text:
        """Which store this is, and the line that points an agent at it."""
        where = getattr(self.app, "store_location", None)
        if not where:
            title = getattr(self.app, "title_base", "")
            return Text(f"This store: {title}" if title else "", style="dim")
        return Text.assemble(
            ("This store ", "dim"),
            where,
            ("  ·  give an agent ", "dim"),
            (f"MEMWORK_DB={where}", "bold"),
        )

    @staticmethod
    def _grid() -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True, min_width=12)
        table.add_column()
        return table

    def _everywhere(self) -> Table:
        table = self._grid()
        table.add_row(Text("memwork — keys", style="bold underline"), "")
        table.add_row("", "")
        table.add_row(Text("Everywhere", style="bold"), "")
        table.add_row(
            "1–9 " + " ".join(p.KEY for p in self.panes if p.KEY),
            "switch pane: "
            + ", ".join(f"{p.KEY or n} {p.TITLE}" for n, p in enumerate(self.panes, start=1)),
        )
        keys: dict[str, list[str]] = {}
        tips: dict[str, str] = {}
        for binding in self.app.BINDINGS:
            if (
                isinstance(binding, Binding)
                and binding.description
                and "show_pane" not in binding.action
            ):
                keys.setdefault(binding.description, []).append(binding.key_display or binding.key)
                if binding.tooltip:
                    tips.setdefault(binding.description, binding.tooltip)
        for description, shown in keys.items():
            what = Text(description)
            if description in tips:
                what.append(f" — {tips[description]}", style="dim")
            table.add_row(Text(" / ".join(shown)), what)
        table.add_row("ctrl+p", "command palette: every action, and search over all memory")
        return table

    @staticmethod
    def pane_bindings(pane: type[Pane]) -> list[Binding]:
        return [
            b for b in getattr(pane, "BINDINGS", []) if isinstance(b, Binding) and b.description
        ]

    def _pane_keys(self, pane: type[Pane]) -> Table:
        table = self._grid()
        n = list(self.panes).index(pane) + 1
        table.add_row(
            Text(f"{n} {pane.TITLE}", style="bold"),
            Text(getattr(pane, "HELP", ""), style="italic"),
        )
        for binding in self.pane_bindings(pane):
            what = Text(binding.description)
            if binding.tooltip:
                what.append(f" — {binding.tooltip}", style="dim")
            table.add_row(Text(binding.key_display or binding.key), what)
        return table

    def plain_text(self, width: int = 100) -> str:
        """Everything the screen lists, as plain text (scrolled or not)."""
        console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
        console.print(self._everywhere())
        for pane in self.panes:
            if self.pane_bindings(pane):
                console.print(self._pane_keys(pane))
        return console.export_text()
