"""Context: the exact text an agent would get, live, for any task and project (the
known ones offered), budget and style; per-section token estimates, what the budget
dropped, copy and save; the records behind the line under the cursor, and Enter to
open the first of them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import Input, Label, Select, Static, TextArea

from ...core.base.env_settings import token_budget_or_default
from ...core.base.errors import InvalidInput
from ...core.domain.targets import Targets
from ...core.services.context.files import save_text, target_path
from ..screens.form import Field, FormScreen
from ..widgets.bars import plural
from ..widgets.context_side import render_side, source_name
from ..widgets.known_names import KnownNames
from ..widgets.wrapped_text import WrappedTextArea
from .base import Pane

#: Wait this long after the last change before rebuilding (typing a budget is several changes).
DEBOUNCE_SECONDS = 0.15
STYLES = ("default", "episodic")
_WHOLE_NUMBER = re.compile(r"\d+")


class Params(NamedTuple):
    """What the controls ask the context for ("" task or project: none)."""

    task: str
    project: str
    budget: int
    style: str


def parse_budget(text: str) -> int:
    """A budget in tokens: a whole number >= 0, or ``InvalidInput`` naming ``budget``."""
    value = text.strip().replace("_", "").replace(",", "")
    if not value:
        raise InvalidInput("budget", "enter a whole number of tokens (0 or more)")
    if value.startswith("-") and _WHOLE_NUMBER.fullmatch(value[1:]):
        raise InvalidInput("budget", f"must be 0 or more (got {text.strip()})")
    if not _WHOLE_NUMBER.fullmatch(value):
        raise InvalidInput("budget", f"must be a whole number >= 0 (got {text.strip()!r})")
    return int(value)


class ContextPane(Pane):
    """Controls on top; the exact text on the left; sections, tokens and drops on the right."""

    PANE_ID = "context"
    TITLE = "Context"
    HELP = (
        "The preview is exactly what memwork context prints for the task, project, budget "
        "and style, rebuilt as you change them. Type any task or project: one nothing was "
        "recorded for still gets its lessons and the global memory (→ completes a known "
        "name). Tokens are an estimate (characters / 3). "
        "When over budget, whole lines are dropped from the lowest-priority section up; "
        "the side panel lists them. c copies (OSC 52, works over SSH), s saves to a file. "
        "The line under the cursor names the records it came from; Enter opens the first "
        "(a rule's episodes and a card's sightings are listed beside it)."
    )
    PALETTE_ANYWHERE = frozenset(
        {
            "focus_task",
            "focus_project",
            "focus_budget",
            "toggle_style",
            "copy",
            "save",
            "focus_preview",
        }
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "focus_task", "Task"),
        Binding("p", "focus_project", "Project"),
        Binding("b", "focus_budget", "Budget"),
        Binding("e", "toggle_style", "Style"),
        Binding("c", "copy", "Copy"),
        Binding("s", "save", "Save to file"),
        Binding(
            "enter",
            "open_source",
            "Open source",
            key_display="⏎",
            tooltip="Open the record the line under the cursor came from",
        ),
        Binding("escape", "focus_preview", "Preview"),
    ]
    #: Letter keys that would otherwise type into the budget field or a search.
    LETTER_ACTIONS: ClassVar[set[str]] = {
        "focus_task",
        "focus_project",
        "focus_budget",
        "toggle_style",
        "copy",
        "save",
    }

    def __init__(self) -> None:
        super().__init__()
        self.targets = Targets({}, [])
        self.text = ""
        self.result: dict[str, Any] | None = None
        #: The controls the shown preview was built for.
        self.shown_params: Params | None = None
        self.task_names = KnownNames()
        self.project_names = KnownNames()
        self.budget = token_budget_or_default()
        self._timer: Timer | None = None
        self.save_path = ""

    def compose(self) -> ComposeResult:
        # Compact fields (one line each); below 100 columns they take two rows.
        with Horizontal(id="context-controls"):
            with Horizontal(classes="control-row"):
                yield Label("Task", classes="control-label")
                yield Input(
                    placeholder="any task (→ completes)",
                    id="context-task",
                    suggester=self.task_names,
                    compact=True,
                )
                yield Label("Project", classes="control-label")
                yield Input(
                    placeholder="any project",
                    id="context-project",
                    suggester=self.project_names,
                    compact=True,
                )
            with Horizontal(classes="control-row"):
                yield Label("Budget", classes="control-label")
                yield Input(
                    str(self.budget), id="context-budget", placeholder="tokens", compact=True
                )
                yield Label("Style", classes="control-label")
                yield Select(
                    [(style, style) for style in STYLES],
                    allow_blank=False,
                    value="default",
                    id="context-style",
                    compact=True,
                )
        yield Static("", id="context-budget-error", markup=False)
        with Horizontal(classes="split"):
            with Vertical(id="context-preview-column"):
                yield Static("", id="context-preview-title")
                yield WrappedTextArea(
                    "",
                    id="context-preview",
                    read_only=True,
                    soft_wrap=True,
                    highlight_cursor_line=False,
                    placeholder="(empty: with these settings the agent gets no context)",
                )
                yield Static("", id="context-line-source")
            with VerticalScroll(classes="detail-column", id="context-side"):
                yield Static("", id="context-sections")

    # -- loading ----------------------------------------------------------------------
    def load(self) -> None:
        self._load_targets()

    @work(thread=True, exclusive=True, group="context-load", exit_on_error=False)
    def _load_targets(self) -> None:
        self.deliver(self._show_targets, self.service.targets())

    def _show_targets(self, targets: Targets) -> None:
        self.targets = targets
        self.task_names.names = list(targets.tasks)
        self.project_names.names = list(targets.projects)
        self._rebuild()  # the store moved: the context may have too

    # -- controls ---------------------------------------------------------------------
    def params(self) -> Params:
        """What the controls say now (the budget: the last valid one)."""
        style = self.query_one("#context-style", Select).value
        return Params(
            self.query_one("#context-task", Input).value.strip(),
            self.query_one("#context-project", Input).value.strip(),
            self.budget,
            style if isinstance(style, str) else "default",
        )

    @on(Input.Changed, "#context-task, #context-project")
    def _target_changed(self) -> None:
        self._schedule()

    @on(Select.Changed)
    def _select_changed(self) -> None:
        self._schedule()

    @on(Input.Changed, "#context-budget")
    def _budget_changed(self, event: Input.Changed) -> None:
        error = self.query_one("#context-budget-error", Static)
        try:
            self.budget = parse_budget(event.value)
        except InvalidInput as exc:
            error.update(f"{exc} · the preview keeps the last valid budget")
            error.display = True
            event.input.set_class(True, "-invalid")
            return
        error.update("")
        error.display = False
        event.input.set_class(False, "-invalid")
        self._schedule()

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_focus_preview()

    def _schedule(self) -> None:
        """Rebuild after a short pause, so typing "1500" builds once, not four times."""
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE_SECONDS, self._rebuild)

    @property
    def rebuild_pending(self) -> bool:
        return self._timer is not None

    def _rebuild(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._set_building(True)
        self._build(self.params())

    def _set_building(self, building: bool) -> None:
        self.query_one("#context-preview-title", Static).set_class(building, "building")

    @work(thread=True, exclusive=True, group="context-build", exit_on_error=False)
    def _build(self, params: Params) -> None:
        data = self.service.context(
            params.task or None, params.budget, params.style, project=params.project or None
        )
        self.deliver(self._show_preview, params, data)

    # -- rendering --------------------------------------------------------------------
    def _show_preview(self, params: Params, data: dict[str, Any]) -> None:
        self.shown_params = params
        self.result = data
        self._set_building(False)
        preview = self.query_one("#context-preview", TextArea)
        if data["text"] != self.text or preview.text != data["text"]:
            self.text = data["text"]
            preview.load_text(self.text)
        title = Text("Exact text the agent gets", style="bold")
        if params.task and not self.targets.tasks.get(params.task):
            # Still what an agent gets for it: its lessons and the global memory.
            known = params.task in self.targets.tasks
            title.append(
                " · no episodes yet" if known else " · a new task",
                style="italic",
            )
        title.append(f" · {plural(len(self.text), 'character')}", style="dim")
        self.query_one("#context-preview-title", Static).update(title)
        self._redraw_side()
        self._show_line_source()

    def _side_width(self) -> int:
        """Cells a line of the side panel may take (two spare for its scrollbar)."""
        # The panel's own width, not its text's: that one shrinks when the scrollbar
        # appears, and lines shaped before or after it would differ.
        shown = self.query_one("#context-side").size.width
        if not shown:  # not laid out yet: what its CSS gives it at this terminal width
            shown = 28 if self.app.size.width < 100 else 46
        return max(24, shown - 2)

    def on_resize(self) -> None:
        # The side panel's lines are shaped to its width: shape them again.
        if self.result is not None:
            self.call_after_refresh(self._redraw_side)

    def _redraw_side(self) -> None:
        if self.result is not None:
            side = render_side(self.result, self._side_width(), self.app.theme_variables)
            self.query_one("#context-sections", Static).update(side)

    # -- the records behind a line -----------------------------------------------------
    def line_sources(self) -> list[dict[str, Any]]:
        """The records the line under the preview's cursor came from ([] for headings)."""
        if self.result is None:
            return []
        row = self.query_one("#context-preview", TextArea).cursor_location[0]
        by_line = self.result.get("text_sources") or []
        return by_line[row] if 0 <= row < len(by_line) else []

    @on(TextArea.SelectionChanged, "#context-preview")
    def _cursor_moved(self) -> None:
        self._show_line_source()

    def _show_line_source(self) -> None:
        sources = self.line_sources()
        line = self.query_one("#context-line-source", Static)
        if not sources:
            line.update(Text("heading or blank line: no record behind it", style="dim"))
            return
        first, rest = sources[0], sources[1:]
        text = Text.assemble(("from ", "dim"), (source_name(first), "bold"))
        if rest:
            kinds = sorted({s["kind"] for s in rest})
            text.append(f" + {len(rest)} {'/'.join(kinds)}{'s' if len(rest) > 1 else ''}")
        text.append("  ⏎ opens it", style="dim")
        line.update(text)

    def action_open_source(self) -> None:
        """Enter: open the record the line under the cursor came from, in its pane."""
        from ...core.models.kinds import KINDS
        from ..messages import JumpTo

        sources = self.line_sources()
        if not sources:
            self.warn("This line comes from no record (a heading or a blank line)")
            return
        first = sources[0]
        if first["kind"] == "task":
            self.post_message(JumpTo("episodes", f"task:{first['id']}"))
        elif first["kind"] in KINDS:
            self.post_message(JumpTo(KINDS[first["kind"]].pane, str(first["id"])))

    # -- focus and keys ---------------------------------------------------------------
    def focus_main(self) -> None:
        self.query_one("#context-preview", TextArea).focus()

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    def applies(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.LETTER_ACTIONS and isinstance(self.screen.focused, Input):
            return False  # the letter goes into the budget field; Esc gets the keys back
        if action == "focus_preview":
            return not isinstance(self.screen.focused, TextArea)
        if action == "open_source":
            return isinstance(self.screen.focused, TextArea)  # Enter elsewhere is the widget's
        return True

    def action_focus_task(self) -> None:
        self._focus_input("#context-task")

    def action_focus_project(self) -> None:
        self._focus_input("#context-project")

    def _focus_input(self, selector: str) -> None:
        field = self.query_one(selector, Input)
        field.focus()
        field.select_all()

    def action_focus_budget(self) -> None:
        self._focus_input("#context-budget")

    def action_toggle_style(self) -> None:
        select = self.query_one("#context-style", Select)
        select.value = "episodic" if select.value == "default" else "default"
        self.app.notify(f"Style: {select.value}", timeout=2)

    def action_focus_preview(self) -> None:
        self.query_one("#context-preview", TextArea).focus()

    def jump_to(self, ref: str) -> None:
        """Nothing to select here; a task id picks that task."""
        if ref in self.targets.tasks:
            self.query_one("#context-task", Input).value = ref

    def _fresh(self) -> bool:
        """Whether the preview matches the controls (not waiting for a rebuild)."""
        if self.result is None or self.shown_params != self.params():
            self.app.notify("The preview is still being built; try again", severity="warning")
            return False
        return True

    async def action_copy(self) -> None:
        if not self._fresh():
            return
        if not self.text:
            self.app.notify("Nothing to copy: the context is empty", severity="warning")
            return
        await self.workbench.copy_out(self.text, f"The context ({len(self.text):,} characters)")

    def action_save(self) -> None:
        if not self._fresh():
            return
        text = self.text
        task, _project, _budget, style = self.shown_params or self.params()
        default = self.save_path or f"memwork-context{'-' + task if task else ''}.md"

        #: The existing file the user was told about: a second ctrl+s replaces it.
        confirmed: list[Path] = []

        async def submit(values: dict[str, str]) -> Any:
            target = await self.workbench.io(target_path, values["path"])
            if target.exists() and target not in confirmed:
                confirmed.append(target)
                raise InvalidInput("path", f"{target} already exists: ctrl+s again replaces it")
            path = await self.workbench.io(save_text, values["path"], text)
            self.save_path = values["path"].strip()
            self.app.notify(f"Saved {len(text):,} characters to {path}", title="Saved")
            return path

        self.app.push_screen(
            FormScreen(
                "Save the context to a file",
                [
                    Field(
                        "path",
                        "File",
                        default,
                        help=f"Relative to {Path.cwd()}; an existing file is replaced only "
                        f"after you confirm. {len(text):,} characters, {style} style.",
                    )
                ],
                submit,
            )
        )
