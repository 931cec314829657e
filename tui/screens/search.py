"""Fuzzy search over all memory; Enter jumps to the record."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ...core.models.kinds import pane_of
from ...core.services.recall.scripts import ideograph
from ..messages import JumpTo
from ..widgets.bars import plural
from .dialog import Dialog

if TYPE_CHECKING:
    from ..app import MemworkApp

#: A search starts at this many characters: one letter matches most of memory, and
#: ranking thousands of records by it is the slowest keystroke and tells nothing. One
#: Chinese or Japanese character is often a whole word ("猫"), so it is enough there.
MIN_QUERY = 2


def long_enough(text: str) -> bool:
    """Whether ``text`` is worth searching (or highlighting) as the user typed it."""
    text = text.strip()
    return len(text) >= MIN_QUERY or (len(text) == 1 and ideograph(text))


KIND_STYLE = {
    "episode": "cyan",
    "card": "magenta",
    "lesson": "green",
    "rule": "green",
    "slot": "yellow",
    "session": "blue",
    "observation": "blue",
    "checkpoint": "bright_black",
    "audit": "bright_black",
}


def query_words(query: str) -> list[str]:
    """The words of a query worth highlighting (two characters or more, or one
    ideograph)."""
    return [word for word in re.split(r"\W+", query) if long_enough(word)]


def hit_label(kind: str, title: str, words: list[str]) -> Table:
    """One hit: its kind in a column of its own (a long title wraps under the title,
    not under the kind) and the query's words highlighted in the title."""
    text = Text(title)
    if words:
        text.highlight_words(words, style="bold reverse", case_sensitive=False)
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(width=12, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(Text(kind, style=KIND_STYLE.get(kind, "")), text)
    return grid


class SearchScreen(Dialog[None]):
    """A search box over episodes, cards, lessons, rules, slots, sessions and history."""

    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("down", "move(1)", "Next", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
    ]
    DEFAULT_CSS = """
    SearchScreen { align: center top; }
    SearchScreen > Vertical {
        width: 100; max-width: 100%; height: auto; max-height: 80%; margin-top: 3;
        padding: 0 1;
        border: thick $accent 60%; background: $surface;
    }
    SearchScreen OptionList { height: auto; max-height: 24; border: none; }
    SearchScreen #status { color: $text-muted; padding: 0 1; }
    """

    @property
    def workbench(self) -> MemworkApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Input(
                placeholder="Search all memory (episodes, lessons, cards, slots…)", id="query"
            )
            yield Static("", id="status")
            yield OptionList(id="hits")

    def on_mount(self) -> None:
        self.query_one("#query", Input).focus()
        self._show_status("")

    def _show_status(self, query: str, count: int | None = None) -> None:
        status = self.query_one("#status", Static)
        index = self.workbench.search_index
        if index is None:
            status.update("Indexing memory… results appear as soon as it is ready")
            self.set_timer(0.5, lambda: self.search(self.query_one("#query", Input).value))
        elif not query.strip():
            status.update(f"{plural(len(index), 'record')} indexed — type to search, Enter to jump")
        elif not long_enough(query):
            status.update(f"Keep typing: a search starts at {MIN_QUERY} characters")
        elif count == 0:
            status.update("No matches")
        else:
            status.update("1 match" if count == 1 else f"{count} best matches")

    @on(Input.Changed, "#query")
    def _changed(self, event: Input.Changed) -> None:
        self.search(event.value)

    def search(self, query: str) -> None:
        """Show the best hits for ``query``."""
        hits_view = self.query_one("#hits", OptionList)
        hits_view.clear_options()
        index = self.workbench.search_index
        if index is None or not long_enough(query):
            self._show_status(query)
            return
        hits = index.search(query, limit=20)
        words = query_words(query)
        for hit in hits:
            hits_view.add_option(
                Option(
                    hit_label(hit.doc.kind, hit.doc.title, words),
                    id=f"{hit.doc.kind}|{hit.doc.ref}",
                )
            )
        if hits:
            hits_view.highlighted = 0
        self._show_status(query, len(hits))

    def action_move(self, step: int) -> None:
        hits_view = self.query_one("#hits", OptionList)
        if hits_view.option_count:
            current = hits_view.highlighted or 0
            hits_view.highlighted = max(0, min(hits_view.option_count - 1, current + step))

    @on(Input.Submitted, "#query")
    def _submit(self) -> None:
        hits_view = self.query_one("#hits", OptionList)
        if hits_view.highlighted is not None and hits_view.option_count:
            self._jump(hits_view.get_option_at_index(hits_view.highlighted).id or "")

    @on(OptionList.OptionSelected, "#hits")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self._jump(event.option.id or "")

    def _jump(self, key: str) -> None:
        kind, _, ref = key.partition("|")
        if not ref:
            return
        self.dismiss()
        self.workbench.post_message(JumpTo(pane_of(kind), ref))
