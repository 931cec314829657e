"""The lint findings: every one, each record it names a row, fixable from here.

The header counts the findings (``7 lint findings (L)``); ``L``, or "Lint
findings" in the palette, opens this list. A finding names its records (a slot
over its limit, two lessons that contradict each other, a group of
near-duplicates, an ``[AVOID]`` rule a lesson contradicts), one row each. Enter
opens the record in its pane; the fix that suits the row is one key away: ``f``
forgets a lesson, ``m`` merges a near-duplicate group into its strongest lesson,
``t`` switches a rule off (each asks first). The list reads the store again after
a fix, and whenever the store moves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, Static

from ...core.base.text import clip
from ...core.models.kinds import KINDS
from ..messages import JumpTo
from ..widgets.virtual_table import Column, ListRowSource, Row, VirtualTable
from .confirm import ConfirmScreen
from .dialog import Dialog

if TYPE_CHECKING:
    from ..app import MemworkApp

#: A finding's kind as the list names it.
KIND_NAMES = {
    "over_limit": "over its limit",
    "stale_slot": "stale slot",
    "duplicate": "duplicate",
    "contradiction": "contradiction",
    "near_duplicates": "near-duplicates",
    "avoid_contradicts_lesson": "rule contradicted",
    "duplicate_rule": "repeated rule",
    "stale_rule": "stale rule",
}


class Target(NamedTuple):
    """One row: a record a finding names."""

    finding: dict[str, Any]
    kind: str
    """The record's kind (``lesson``, ``slot``, ``rule``), "" when it is gone."""
    record_id: str
    title: str


class FindingsScreen(Dialog[None]):
    """The findings, one row per record they name; Enter opens it, a key fixes it."""

    BINDINGS = [
        Binding("escape,q", "dismiss(None)", "Close"),
        Binding("f", "forget", "Forget the lesson", show=False),
        Binding("m", "merge", "Merge the group", show=False),
        Binding("t", "rule_off", "Switch the rule off", show=False),
    ]
    DEFAULT_CSS = """
    FindingsScreen { align: center middle; }
    FindingsScreen > Vertical {
        width: 110; max-width: 100%; height: 90%; padding: 0 1;
        border: thick $accent 60%; background: $surface;
    }
    FindingsScreen.-short > Vertical { height: 100%; border: none; }
    FindingsScreen #findings-title { text-style: bold; width: 1fr; }
    FindingsScreen #findings-detail {
        height: auto; max-height: 8; padding: 0 1; background: $boost;
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[Target] = []

    @property
    def workbench(self) -> MemworkApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Lint findings", id="findings-title")
            yield VirtualTable(
                [
                    Column("kind", "Finding", width=18, min_width=12),
                    Column("record", "Record", min_width=24),
                ],
                id="findings",
                empty_text="Reading the store…",
            )
            yield Static("", id="findings-detail")

    def on_mount(self) -> None:
        self.query_one("#findings", VirtualTable).focus()
        self.load()

    def store_changed(self) -> None:
        """The store moved (a fix here, or an agent): read the findings again."""
        self.load()

    # -- loading ----------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="findings-load", exit_on_error=False)
    def load(self) -> None:
        """Read the findings and the records they name (in a thread)."""
        found, names = self.workbench.service.lint_view()
        self.app.call_from_thread(self._show, found, names)

    def _show(self, found: list[dict[str, Any]], names: dict[str, tuple[str, str]]) -> None:
        self.targets = [
            Target(finding, names[record][0], record, names[record][1])
            if record in names
            else Target(finding, "", record, f"{record} (gone)")
            for finding in found
            for record in finding["records"]
        ]
        table = self.query_one("#findings", VirtualTable)
        rows = []
        for n, target in enumerate(self.targets):
            first = n == 0 or self.targets[n - 1].finding is not target.finding
            kind = KIND_NAMES.get(target.finding["kind"], target.finding["kind"])
            rows.append(
                Row(
                    [
                        Text(kind if first else "  ·", style="bold" if first else "dim"),
                        Text.assemble((f"{target.kind} ", "dim"), target.title),
                    ],
                    key=f"{n}",
                )
            )
        table.empty_text = "No findings: nothing for a curator to look at"
        table.set_source(ListRowSource(rows), keep_key=table.cursor_key)
        count = len(found)
        self.query_one("#findings-title", Label).update(
            f"Lint findings: {count}" if count else "Lint findings: none"
        )
        self._show_detail()

    # -- the selected row -------------------------------------------------------------
    def selected(self) -> Target | None:
        """The row under the cursor."""
        table = self.query_one("#findings", VirtualTable)
        if not table.row_count or table.cursor_row >= len(self.targets):
            return None
        return self.targets[table.cursor_row]

    @on(VirtualTable.CursorMoved, "#findings")
    def _moved(self) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        detail = self.query_one("#findings-detail", Static)
        target = self.selected()
        if target is None:
            detail.update("")
            return
        out = Text(target.finding["message"] + "\n")
        keys = ["Enter opens it" if target.kind else "it no longer exists"]
        fix = self._fix(target)
        if fix:
            keys.append(fix)
        keys.append("Esc closes")
        out.append(" · ".join(keys), style="italic dim")
        detail.update(out)

    @staticmethod
    def _fix(target: Target) -> str:
        """The fix this row offers, as the detail line says it."""
        kind = target.finding["kind"]
        if kind == "near_duplicates":
            return "m merges the group into its strongest lesson"
        if target.kind == "lesson":
            return "f forgets this lesson"
        if target.kind == "rule":
            return "t switches this rule off"
        if target.kind == "slot":
            return "trim or edit it in Slots (Enter, then e)"
        return ""

    # -- actions ----------------------------------------------------------------------
    @on(VirtualTable.RowSelected, "#findings")
    def _open(self) -> None:
        target = self.selected()
        if target is None or not target.kind:
            return
        self.dismiss(None)
        self.app.post_message(JumpTo(KINDS[target.kind].pane, target.record_id))

    def action_forget(self) -> None:
        target = self.selected()
        if target is None or target.kind != "lesson":
            self.app.notify("f forgets a lesson: select a lesson's row", severity="warning")
            return

        async def answered(yes: bool | None) -> None:
            if not yes:
                return
            if await self.workbench.write(
                "forget_lesson",
                lesson=target.record_id,
                done=f"Forgotten: “{clip(target.title, 40)}” (u in Rules & lessons undoes it)",
            ):
                self.load()

        self.app.push_screen(
            ConfirmScreen("Forget this lesson?", f"“{target.title}”", confirm="Forget"),
            answered,
        )

    def action_merge(self) -> None:
        target = self.selected()
        if target is None or target.finding["kind"] != "near_duplicates":
            self.app.notify("m merges a near-duplicate group: select one", severity="warning")
            return
        keep, *rest = target.finding["records"]
        titles = [t.title for t in self.targets if t.finding is target.finding]

        async def answered(yes: bool | None) -> None:
            if not yes:
                return
            if await self.workbench.write(
                "merge_lessons",
                keep=keep,
                absorb=rest,
                done=f"Merged {len(rest)} into “{clip(titles[0], 40)}”",
            ):
                self.load()

        self.app.push_screen(
            ConfirmScreen(
                f"Merge {len(rest)} near-duplicate lesson{'s' if len(rest) > 1 else ''} "
                "into the first?",
                "\n".join(f"{'keep ' if i == 0 else 'merge'}  {t}" for i, t in enumerate(titles))
                + "\n\nThe others are marked superseded; their wording joins its history.",
                confirm="Merge",
            ),
            answered,
        )

    async def action_rule_off(self) -> None:
        target = self.selected()
        if target is None or target.kind != "rule":
            self.app.notify("t switches a rule off: select a rule's row", severity="warning")
            return
        if await self.workbench.write(
            "deactivate_rule",
            rule=target.record_id,
            done=f"Rule switched off: {clip(target.title, 50)}",
        ):
            self.load()
