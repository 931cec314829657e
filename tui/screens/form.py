"""A small modal form whose submit may fail: the error shows in the form, never a crash.

The form fits any terminal from 80x24 up: its title stays at the top and its error
line and buttons at the bottom (both docked) while the fields scroll between them;
in a short terminal the fields and buttons drop their borders. Every text is shown
as typed (never read as markup), so a rule's ``[AVOID]`` stays on screen.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Static, TextArea

from ...core.base.errors import MemworkError
from .dialog import Dialog


@dataclass
class Field:
    """One input of a form."""

    name: str
    label: str
    value: str = ""
    placeholder: str = ""
    multiline: bool = False
    help: str = ""


#: Called with the values; a MemworkError it raises shows in the form, which stays open.
Submit = Callable[[dict[str, str]], Awaitable[Any]]


class FormScreen(Dialog[Any]):
    """Fields, a Save button and an error line; ctrl+s saves, escape cancels."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]
    DEFAULT_CSS = """
    FormScreen { align: center middle; }
    FormScreen > #form {
        width: 90; max-width: 100%; height: auto; max-height: 100%; padding: 0 2;
        border: thick $accent 60%; background: $surface;
    }
    FormScreen #form-title { dock: top; width: 1fr; text-style: bold; background: $surface; }
    FormScreen #form-foot { dock: bottom; height: auto; background: $surface; }
    FormScreen .field-label { margin-top: 1; color: $text-muted; }
    FormScreen.-short .field-label { margin-top: 0; }
    FormScreen .field-help { color: $text-muted; text-style: italic; }
    FormScreen Input.-textual-compact, FormScreen TextArea.-textual-compact {
        background: $panel;
        border-left: outer $primary 50% !important;
    }
    FormScreen Input.-textual-compact:focus, FormScreen TextArea.-textual-compact:focus {
        border-left: outer $accent !important;
    }
    FormScreen TextArea { height: 10; }
    FormScreen.-short TextArea { height: 4; }
    FormScreen #error { color: $error; height: auto; }
    FormScreen #form-buttons { height: auto; align-horizontal: right; }
    FormScreen Button { margin-left: 2; width: auto; }
    """

    def __init__(self, title: str, fields: list[Field], submit: Submit, save_label: str = "Save"):
        super().__init__()
        self.form_title = title
        self.fields = fields
        self.submit = submit
        self.save_label = save_label

    def compose(self) -> ComposeResult:
        # One scrolling box: the title is docked at its top, the error line and the
        # buttons at its bottom, so they stay in view while the fields scroll.
        with VerticalScroll(id="form", can_focus=False):
            yield Label(self.form_title, id="form-title", markup=False)
            for field in self.fields:
                yield Label(field.label, classes="field-label", markup=False)
                if field.multiline:
                    yield TextArea(field.value, id=f"f-{field.name}", soft_wrap=True)
                else:
                    yield Input(field.value, placeholder=field.placeholder, id=f"f-{field.name}")
                if field.help:
                    yield Static(field.help, classes="field-help", markup=False)
            with Vertical(id="form-foot"):
                yield Static("", id="error", markup=False)
                with Horizontal(id="form-buttons"):
                    yield Button("Cancel (esc)", id="cancel")
                    yield Button(f"{self.save_label} (ctrl+s)", id="save", variant="primary")

    def on_mount(self) -> None:
        if self.fields:
            self.query_one(f"#f-{self.fields[0].name}").focus()

    def values(self) -> dict[str, str]:
        """What the user typed."""
        out = {}
        for field in self.fields:
            widget = self.query_one(f"#f-{field.name}")
            if isinstance(widget, TextArea):
                out[field.name] = widget.text
            elif isinstance(widget, Input):  # compose() yields one of the two per field
                out[field.name] = widget.value
        return out

    async def action_save(self) -> None:
        error = self.query_one("#error", Static)
        try:
            result = await self.submit(self.values())
        except MemworkError as exc:
            # The one place a refused form input is reported: under the fields.
            error.update(str(exc))
            return
        self.dismiss(result if result is not None else True)

    def action_cancel(self) -> None:
        self.dismiss(None)

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        await self.action_save()

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            await self.action_save()
        else:
            self.dismiss(None)
