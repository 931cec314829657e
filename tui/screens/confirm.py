"""Ask before anything destructive."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Label, Static

from .dialog import Dialog


class ConfirmScreen(Dialog[bool]):
    """A yes/no question; dismisses with True only on an explicit yes."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", show=False),
        Binding("n,escape", "answer(False)", "No", show=False),
    ]
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > #confirm {
        width: 72; max-width: 100%; height: auto; max-height: 100%; padding: 0 2;
        border: thick $error 60%; background: $surface;
    }
    ConfirmScreen #title {
        dock: top; width: 1fr; text-style: bold; padding: 1 0; background: $surface;
    }
    ConfirmScreen #detail { color: $text-muted; margin-bottom: 1; }
    ConfirmScreen #confirm-buttons {
        dock: bottom; height: auto; align-horizontal: right; padding-bottom: 1;
        background: $surface;
    }
    ConfirmScreen.-short #confirm-buttons { padding-bottom: 0; }
    ConfirmScreen Button { margin-left: 2; width: auto; }
    """

    def __init__(self, title: str, detail: str = "", confirm: str = "Yes") -> None:
        super().__init__()
        self.title_text = title
        self.detail = detail
        self.confirm = confirm

    def compose(self) -> ComposeResult:
        # The question stays at the top and the buttons at the bottom; a long detail
        # (a lesson's text, what a restore undoes) scrolls between them. Record text
        # is shown as typed, never read as markup.
        with VerticalScroll(id="confirm", can_focus=False):
            yield Label(self.title_text, id="title", markup=False)
            if self.detail:
                yield Static(self.detail, id="detail", markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button("Cancel (n)", id="no")
                yield Button(f"{self.confirm} (y)", id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)
