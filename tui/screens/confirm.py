"""Ask before anything destructive."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question; dismisses with True only on an explicit yes."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", show=False),
        Binding("n,escape", "answer(False)", "No", show=False),
    ]
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 72; height: auto; padding: 1 2;
        border: thick $error 60%; background: $surface;
    }
    ConfirmScreen #title { text-style: bold; margin-bottom: 1; }
    ConfirmScreen #detail { color: $text-muted; margin-bottom: 1; }
    ConfirmScreen Horizontal { height: auto; align-horizontal: right; }
    ConfirmScreen Button { margin-left: 2; }
    """

    def __init__(self, title: str, detail: str = "", confirm: str = "Yes") -> None:
        super().__init__()
        self.title_text = title
        self.detail = detail
        self.confirm = confirm

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, id="title")
            if self.detail:
                yield Static(self.detail, id="detail")
            with Horizontal():
                yield Button("Cancel (n)", id="no")
                yield Button(f"{self.confirm} (y)", id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)
