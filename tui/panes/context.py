"""Context: the exact text an agent would get, live, for a chosen task, budget and
style; per-section token estimates, what the budget dropped, copy and save; the
records behind the line under the cursor, and Enter to open the first of them."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import Input, Label, Select, Static, TextArea

from ...core.context.files import save_text, target_path
from ...core.env_settings import token_budget_or_default
from ...core.errors import InvalidInput
from ..screens.form import Field, FormScreen
from ..widgets.bars import plural
from .base import Pane

#: Wait this long after the last change before rebuilding (typing a budget is several changes).
DEBOUNCE_SECONDS = 0.15
NO_TASK = ""
STYLES = ("default", "episodic")
#: Names for sections the budget removed entirely (their headings are gone with them).
SECTION_NAMES = {
    "slots": "Pinned memory",
    "task_rules": "Rules for the task",
    "global": "General rules and lessons",
    "global_rules": "General rules",
    "mistakes": "Mistakes to avoid",
    "mistake_cards": "Mistake cards",
    "failures": "Past failures to avoid",
    "episodes": "Recent episodes",
    "mean_score": "Mean score",
}
_WHOLE_NUMBER = re.compile(r"\d+")


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


def source_name(ref: dict[str, Any]) -> str:
    """``slot persona``, ``rule rule_…``, ``episode #12``, ``task deploy-api``."""
    if ref["kind"] == "slot" and ref.get("label"):
        return f"slot {ref['label']}"
    if ref["kind"] == "episode" and ref.get("index") is not None:
        return f"episode #{ref['index']}"
    return f"{ref['kind']} {ref['id']}"


def section_title(name: str, heading: str | None) -> str:
    """``## Pinned memory`` → ``Pinned memory``; ``Rules for x:`` → ``Rules for x``."""
    if heading:
        return heading.lstrip("#").strip().rstrip(":")
    return SECTION_NAMES.get(name, name.replace("_", " ").capitalize())


class ContextPane(Pane):
    """Controls on top; the exact text on the left; sections, tokens and drops on the right."""

    PANE_ID = "context"
    TITLE = "Context"
    HELP = (
        "The preview is exactly what memwork context prints for the chosen task, budget "
        "and style, rebuilt as you change them. Tokens are an estimate (characters / 4). "
        "When over budget, whole lines are dropped from the lowest-priority section up; "
        "the side panel lists them. c copies (OSC 52, works over SSH), s saves to a file. "
        "The line under the cursor names the records it came from; Enter opens the first "
        "(a rule's episodes and a card's sightings are listed beside it)."
    )
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("t", "focus_task", "Task"),
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
        "focus_budget",
        "toggle_style",
        "copy",
        "save",
    }

    def __init__(self) -> None:
        super().__init__()
        self.tasks: list[dict[str, Any]] = []
        self.text = ""
        self.result: dict[str, Any] | None = None
        #: (task, budget, style) of the shown preview, and of the last valid controls.
        self.shown_params: tuple[str, int, str] | None = None
        self.budget = token_budget_or_default()
        self._timer: Timer | None = None
        self.save_path = ""

    def compose(self) -> ComposeResult:
        with Horizontal(id="context-controls"):
            yield Label("Task", classes="control-label")
            yield Select(
                [("(no task)", NO_TASK)],
                allow_blank=False,
                value=NO_TASK,
                id="context-task",
            )
            yield Label("Budget", classes="control-label")
            yield Input(str(self.budget), id="context-budget", placeholder="tokens")
            yield Label("Style", classes="control-label")
            yield Select(
                [(style, style) for style in STYLES],
                allow_blank=False,
                value="default",
                id="context-style",
            )
        yield Static("", id="context-budget-error", markup=False)
        with Horizontal(classes="split"):
            with Vertical(id="context-preview-column"):
                yield Static("", id="context-preview-title")
                yield TextArea(
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
        self._load_tasks()

    @work(thread=True, exclusive=True, group="context-load", exit_on_error=False)
    def _load_tasks(self) -> None:
        self.deliver(self._show_tasks, self.service.tasks())

    def _show_tasks(self, tasks: list[dict[str, Any]]) -> None:
        select = self.query_one("#context-task", Select)
        current = select.value
        names = [t["task_id"] for t in tasks]
        if names != [t["task_id"] for t in self.tasks] or not self.tasks:
            options = [("(no task)", NO_TASK)] + [
                (f"{t['task_id']}  ({plural(t['episodes'], 'episode')})", t["task_id"])
                for t in tasks
            ]
            with select.prevent(Select.Changed):
                select.set_options(options)
                select.value = current if current in names else NO_TASK
        self.tasks = tasks
        self._rebuild()  # the store moved: the context may have too

    # -- controls ---------------------------------------------------------------------
    def params(self) -> tuple[str, int, str]:
        """(task id or "", budget, style) as the controls say now."""
        task = self.query_one("#context-task", Select).value
        style = self.query_one("#context-style", Select).value
        return (
            task if isinstance(task, str) else NO_TASK,
            self.budget,
            style if isinstance(style, str) else "default",
        )

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

    @on(Input.Submitted, "#context-budget")
    def _budget_submitted(self) -> None:
        self.action_focus_preview()

    def _schedule(self) -> None:
        """Rebuild after a short pause, so typing "1500" builds once, not four times."""
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE_SECONDS, self._rebuild)

    def _rebuild(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._set_building(True)
        self._build(*self.params())

    def _set_building(self, building: bool) -> None:
        self.query_one("#context-preview-title", Static).set_class(building, "building")

    @work(thread=True, exclusive=True, group="context-build", exit_on_error=False)
    def _build(self, task: str, budget: int, style: str) -> None:
        data = self.service.context(task or None, budget, style)
        self.deliver(self._show_preview, (task, budget, style), data)

    # -- rendering --------------------------------------------------------------------
    def _show_preview(self, params: tuple[str, int, str], data: dict[str, Any]) -> None:
        self.shown_params = params
        self.result = data
        self._set_building(False)
        preview = self.query_one("#context-preview", TextArea)
        if data["text"] != self.text or preview.text != data["text"]:
            self.text = data["text"]
            preview.load_text(self.text)
        self.query_one("#context-preview-title", Static).update(
            Text.assemble(
                ("Exact text the agent gets", "bold"),
                (f"  ·  {plural(len(self.text), 'character')}", "dim"),
            )
        )
        self.query_one("#context-sections", Static).update(self._render_side(data))
        self._show_line_source()

    def _render_side(self, data: dict[str, Any]) -> Text:
        theme = self.app.theme_variables
        accent = theme.get("text-accent", "cyan")
        error = theme.get("text-error", "red")
        warning = theme.get("text-warning", "yellow")
        out = Text()
        tokens, budget = data["estimated_tokens"], data["budget_tokens"]
        out.append(f"~{tokens:,}", style=f"bold {error if tokens > budget else accent}")
        out.append(f" / {budget:,} tokens\n", style="bold")
        out.append("estimate: characters / 4\n", style="dim italic")
        # The panel is narrow at 80 columns: lines are shaped to its width.
        width = self._side_width()
        if budget:
            used = min(1.0, tokens / budget)
            bar = max(10, min(30, width - 5))
            filled = round(used * bar)
            out.append("█" * filled, style=accent)
            out.append("░" * (bar - filled), style="dim")
            out.append(f" {used:.0%}\n", style="dim")
        out.append("\nSections\n", style=f"bold {accent}")
        if not data["sections"]:
            out.append("  (none)\n", style="dim")
        for section in data["sections"]:
            title = section_title(section["name"], section["heading"])
            lines = len(section["lines"])
            count = plural(lines, "line")
            one_line = len(title) + len(count) + 4 <= width
            out.append(f"  {title}")
            out.append(f"  {count}\n" if one_line else "\n", style="dim")
            out.append(f"    ~{section['estimated_tokens']:,} tokens", style=accent)
            out.append(" (estimate)\n", style="dim")
            if not one_line:
                out.append(f"    {count}\n", style="dim")
        dropped = data["dropped"]
        if not dropped:
            out.append("\nNothing dropped: ", style=f"bold {accent}")
            out.append("everything fits the budget.\n", style="dim")
            return out
        out.append(
            f"\nDropped by the budget ({plural(len(dropped), 'line')})\n", style=f"bold {warning}"
        )
        out.append("lowest priority first: episodes, lessons, cards, rules…\n", style="dim italic")
        # Wrap by hand so a long dropped line keeps its indent (a hanging indent).
        by_section: dict[str, list[str]] = {}
        for item in dropped:
            by_section.setdefault(item["section"], []).append(item["line"])
        headings = {s["name"]: s["heading"] for s in data["sections"]}
        for name, lines in by_section.items():
            out.append(f"  {section_title(name, headings.get(name))}", style="bold")
            out.append(f"  −{len(lines)}\n", style=warning)
            for line in lines:
                wrapped = textwrap.wrap(
                    line.strip(), width, initial_indent="    ", subsequent_indent="      "
                )
                out.append("\n".join(wrapped) + "\n", style="dim")
        return out

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
            self.query_one("#context-sections", Static).update(self._render_side(self.result))

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
        from ...core.kinds import KINDS
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
        select = self.query_one("#context-task", Select)
        select.focus()
        select.action_show_overlay()

    def action_focus_budget(self) -> None:
        budget = self.query_one("#context-budget", Input)
        budget.focus()
        budget.select_all()

    def action_toggle_style(self) -> None:
        select = self.query_one("#context-style", Select)
        select.value = "episodic" if select.value == "default" else "default"
        self.app.notify(f"Style: {select.value}", timeout=2)

    def action_focus_preview(self) -> None:
        self.query_one("#context-preview", TextArea).focus()

    def jump_to(self, ref: str) -> None:
        """Nothing to select here; a task id picks that task."""
        if any(t["task_id"] == ref for t in self.tasks):
            self.query_one("#context-task", Select).value = ref

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
        task, _budget, style = self.shown_params or (NO_TASK, 0, "default")
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
