"""Near-duplicate lesson clusters: pick one to merge into its strongest lesson."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from ...core.domain.decay import effective_confidence
from ..widgets.bars import plural
from .dialog import Dialog


class ClustersScreen(Dialog[list[dict[str, Any]] | None]):
    """Each option is a cluster; Enter merges it (the first lesson is kept)."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Close")]
    DEFAULT_CSS = """
    ClustersScreen { align: center middle; }
    ClustersScreen > Vertical {
        width: 100; max-width: 100%; height: auto; max-height: 100%; padding: 1 2;
        border: thick $accent 60%; background: $surface;
    }
    ClustersScreen OptionList { height: auto; max-height: 30; }
    ClustersScreen.-short > Vertical { padding: 0 1; }
    ClustersScreen.-short OptionList { max-height: 14; }
    ClustersScreen .muted { color: $text-muted; }
    """

    def __init__(self, groups: list[list[dict[str, Any]]], now: datetime) -> None:
        super().__init__()
        self.groups = groups
        self.now = now

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(
                f"{plural(len(self.groups), 'group')} of near-duplicate lessons",
                classes="pane-title",
            )
            yield Static(
                "Enter merges a group into its first lesson (the strongest): the others are "
                "marked superseded and their wording is kept in its history.",
                classes="muted",
            )
            options = []
            for n, group in enumerate(self.groups):
                label = Text()
                for i, lesson in enumerate(group):
                    mark = "keep  " if i == 0 else "merge "
                    conf = effective_confidence(lesson, self.now)
                    label.append(mark, style="bold green" if i == 0 else "yellow")
                    label.append(f"{conf:.2f}  ", style="bright_black")
                    label.append(lesson["content"])
                    if i < len(group) - 1:
                        label.append("\n")
                options.append(Option(label, id=str(n)))
            yield OptionList(*options, id="groups")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.groups[int(event.option.id or 0)])
