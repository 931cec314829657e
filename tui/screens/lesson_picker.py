"""Pick a live lesson by typing part of it: the merge target of a proposed lesson.

Merging used to mean typing a raw lesson id. Here the live lessons are listed, the
suggested one (the proposal's near-duplicate, or its nearest lesson) first, and
the search line narrows them as you type (fuzzy, as the palette matches);
Enter picks the highlighted one, Escape gives up. Text is shown as typed.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.fuzzy import Matcher
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from .dialog import Dialog

#: How many lessons the list shows at most (the search narrows the rest).
SHOWN = 200


class LessonPicker(Dialog[dict[str, Any] | None]):
    """A search line over the live lessons; dismisses with the chosen lesson."""

    BINDINGS = [
        Binding("escape", "dismiss(None)", "Cancel"),
        Binding("down", "move(1)", "Next", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
    ]
    DEFAULT_CSS = """
    LessonPicker { align: center middle; }
    LessonPicker > Vertical {
        width: 100; max-width: 100%; height: auto; max-height: 100%; padding: 0 2;
        border: thick $accent 60%; background: $surface;
    }
    LessonPicker #picker-title { text-style: bold; width: 1fr; }
    LessonPicker .muted { color: $text-muted; }
    LessonPicker OptionList { height: auto; max-height: 20; }
    LessonPicker.-short OptionList { max-height: 10; }
    LessonPicker.-short > Vertical { border: none; }
    """

    def __init__(
        self, title: str, lessons: list[dict[str, Any]], suggested: str | None = None
    ) -> None:
        super().__init__()
        self.title_text = title
        # The suggested lesson first, then by confidence as given.
        self.lessons = sorted(lessons, key=lambda x: x["id"] != suggested)
        self.suggested = suggested

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, id="picker-title", markup=False)
            yield Static(
                "Type to narrow the live lessons; Enter merges into the highlighted one.",
                classes="muted",
            )
            yield Input(placeholder="search the lessons", id="picker-search")
            yield OptionList(*self._options(""), id="picker-lessons")

    def on_mount(self) -> None:
        listed = self.query_one("#picker-lessons", OptionList)
        if listed.option_count:
            listed.highlighted = 0
        self.query_one("#picker-search", Input).focus()

    def _options(self, query: str) -> list[Option]:
        matcher = Matcher(query) if query.strip() else None
        found = []
        for lesson in self.lessons:
            score = matcher.match(lesson["content"]) if matcher else 1.0
            if score > 0:
                found.append((score, lesson))
        if matcher:
            found.sort(key=lambda pair: -pair[0])
        options = []
        for _score, lesson in found[:SHOWN]:
            label = Text()
            if lesson["id"] == self.suggested:
                label.append("suggested  ", style="bold")
            label.append(lesson["content"])
            label.append(f"\n{lesson['scope']} · {lesson['id']}", style="dim")
            options.append(Option(label, id=lesson["id"]))
        return options

    @on(Input.Changed, "#picker-search")
    def _search(self, event: Input.Changed) -> None:
        listed = self.query_one("#picker-lessons", OptionList)
        listed.clear_options()
        listed.add_options(self._options(event.value))
        if listed.option_count:
            listed.highlighted = 0

    def action_move(self, step: int) -> None:
        listed = self.query_one("#picker-lessons", OptionList)
        if listed.option_count:
            current = listed.highlighted or 0
            listed.highlighted = max(0, min(listed.option_count - 1, current + step))

    @on(Input.Submitted, "#picker-search")
    def _submitted(self) -> None:
        listed = self.query_one("#picker-lessons", OptionList)
        if listed.highlighted is not None and listed.option_count:
            self._pick(listed.get_option_at_index(listed.highlighted).id)

    @on(OptionList.OptionSelected, "#picker-lessons")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self._pick(event.option.id)

    def _pick(self, lesson_id: str | None) -> None:
        chosen = next((x for x in self.lessons if x["id"] == lesson_id), None)
        if chosen is not None:
            self.dismiss(chosen)
