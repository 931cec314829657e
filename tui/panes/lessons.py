"""Rules & lessons: effective-confidence bars, reinforce / weaken / pin / forget /
restore / edit / add, a decay preview, near-duplicate clusters to merge, each
lesson's effect on its task (sortable), contradictions and lint findings."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Label, Static

from core import lessons as core_lessons
from core import rules as core_rules
from core.decay import decayed_away, effective_confidence, is_live, state_of
from core.errors import InvalidInput
from tui.panes.base import Pane
from tui.screens.clusters import ClustersScreen
from tui.screens.confirm import ConfirmScreen
from tui.screens.form import Field, FormScreen
from tui.widgets.bars import confidence_bar
from tui.widgets.lesson_detail import STATE_STYLE, effect_text, render_lesson, render_rule
from tui.widgets.virtual_table import Column, ListRowSource, Row, VirtualTable


class LessonsPane(Pane):
    """Rules (per task and global) above, lessons below, the selection on the right."""

    PANE_ID = "lessons"
    TITLE = "Rules & lessons"
    HELP = "Tab moves between the rules and the lessons list; actions apply to the selection."
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("a", "add_lesson", "Add"),
        Binding("n", "add_rule", "New rule"),
        Binding("e", "edit", "Edit"),
        Binding("r", "reinforce", "Reinforce"),
        Binding("w", "weaken", "Weaken"),
        Binding("p", "toggle_pin", "Pin"),
        Binding("f", "forget", "Forget"),
        Binding("u", "restore", "Restore"),
        Binding("t", "toggle_rule", "Rule on/off"),
        Binding("m", "merge", "Merge"),
        Binding("right_square_bracket", "preview(1)", "Decay", key_display="]"),
        Binding("left_square_bracket", "preview(-1)", "Decay-", key_display="[", show=False),
        Binding("x", "toggle_all", "All"),
        Binding("s", "cycle_sort", "Sort", tooltip="Sort lessons by confidence or by effect"),
    ]

    #: Shown (and active) only while their list has the focus, so the footer stays short.
    LESSON_ACTIONS: ClassVar[set[str]] = {
        "reinforce",
        "weaken",
        "toggle_pin",
        "forget",
        "restore",
        "merge",
        "edit",
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
        #: Lesson id -> effect (core.effect), live lesson id -> ids it contradicts,
        #: record id -> lint findings: loaded after the lists, by a second worker.
        self.effects: dict[str, dict[str, Any] | None] = {}
        self.contradicts: dict[str, list[str]] = {}
        self.findings: dict[str, list[dict[str, Any]]] = {}
        self.sort_by = "confidence"

    def compose(self) -> ComposeResult:
        with Horizontal(classes="split"):
            with Vertical(classes="list-column"):
                yield Static("", id="lessons-status", classes="pane-toolbar")
                yield Label("Rules", classes="section-title")
                yield VirtualTable(
                    [
                        Column("scope", "Scope", width=14),
                        Column("text", "Rule"),
                        Column("source", "Source", width=12),
                        Column("active", "On", width=4),
                    ],
                    id="rules",
                    empty_text="No rules yet: episodes derive them, or press n",
                )
                yield Label("Lessons", classes="section-title")
                yield VirtualTable(
                    [
                        Column("state", "State", width=9),
                        Column("confidence", "Confidence", width=15),
                        Column("effect", "Effect", width=6, justify="right"),
                        Column("scope", "Scope", width=14),
                        Column("content", "Lesson"),
                    ],
                    id="lessons",
                    empty_text="No lessons yet: agents add them (memwork lesson add), or press a",
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
        self.deliver(self._show_extras, *self.service.lesson_extras())

    def _show_extras(
        self,
        effects: dict[str, dict[str, Any] | None],
        contradicts: dict[str, list[str]],
        findings: list[dict[str, Any]],
    ) -> None:
        from core.lint import by_record

        self.effects = effects
        self.contradicts = contradicts
        self.findings = by_record(findings)
        self._render_tables()

    def _show(self, all_lessons: list[dict], all_rules: list[dict], groups: int) -> None:
        self.lessons = {x["id"]: x for x in all_lessons}
        self.rules = {x["id"]: x for x in all_rules}
        self.duplicate_groups = groups
        self._render_tables()
        if self._pending_jump:
            ref, self._pending_jump = self._pending_jump, None
            self.jump_to(ref)

    def _render_tables(self) -> None:
        now = self.service.now
        then = now + timedelta(weeks=self.preview_weeks)
        rows = []
        visible = [x for x in self.lessons.values() if self.show_all or is_live(x, now)]
        visible.sort(key=lambda x: (-effective_confidence(x, then), x["created_at"], x["id"]))
        if self.sort_by == "effect":
            # Biggest improvement first; lessons with nothing to compare keep their
            # confidence order below them.
            visible.sort(key=self._effect_key)
        fading = forgotten = 0
        for lesson in visible:
            current = effective_confidence(lesson, now)
            future = effective_confidence(lesson, then)
            state = state_of(lesson, then if self.preview_weeks else now)
            if self.preview_weeks and is_live(lesson, now):
                fading += future < current
                forgotten += decayed_away(lesson, then)
            conf = confidence_bar(future, 8)
            if self.preview_weeks and future < current:
                conf.append(" ↓", style="yellow")
            rows.append(
                Row(
                    [
                        Text(state, style=STATE_STYLE.get(state, "")),
                        conf,
                        effect_text(self.effects.get(lesson["id"])),
                        lesson["scope"],
                        self._content(lesson),
                    ],
                    key=lesson["id"],
                )
            )
        table = self.query_one("#lessons", VirtualTable)
        table.set_source(ListRowSource(rows), keep_key=table.cursor_key)
        rule_rows = [
            Row(
                [
                    r["scope"],
                    Text.assemble(
                        ("⚑ ", "yellow") if r["id"] in self.findings else "",
                        (r["text"], "" if r["active"] else "bright_black"),
                    ),
                    r["source"],
                    Text("yes", style="green") if r["active"] else Text("no", style="bright_black"),
                ],
                key=r["id"],
            )
            for r in sorted(
                self.rules.values(),
                key=lambda r: (not r["active"], r["scope"] != "global", r["scope"], -r["seq"]),
            )
        ]
        rules_table = self.query_one("#rules", VirtualTable)
        rules_table.set_source(ListRowSource(rule_rows), keep_key=rules_table.cursor_key)
        live = sum(1 for x in self.lessons.values() if is_live(x, now))
        if self.preview_weeks:
            weeks = f"{self.preview_weeks} week{'' if self.preview_weeks == 1 else 's'}"
            status = Text.assemble(
                (" Decay preview ", "bold reverse"),
                f" {weeks} from now: ",
                (f"{fading} fade", "yellow"),
                ", ",
                (f"{forgotten} forgotten", "red"),
                ("  · [ ] · 0 = now", "bright_black"),
            )
        else:
            status = Text.assemble(
                (f"{live} live lessons", "bold"),
                f" · {len(self.lessons) - live} forgotten or superseded"
                f"{' (shown)' if self.show_all else ''}",
                f" · {sum(1 for r in self.rules.values() if r['active'])} active rules",
                (f" · {self.duplicate_groups} near-duplicate groups (m)", "yellow")
                if self.duplicate_groups
                else "",
                (f" · {len(self.contradicts)} contradict", "yellow") if self.contradicts else "",
                (" · sorted by effect (s)", "bold") if self.sort_by == "effect" else "",
            )
        self.query_one("#lessons-status", Static).update(status)
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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        kind = self._focused_kind()
        if action in self.RULE_ACTIONS - {"edit"} and kind != "rule":
            return False
        if action in self.LESSON_ACTIONS and kind != "lesson":
            return False
        return True

    def _show_detail(self) -> None:
        detail = self.query_one("#lesson-detail", Static)
        now = self.service.now
        if self._focused_kind() == "rule":
            rule = self.selected_rule()
            found = self.findings.get(rule["id"], []) if rule else []
            detail.update(render_rule(rule, now, found))
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
                effect=self.effects.get(lesson["id"]),
                contradicts=others,
                findings=self.findings.get(lesson["id"], []),
            )
        )

    def _effect_key(self, lesson: dict[str, Any]) -> tuple[int, float]:
        effect = self.effects.get(lesson["id"])
        return (0, -float(effect["change"])) if effect else (1, 0.0)

    def _content(self, lesson: dict[str, Any]) -> Text | str:
        """The lesson's text, marked when it contradicts another or lint flags it."""
        if lesson["id"] in self.contradicts:
            return Text.assemble(("⚑ ", "yellow"), lesson["content"])
        if lesson["id"] in self.findings:
            return Text.assemble(("⚑ ", "bright_black"), lesson["content"])
        return lesson["content"]

    def action_cycle_sort(self) -> None:
        """Sort lessons by effective confidence, or by effect on their task."""
        self.sort_by = "effect" if self.sort_by == "confidence" else "confidence"
        self.app.notify(
            "Lessons sorted by effect on their task (biggest improvement first)"
            if self.sort_by == "effect"
            else "Lessons sorted by effective confidence",
            timeout=3,
        )
        self._render_tables()

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
            self.warn("Select a lesson first (Tab to the lessons list)")
        return lesson

    async def action_reinforce(self) -> None:
        if lesson := self._need_lesson():
            await self.workbench.write(core_lessons.reinforce, lesson["id"], done="Reinforced")

    async def action_weaken(self) -> None:
        if lesson := self._need_lesson():
            await self.workbench.write(core_lessons.weaken, lesson["id"], done="Weakened")

    async def action_toggle_pin(self) -> None:
        if lesson := self._need_lesson():
            pinned = not lesson.get("pinned")
            await self.workbench.write(
                core_lessons.set_pinned,
                lesson["id"],
                pinned,
                done="Pinned" if pinned else "Unpinned",
            )

    def action_forget(self) -> None:
        lesson = self._need_lesson()
        if lesson is None:
            return

        async def answered(yes: bool | None) -> None:
            if yes:
                await self.workbench.write(
                    core_lessons.forget, lesson["id"], done="Forgotten (u restores it)"
                )

        self.app.push_screen(
            ConfirmScreen(
                "Forget this lesson?",
                f"“{lesson['content']}”\n\nIt leaves the context and the list; "
                "x shows forgotten lessons and u restores it.",
                confirm="Forget",
            ),
            answered,
        )

    async def action_restore(self) -> None:
        if lesson := self._need_lesson():
            await self.workbench.write(core_lessons.restore, lesson["id"], done="Restored")

    def action_toggle_all(self) -> None:
        self.show_all = not self.show_all
        self._render_tables()

    def action_preview(self, step: int) -> None:
        self.preview_weeks = max(0, self.preview_weeks + step)
        self._render_tables()

    def key_0(self) -> None:
        """0 returns the decay preview to now."""
        if self.preview_weeks:
            self.preview_weeks = 0
            self._render_tables()

    def action_add_lesson(self) -> None:
        async def submit(values: dict[str, str]) -> Any:
            return await self.workbench.write(
                core_lessons.add_lesson,
                values["content"],
                scope=values["scope"].strip() or "global",
                confidence=_number(values["confidence"], "confidence"),
                tags=_tags(values["tags"]),
                source="tui",
                done=lambda result: (
                    f"Already known: reinforced {result.duplicate_of}"
                    if result.action == "reinforced"
                    else "Lesson added"
                ),
            )

        self.app.push_screen(
            FormScreen(
                "Add a lesson",
                [
                    Field("content", "Lesson", multiline=True),
                    Field("scope", "Scope", "global", help="global, task:<id> or project:<name>"),
                    Field("confidence", "Confidence", "0.5", help="0 to 1"),
                    Field("tags", "Tags", "", placeholder="comma separated"),
                ],
                submit,
                save_label="Add",
            )
        )

    def action_add_rule(self) -> None:
        async def submit(values: dict[str, str]) -> Any:
            added = await self.workbench.write(
                core_rules.add_rule,
                values["text"],
                scope=values["scope"].strip() or "global",
                done=lambda result: f"Rule {result[1]}",
            )
            return added[0] if added else None

        self.app.push_screen(
            FormScreen(
                "New rule",
                [
                    Field("text", "Rule", placeholder="[AVOID] … or [WORKS] … or plain text"),
                    Field("scope", "Scope", "global", help="global or task:<task id>"),
                ],
                submit,
                save_label="Add",
            )
        )

    def action_edit(self) -> None:
        if self._focused_kind() == "rule":
            self.app.notify("Rules are edited by adding a new one and switching the old off (t)")
            return
        lesson = self._need_lesson()
        if lesson is None:
            return

        async def submit(values: dict[str, str]) -> Any:
            return await self.workbench.write(
                core_lessons.edit,
                lesson["id"],
                content=values["content"],
                scope=values["scope"].strip(),
                tags=_tags(values["tags"]),
                confidence=_number(values["confidence"], "confidence"),
                done="Lesson saved",
            )

        self.app.push_screen(
            FormScreen(
                "Edit lesson",
                [
                    Field("content", "Lesson", lesson["content"], multiline=True),
                    Field("scope", "Scope", lesson["scope"]),
                    Field("confidence", "Stored confidence", f"{lesson['confidence']:.2f}"),
                    Field("tags", "Tags", ", ".join(lesson.get("tags", []))),
                ],
                submit,
            )
        )

    async def action_toggle_rule(self) -> None:
        rule = self.selected_rule() if self._focused_kind() == "rule" else None
        if rule is None:
            self.warn("Select a rule first (Tab to the rules list)")
            return
        await self.workbench.write(
            core_rules.set_active,
            rule["id"],
            not rule["active"],
            done="Rule switched on" if not rule["active"] else "Rule switched off",
        )

    async def action_merge(self) -> None:
        now = self.service.now
        groups = core_lessons.near_duplicate_clusters(list(self.lessons.values()), now)
        if not groups:
            self.app.notify("No near-duplicate lessons (similarity >= 90 within a scope)")
            return

        async def chosen(group: list[dict[str, Any]] | None) -> None:
            if group:
                keep, *rest = group
                await self.workbench.write(
                    core_lessons.merge_lessons,
                    keep["id"],
                    [x["id"] for x in rest],
                    done=f"Merged {len(rest)} into “{keep['content'][:40]}”",
                )

        self.app.push_screen(ClustersScreen(groups, now), chosen)


def _tags(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _number(text: str, field: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise InvalidInput(field, f"must be a number between 0 and 1 (got {text!r})") from None
