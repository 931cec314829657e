"""Rules & lessons: effective-confidence bars, reinforce / weaken / pin / forget /
restore / edit / add, a decay preview, near-duplicate clusters to merge, each
lesson's effect on its task (sortable), contradictions and lint findings."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Label, Static

from ...core.base.text import clip
from ...core.domain.decay import is_forgotten
from ...core.services.context.log import Injections
from ..external_editor import TOOLTIP as EDITOR_TIP
from ..service import LessonExtras
from ..widgets.lesson_detail import render_lesson, render_rule
from ..widgets.lesson_rows import lesson_columns, lesson_rows, lessons_status, rule_rows
from ..widgets.virtual_table import Column, ListRowSource, VirtualTable
from . import lesson_forms as forms
from .base import Pane

#: The lessons list's orders, as the s key announces them.
SORTS = {
    "confidence": "Lessons sorted by effective confidence",
    "effect": "Lessons sorted by effect on their task (biggest improvement first)",
    "use": "Lessons sorted by use: how many contexts injected them (most first)",
}
NO_LESSONS = "No lessons yet: agents add them (memwork lesson add), or press a"
NO_RULES = "No rules yet: episodes derive them, or press n"


class LessonsPane(Pane):
    """Rules (per task and global) above, lessons below, the selection on the right."""

    PANE_ID = "lessons"
    TITLE = "Rules & lessons"
    SHORT_TITLE = "Lessons"
    HELP = (
        "The pane opens on the lessons; Tab switches between the lessons and the rules list. "
        "Keys act on the selection of the focused list (a lesson key pressed on the rules "
        "list says so). ] and [ preview decay a week at a time, 0 returns to now."
    )
    PALETTE_ANYWHERE = frozenset(
        "add_lesson add_rule preview preview_now toggle_all cycle_sort switch_list".split()
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "add_lesson", "Add", tooltip="Add a lesson"),
        Binding("n", "add_rule", "New rule", tooltip="Add a rule (rules list)"),
        Binding("e", "edit", "Edit", tooltip="Edit the lesson's text, scope, confidence, tags"),
        Binding("r", "reinforce", "Reinforce", tooltip="Confidence up, decay clock restarts"),
        Binding("w", "weaken", "Weaken", tooltip="Confidence down"),
        Binding("p", "toggle_pin", "Pin", tooltip="Pin or unpin: pinned lessons never decay"),
        Binding("f", "forget", "Forget", tooltip="Forget the lesson (u brings it back)"),
        Binding("u", "restore", "Restore", tooltip="Bring back a forgotten lesson"),
        Binding(
            "delete",
            "delete_lesson",
            "Delete",
            show=False,
            tooltip="Delete the lesson for good, its words with it (f only hides it)",
        ),
        Binding("t", "toggle_rule", "Rule on/off", tooltip="Switch the rule on or off"),
        Binding("m", "merge", "Merge", tooltip="Merge near-duplicate lessons"),
        Binding(
            "right_square_bracket",
            "preview(1)",
            "Decay",
            key_display="]",
            tooltip="Preview decay one week further",
        ),
        Binding(
            "left_square_bracket",
            "preview(-1)",
            "Decay-",
            key_display="[",
            show=False,
            tooltip="Preview decay one week less",
        ),
        Binding("x", "toggle_all", "All", tooltip="Show or hide forgotten and superseded lessons"),
        Binding("0", "preview_now", "Decay now", show=False, tooltip="End the decay preview"),
        Binding(
            "tab,shift+tab", "switch_list", "Rules / lessons list", key_display="Tab", show=False
        ),
        Binding("s", "cycle_sort", "Sort", tooltip="Sort lessons by confidence or by effect"),
        Binding("E", "external_edit", "In $EDITOR", show=False, tooltip=EDITOR_TIP),
    ]

    #: Shown (and active) only while their list has the focus, so the footer stays short.
    LESSON_ACTIONS: ClassVar[set[str]] = {
        "reinforce",
        "weaken",
        "toggle_pin",
        "forget",
        "restore",
        "delete_lesson",
        "merge",
        "edit",
        "external_edit",
    }
    RULE_ACTIONS: ClassVar[set[str]] = {"toggle_rule", "add_rule"}

    def __init__(self) -> None:
        super().__init__()
        self.lessons: dict[str, dict[str, Any]] = {}
        self.rules: dict[str, dict[str, Any]] = {}
        self.preview_weeks = 0
        self._pending_jump: str | None = None
        self.show_all = False
        self.duplicate_groups = 0
        #: The lesson forgotten last from here: u brings it back from anywhere in the list.
        self.last_forgotten: str | None = None
        #: Lessons forgotten from here: u undoes that (nothing else about them changes).
        self.forgotten_here: set[str] = set()
        self._select_lesson: str | None = None
        self._select_rule: str | None = None
        #: Lesson id -> effect (core.domain.effect), live lesson id -> ids it contradicts,
        #: record id -> lint findings: loaded after the lists, by a second worker.
        self.effects: dict[str, dict[str, Any] | None] = {}
        self.contradicts: dict[str, list[str]] = {}
        self.findings: dict[str, list[dict[str, Any]]] = {}
        self.sort_by = "confidence"
        #: Lesson id -> how many contexts injected it (with context_log on), and whether
        #: contexts are being logged now.
        self.uses: dict[str, Injections] = {}
        self.logging = False

    def compose(self) -> ComposeResult:
        with Horizontal(classes="split"):
            with Vertical(classes="list-column"):
                yield Static("", id="lessons-status", classes="pane-toolbar")
                yield Label("Rules", classes="section-title")
                yield VirtualTable(
                    [
                        Column("scope", "Scope", min_width=8, max_width=20, drop_order=2),
                        Column("text", "Rule", min_width=26, weight=4),
                        Column("source", "Source", width=12, drop_order=1),
                        Column("active", "On", width=3),
                    ],
                    id="rules",
                    empty_text="Loading rules…",
                )
                yield Label("Lessons", classes="section-title")
                yield VirtualTable(
                    lesson_columns(self.sort_by, with_use=False),
                    id="lessons",
                    empty_text="Loading lessons…",
                )
            with VerticalScroll(classes="detail-column"):
                yield Static("", id="lesson-detail")

    # -- loading ----------------------------------------------------------------------
    def load(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="lessons-load", exit_on_error=False)
    def _load(self) -> None:
        self.deliver(self._show, *self.service.lessons_and_rules())
        self._load_extras()

    @work(thread=True, exclusive=True, group="lessons-extras", exit_on_error=False)
    def _load_extras(self) -> None:
        # Effects may read the episode history (lessons older than effects), so they
        # come after the lists, which are on screen by then.
        self.deliver(self._show_extras, self.service.lesson_extras())

    def _show_extras(self, extras: LessonExtras) -> None:
        from ...core.services.lint import by_record

        self.effects = extras.effects
        self.contradicts = extras.contradicts
        self.findings = by_record(extras.findings)
        self.uses = {k: v for k, v in extras.uses.items() if k in self.lessons}
        self.logging = extras.logging
        self._render_tables()

    def _show(
        self, all_lessons: list[dict[str, Any]], all_rules: list[dict[str, Any]], groups: int
    ) -> None:
        self.lessons = {x["id"]: x for x in all_lessons}
        self.rules = {x["id"]: x for x in all_rules}
        self.duplicate_groups = groups
        self._render_tables()
        self._select_lesson = None  # the lists are in: a lesson not shown now never will be
        if self._pending_jump:
            ref, self._pending_jump = self._pending_jump, None
            self.jump_to(ref)

    def _render_tables(self) -> None:
        now = self.service.now
        warning = self.app.theme_variables.get("text-warning", "yellow")
        table = self.query_one("#lessons", VirtualTable)
        # Used shows once contexts are logged (or were: the counts stay).
        columns = lesson_columns(self.sort_by, with_use=self.logging or bool(self.uses))
        if columns != list(table.columns):
            table.set_columns(columns)
        shown = lesson_rows(
            self.lessons,
            now,
            columns=columns,
            preview_weeks=self.preview_weeks,
            show_all=self.show_all,
            sort_by=self.sort_by,
            effects=self.effects,
            contradicts=self.contradicts,
            findings=self.findings,
            uses=self.uses,
            warning=warning,
        )
        table.empty_text = NO_LESSONS  # loaded: an empty list now means none
        wanted = self._select_lesson
        if wanted is not None and wanted in {row.key for row in shown.rows}:
            # Kept until the lesson is in the list: the extras can land before the lists.
            self._select_lesson = None
        else:
            wanted = None
        table.set_source(ListRowSource(shown.rows), keep_key=wanted or table.cursor_key)
        if wanted is not None:
            table.focus()  # the lesson just added or restored is selected, in its own list
        rules_table = self.query_one("#rules", VirtualTable)
        rules_table.empty_text = NO_RULES
        new_rule, self._select_rule = self._select_rule, None
        if new_rule is not None and new_rule not in self.rules:
            new_rule = None
        rules_table.set_source(
            ListRowSource(rule_rows(self.rules, self.findings, warning)),
            keep_key=new_rule or rules_table.cursor_key,
        )
        if new_rule is not None:
            rules_table.focus()  # the rule just added is selected, in its own list
        status_line = self.query_one("#lessons-status", Static)
        room = status_line.content_size.width or self.app.size.width // 2
        # The short words only where the long ones would take more than two lines.
        for narrow in (False, True):
            status = lessons_status(
                self.lessons,
                self.rules,
                now,
                preview_weeks=self.preview_weeks,
                shown=shown,
                show_all=self.show_all,
                duplicate_groups=self.duplicate_groups,
                contradicting=len(self.contradicts),
                sort_by=self.sort_by,
                narrow=narrow,
                warning=warning,
            )
            if status.cell_len <= 2 * room:
                break
        status_line.update(status)
        self._show_detail()

    # -- selection and detail ---------------------------------------------------------
    def _focused_kind(self) -> str:
        focused = self.screen.focused
        return "rule" if focused is not None and focused.id == "rules" else "lesson"

    def selected_lesson(self) -> dict[str, Any] | None:
        key = self.query_one("#lessons", VirtualTable).cursor_key
        return self.lessons.get(key) if key else None

    def selected_rule(self) -> dict[str, Any] | None:
        key = self.query_one("#rules", VirtualTable).cursor_key
        return self.rules.get(key) if key else None

    @on(VirtualTable.CursorMoved)
    def _cursor(self) -> None:
        self._show_detail()

    def on_descendant_focus(self) -> None:
        self._show_detail()
        self.refresh_bindings()

    def focus_main(self) -> None:
        # Lessons are what is curated most, and most keys act on them.
        self.query_one("#lessons", VirtualTable).focus()

    async def action_external_edit(self) -> None:
        """Edit the selected lesson's text in $EDITOR; saved as ``memwork lesson edit``."""
        lesson = self.selected_lesson()
        if lesson is None:
            self.warn("No lesson selected")
            return
        await forms.edit_in_editor(self, lesson)

    def applies(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        kind = self._focused_kind()
        if action in self.RULE_ACTIONS and kind != "rule":
            return False
        if action in self.LESSON_ACTIONS and kind != "lesson":
            return False
        return True

    def why_not(self, action: str) -> str | None:
        kind = self._focused_kind()
        if action == "edit" and kind == "rule":
            return "Rules are edited by adding a new one (n) and switching the old off (t)"
        if action in self.LESSON_ACTIONS and kind != "lesson":
            return f"{self.key_name(action)} acts on a lesson: Tab to the lessons list first"
        if action in self.RULE_ACTIONS and kind != "rule":
            return f"{self.key_name(action)} acts on the rules: Tab to the rules list first"
        return None

    def _show_detail(self) -> None:
        detail = self.query_one("#lesson-detail", Static)
        now = self.service.now
        warning = self.app.theme_variables.get("text-warning", "yellow")
        if self._focused_kind() == "rule":
            rule = self.selected_rule()
            found = self.findings.get(rule["id"], []) if rule else []
            detail.update(render_rule(rule, now, found, warning))
            return
        lesson = self.selected_lesson()
        if lesson is None:
            detail.update(render_lesson(None, now))
            return
        others = [
            self.lessons[x] for x in self.contradicts.get(lesson["id"], []) if x in self.lessons
        ]
        detail.update(
            render_lesson(
                lesson,
                now,
                preview_weeks=self.preview_weeks,
                others=self.lessons,
                effect=self.effects.get(lesson["id"]),
                use=self.uses.get(lesson["id"]),
                contradicts=others,
                findings=self.findings.get(lesson["id"], []),
                warning=warning,
            )
        )

    def on_mount(self) -> None:
        # Flags take the theme's warning colour: drawn again when the theme changes.
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.on_resize())

    def on_resize(self) -> None:
        if self.lessons:
            self._render_tables()  # the status line has short words for a narrow terminal

    def action_cycle_sort(self) -> None:
        """Sort lessons by effective confidence, by effect on their task, or by use (how
        many contexts injected them)."""
        order = list(SORTS)
        self.sort_by = order[(order.index(self.sort_by) + 1) % len(order)]
        message = SORTS[self.sort_by]
        if self.sort_by == "use" and not self.uses:
            message += (
                ": none counted yet (contexts are logged while context_log is on)"
                if not self.logging
                else ": no context has injected a lesson since the log was turned on"
            )
        self.app.notify(message, timeout=4)
        self._render_tables()
        # A new order reads from its top: the first lesson is the one it is about.
        table = self.query_one("#lessons", VirtualTable)
        table.move_cursor(0)
        table.scroll_to(y=0, animate=False, force=True)

    def jump_to(self, ref: str) -> None:
        if ref not in self.lessons and ref not in self.rules:
            # Not loaded yet (the pane opened for this jump): select it once it is.
            self._pending_jump = ref
            return
        table_id = "#rules" if ref.startswith("rule_") else "#lessons"
        table = self.query_one(table_id, VirtualTable)
        if ref.startswith("les_") and ref not in [
            table.row_key_at(i) for i in range(table.row_count)
        ]:
            self.show_all = True
            self._render_tables()
        source = table.source
        for index in range(len(source)):
            if source.row(index).key == ref:
                table.move_cursor(index)
                break
        table.focus()

    # -- actions ----------------------------------------------------------------------
    def _need_lesson(self) -> dict[str, Any] | None:
        lesson = self.selected_lesson() if self._focused_kind() == "lesson" else None
        if lesson is None:
            self.warn(
                "Select a lesson first (Tab to the lessons list)"
                if self._focused_kind() == "rule"
                else "No lesson here yet: a adds one"
            )
        return lesson

    async def action_reinforce(self) -> None:
        if lesson := self._need_lesson():
            await self.workbench.write("reinforce_lesson", lesson=lesson["id"], done="Reinforced")

    async def action_weaken(self) -> None:
        if lesson := self._need_lesson():
            await self.workbench.write("weaken_lesson", lesson=lesson["id"], done="Weakened")

    async def action_toggle_pin(self) -> None:
        if lesson := self._need_lesson():
            pinned = not lesson.get("pinned")
            await self.workbench.write(
                "pin_lesson" if pinned else "unpin_lesson",
                lesson=lesson["id"],
                done="Pinned" if pinned else "Unpinned",
            )

    def action_forget(self) -> None:
        if (lesson := self._need_lesson()) is not None:
            forms.forget_lesson(self, lesson)

    def action_delete_lesson(self) -> None:
        if (lesson := self._need_lesson()) is not None:
            forms.delete_lesson(self, lesson)

    async def action_restore(self) -> None:
        """Bring back the selected lesson if it is forgotten, else the one forgotten last.
        A lesson forgotten here comes back exactly as it was (an undo); any other is
        restored as if reinforced now (its decay clock restarts)."""
        lesson = self._need_lesson()
        if lesson is None:
            return
        now = self.service.now
        if not is_forgotten(lesson, now):
            last = self.lessons.get(self.last_forgotten or "")
            if last is None or not is_forgotten(last, now):
                self.warn(
                    "This lesson is not forgotten: nothing to restore (x lists the forgotten ones)"
                )
                return
            lesson = last
        undo = lesson["id"] in self.forgotten_here and bool(lesson.get("deleted"))
        restored = await self.workbench.write(
            "unforget_lesson" if undo else "restore_lesson",
            lesson=lesson["id"],
            done=f"{'Back as it was' if undo else 'Restored'}: “{clip(lesson['content'], 40)}”",
        )
        if restored is not None:
            if lesson["id"] == self.last_forgotten:
                self.last_forgotten = None
            self._select_lesson = lesson["id"]  # the next load puts the cursor on it

    def action_toggle_all(self) -> None:
        self.show_all = not self.show_all
        self._render_tables()

    def action_preview(self, step: int) -> None:
        self.preview_weeks = max(0, self.preview_weeks + step)
        self._render_tables()

    def action_preview_now(self) -> None:
        """0 returns the decay preview to now."""
        if self.preview_weeks:
            self.preview_weeks = 0
            self._render_tables()

    def action_switch_list(self) -> None:
        """Tab: from the lessons to the rules and back."""
        target = "#lessons" if self._focused_kind() == "rule" else "#rules"
        self.query_one(target, VirtualTable).focus()

    def action_add_lesson(self) -> None:
        forms.add_lesson(self)

    def action_add_rule(self) -> None:
        forms.add_rule(self)

    def action_edit(self) -> None:
        if (lesson := self._need_lesson()) is not None:
            forms.edit_lesson(self, lesson)

    def select_lesson_after_load(self, lesson_id: str) -> None:
        """Select (and focus) lesson ``lesson_id`` when the reload that follows a write lands."""
        self._select_lesson = lesson_id

    def select_rule_after_load(self, rule_id: str) -> None:
        """Select (and focus) rule ``rule_id`` when the reload that follows a write lands."""
        self._select_rule = rule_id

    async def action_toggle_rule(self) -> None:
        rule = self.selected_rule() if self._focused_kind() == "rule" else None
        if rule is None:
            self.warn("Select a rule first (Tab to the rules list)")
            return
        await self.workbench.write(
            "deactivate_rule" if rule["active"] else "activate_rule",
            rule=rule["id"],
            done="Rule switched on" if not rule["active"] else "Rule switched off",
        )

    def action_merge(self) -> None:
        forms.merge_near_duplicates(self)
