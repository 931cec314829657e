"""Checkpoints (store checkpoints): copies of the whole store but its audit log. Create
one with a message, see what changed since (per table, per field, with the records'
titles), restore after a confirmation that names the automatic checkpoint taken first
(which undoes the restore), delete."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from ...core.base.text import clip
from ..screens.confirm import ConfirmScreen
from ..screens.form import Field, FormScreen
from ..widgets.bars import ago, short_time
from ..widgets.virtual_table import Column, ListRowSource, Row, VirtualTable
from .base import Pane

#: How many ids of each kind (added / removed / changed) a table shows before "… and N more".
FIRST_N = 6
#: Diff order: what people curate first, then what agents write in bulk.
TABLE_ORDER = (
    "lessons",
    "rules",
    "slots",
    "mistake_cards",
    "episodes",
    "sessions",
    "observations",
    "working_memory",
)


#: Stored field names that mean little to a reader, in the words the panes use.
FIELD_WORDS = {
    ("rules", "seq"): "order (switched back on: now the newest of its scope)",
    ("rules", "active"): "on/off",
    ("lessons", "deleted"): "forgotten",
    ("lessons", "superseded_by"): "superseded",
    ("lessons", "last_reinforced_at"): "last reinforced",
    ("slots", "position"): "position in the context",
}


def field_words(table: str, fields: list[str]) -> str:
    """``order (…), on/off`` for the changed fields of a record of ``table``."""
    return ", ".join(FIELD_WORDS.get((table, f), f.replace("_", " ")) for f in fields)


def ordered_tables(changes: dict[str, Any]) -> list[str]:
    """The diff's tables, curated ones first (unknown ones last, as they come)."""
    rank = {t: i for i, t in enumerate(TABLE_ORDER)}
    return sorted(changes, key=lambda t: rank.get(t, len(rank)))


def summarize(changes: dict[str, dict[str, Any]]) -> str:
    """``lessons +25, rules +2 ~1, slots −1`` (empty when nothing changed)."""
    parts = []
    for table in ordered_tables(changes):
        change = changes[table]
        counts = [
            f"{sign}{len(change[kind])}"
            for sign, kind in (("+", "added"), ("−", "removed"), ("~", "changed"))
            if change[kind]
        ]
        if counts:
            parts.append(f"{table} {' '.join(counts)}")
    return ", ".join(parts)


class CheckpointsPane(Pane):
    """The checkpoints (newest first) above, the selected one's diff against now below."""

    PANE_ID = "checkpoints"
    TITLE = "Checkpoints"
    SHORT_TITLE = "Checkpts"
    HELP = (
        "A checkpoint is a snapshot of every table but the audit log. The detail shows "
        "what changed from the selected checkpoint to now. Restoring first saves the "
        "current state as an automatic checkpoint, so a restore can be undone by "
        "restoring that one."
    )
    PALETTE_ANYWHERE = frozenset({"create", "focus_detail"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "create", "Create"),
        Binding("r", "restore", "Restore"),
        Binding("d", "delete", "Delete"),
        Binding("tab", "focus_detail", "List / diff", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.checkpoints: dict[str, dict[str, Any]] = {}
        #: Diffs against now, per checkpoint id; cleared whenever the store moves.
        self.diffs: dict[str, dict[str, Any]] = {}
        self.diff_errors: dict[str, str] = {}
        self._pending_jump: str | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="checkpoints-status", classes="pane-toolbar")
        yield VirtualTable(
            [
                Column("created", "Created", width=16),
                Column("ago", "Age", width=8, justify="right", drop_order=2),
                Column("kind", "Kind", width=9, drop_order=1),
                Column("records", "Records", width=8, justify="right", drop_order=3),
                Column("description", "Description", min_width=20),
            ],
            id="checkpoints",
            empty_text="Loading checkpoints…",
        )
        with VerticalScroll(id="checkpoint-diff-scroll"):
            yield Static("", id="checkpoint-detail")

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._redraw())

    # -- loading ----------------------------------------------------------------------
    def load(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="checkpoints-load", exit_on_error=False)
    def _load(self) -> None:
        self.deliver(self._show, self.service.store_checkpoints())

    def _show(self, checkpoints: list[dict[str, Any]]) -> None:
        self.checkpoints = {c["id"]: c for c in checkpoints}
        self.diffs.clear()  # "now" moved: every diff against it is stale
        self.diff_errors.clear()
        self._redraw()

    def _redraw(self) -> None:
        checkpoints = list(self.checkpoints.values())
        now = self.service.now
        muted = "dim"
        accent = self._colour("accent", "cyan")
        rows = [
            Row(
                [
                    short_time(c["created_at"]),
                    ago(c["created_at"], now),
                    Text("automatic", style=muted) if c.get("automatic") else Text("manual"),
                    str(sum(c.get("counts", {}).values())),
                    Text(
                        c.get("description") or "(no description)",
                        style="" if c.get("description") else muted,
                    ),
                ],
                key=c["id"],
            )
            for c in sorted(checkpoints, key=lambda c: (c["created_at"], c["id"]), reverse=True)
        ]
        table = self.query_one("#checkpoints", VirtualTable)
        table.empty_text = "No checkpoints yet: press c to snapshot the store as it is now"
        table.styles.height = max(4, min(len(rows) + 2, 12))
        keep = self._pending_jump or table.cursor_key
        table.set_source(ListRowSource(rows), keep_key=keep)
        if self._pending_jump and self._pending_jump in self.checkpoints:
            self._pending_jump = None
        automatic = sum(1 for c in checkpoints if c.get("automatic"))
        count = len(checkpoints)
        self.query_one("#checkpoints-status", Static).update(
            Text.assemble(
                (f"{count} checkpoint{'' if count == 1 else 's'}", "bold"),
                f" · {automatic} automatic (taken before restores)" if automatic else "",
                (" · the diff compares the selected one with now", muted),
                (" · c snapshots now", accent),
            )
        )
        self._show_detail()

    def _colour(self, name: str, fallback: str) -> str:
        return self.app.theme_variables.get(name, fallback)

    # -- selection and diff -----------------------------------------------------------
    def selected(self) -> dict[str, Any] | None:
        key = self.query_one("#checkpoints", VirtualTable).cursor_key
        return self.checkpoints.get(key) if key else None

    @on(VirtualTable.CursorMoved, "#checkpoints")
    def _cursor(self) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        checkpoint = self.selected()
        detail = self.query_one("#checkpoint-detail", Static)
        if checkpoint is None:
            detail.update(Text("No checkpoint selected", style="italic"))
            return
        diff = self.diffs.get(checkpoint["id"])
        error = self.diff_errors.get(checkpoint["id"])
        if diff is None and error is None:
            self._load_diff(checkpoint["id"])
        detail.update(self._render_detail(checkpoint, diff, error))

    @work(thread=True, exclusive=True, group="checkpoints-diff", exit_on_error=False)
    def _load_diff(self, key: str) -> None:
        try:
            diff = self.service.checkpoint_diff(key, titles=FIRST_N)
        except Exception as exc:  # a missing checkpoint file must not take the pane down
            self.deliver(self._diff_failed, key, str(exc))
            return
        self.deliver(self._diff_loaded, key, diff)

    def _diff_loaded(self, key: str, diff: dict[str, Any]) -> None:
        self.diffs[key] = diff
        if (selected := self.selected()) and selected["id"] == key:
            self._show_detail()

    def _diff_failed(self, key: str, message: str) -> None:
        self.diff_errors[key] = message
        if (selected := self.selected()) and selected["id"] == key:
            self._show_detail()

    def _render_detail(
        self, checkpoint: dict[str, Any], diff: dict[str, Any] | None, error: str | None
    ) -> Text:
        now = self.service.now
        muted = "dim"
        accent = self._colour("text-accent", "cyan")
        added_style = self._colour("text-success", "green")
        removed_style = self._colour("text-error", "red")
        changed_style = self._colour("text-warning", "yellow")
        out = Text()
        out.append("Checkpoint ", style="bold")
        out.append(checkpoint["id"], style=f"bold {accent}")
        kind = "automatic" if checkpoint.get("automatic") else "manual"
        out.append(
            f"   {short_time(checkpoint['created_at'])} ({ago(checkpoint['created_at'], now)})"
            f" · {kind}\n",
            style=muted,
        )
        out.append(f"“{checkpoint.get('description') or '(no description)'}”\n", style="italic")
        counts = checkpoint.get("counts", {})
        held = " · ".join(f"{n} {t}" for t, n in counts.items() if n)
        out.append(f"Holds {held or 'nothing'}\n\n", style=muted)
        if error is not None:
            out.append(f"Could not compare it with now: {error}\n", style=removed_style)
            return out
        if diff is None:
            out.append("Comparing with now…\n", style=f"italic {muted}")
            return out
        changes: dict[str, dict[str, Any]] = diff["tables"]
        titles: dict[str, dict[str, str]] = diff.get("titles", {})
        if not summarize(changes):
            out.append("No changes since this checkpoint: ", style="bold")
            out.append("the store is as it was then.\n", style=muted)
            return out
        out.append("Changes since this checkpoint", style="bold")
        out.append(" (restoring it undoes them)\n", style=muted)
        unchanged = []
        width = max(len(t) for t in changes) + 2
        for table in ordered_tables(changes):
            change = changes[table]
            if not (change["added"] or change["removed"] or change["changed"]):
                unchanged.append(table)
                continue
            out.append(f"\n{table.ljust(width)}", style=f"bold {accent}")
            for sign, kind, style in (
                ("+", "added", added_style),
                ("−", "removed", removed_style),
                ("~", "changed", changed_style),
            ):
                if change[kind]:
                    out.append(f"{sign}{len(change[kind])} {kind}  ", style=style)
            out.append("\n")
            names = titles.get(table, {})
            for sign, kind, style in (
                ("+", "added", added_style),
                ("−", "removed", removed_style),
            ):
                ids = change[kind]
                for record_id in ids[:FIRST_N]:
                    out.append(f"  {sign} ", style=style)
                    out.append(record_id)
                    if names.get(record_id):
                        out.append(f"  {names[record_id]}", style=muted)
                    out.append("\n")
                if len(ids) > FIRST_N:
                    out.append(f"    … and {len(ids) - FIRST_N} more {kind}\n", style=muted)
            changed = change["changed"]
            for entry in changed[:FIRST_N]:
                out.append("  ~ ", style=changed_style)
                out.append(entry["id"])
                if names.get(entry["id"]):
                    out.append(f"  {names[entry['id']]}", style=muted)
                out.append("\n      changed: ", style=muted)
                out.append(field_words(table, entry["fields"]), style=changed_style)
                out.append("\n")
            if len(changed) > FIRST_N:
                out.append(f"    … and {len(changed) - FIRST_N} more changed\n", style=muted)
        if unchanged:
            out.append(f"\nUnchanged: {', '.join(unchanged)}\n", style=muted)
        return out

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    def focus_main(self) -> None:
        self.query_one("#checkpoints", VirtualTable).focus()

    def action_focus_detail(self) -> None:
        """Tab goes between the list and the (scrollable) diff."""
        table = self.query_one("#checkpoints", VirtualTable)
        if table.has_focus:
            self.query_one("#checkpoint-diff-scroll").focus()
        else:
            table.focus()

    def jump_to(self, ref: str) -> None:
        table = self.query_one("#checkpoints", VirtualTable)
        for index in range(table.row_count):
            if table.row_key_at(index) == ref:
                table.move_cursor(index)
                break
        else:
            self._pending_jump = ref  # not loaded yet: select it when the list arrives
        table.focus()

    # -- actions ----------------------------------------------------------------------
    def _need_checkpoint(self) -> dict[str, Any] | None:
        checkpoint = self.selected()
        if checkpoint is None:
            self.warn("No checkpoint selected: c creates one")
        return checkpoint

    def action_create(self) -> None:
        async def submit(values: dict[str, str]) -> Any:
            created = await self.workbench.write(
                "create_checkpoint",
                description=values["description"],
                done=lambda c: f"Checkpoint {_name(c)} created",
            )
            if created is not None:
                self._pending_jump = created["id"]
            return created

        self.app.push_screen(
            FormScreen(
                "Create a checkpoint",
                [
                    Field(
                        "description",
                        "Message",
                        placeholder="e.g. before curating lessons",
                        help="A snapshot of every table (not the audit log), restorable later.",
                    )
                ],
                submit,
                save_label="Create",
            )
        )

    def action_restore(self) -> None:
        checkpoint = self._need_checkpoint()
        if checkpoint is None:
            return
        short = checkpoint["id"][:8]
        diff = self.diffs.get(checkpoint["id"])
        undoes = ""
        if diff is not None:
            summary = summarize(diff["tables"])
            undoes = (
                f"\nChanged since (+ added, − removed, ~ changed): {summary}."
                if summary
                else "\nNothing changed since."
            )

        async def answered(yes: bool | None) -> None:
            if not yes:
                return
            # As the curator (the workbench is a person): a restore past review is
            # recorded in the review queue as a decision.
            before = await self.workbench.write("restore_checkpoint", checkpoint=checkpoint["id"])
            if before is None or before.get("proposed"):
                return  # the error toast is already shown
            self._pending_jump = before["id"]
            self.app.notify(
                f"Checkpoint {_name(checkpoint)} is back. To undo, restore the automatic "
                "checkpoint "
                f"“{before['description']}” (now selected).",
                title="Restored",
                timeout=12,
            )

        self.app.push_screen(
            ConfirmScreen(
                f"Restore checkpoint {short}?",
                f"Every table but the audit log goes back to "
                f"{short_time(checkpoint['created_at'])} "
                f"(“{checkpoint.get('description') or 'no description'}”).{undoes}\n\n"
                f"The current state is saved first as an automatic checkpoint "
                f"“before restoring {short}”: restoring that one undoes this restore.",
                confirm="Restore",
            ),
            answered,
        )

    def action_delete(self) -> None:
        checkpoint = self._need_checkpoint()
        if checkpoint is None:
            return

        async def answered(yes: bool | None) -> None:
            if yes:
                await self.workbench.write(
                    "delete_checkpoint",
                    checkpoint=checkpoint["id"],
                    done=f"Deleted checkpoint {_name(checkpoint)}",
                )

        self.app.push_screen(
            ConfirmScreen(
                f"Delete checkpoint {checkpoint['id'][:8]}?",
                f"“{checkpoint.get('description') or 'no description'}” from "
                f"{short_time(checkpoint['created_at'])}. Its snapshot is removed for good; "
                "the current data is not touched.",
                confirm="Delete",
            ),
            answered,
        )


def _name(checkpoint: dict[str, Any]) -> str:
    """How a checkpoint is named in messages: its description, else when it was made."""
    description = checkpoint.get("description")
    if description:
        return f"“{clip(description, 50)}”"
    return f"of {short_time(checkpoint['created_at'])}"
