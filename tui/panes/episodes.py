"""Episodes: every attempt at a task, newest first, coloured by outcome.

Fast on 100,000 episodes: the table is backed by a compact in-memory index
(one tuple per episode) that a worker builds shard by shard. The first paint
needs no shard at all (the global aggregate keeps the last 100 episodes);
older episodes arrive in stages, newest first, and later refreshes re-read
only the shards that changed. Filters run over the compact index in a worker;
the detail of the selected episode is read in a worker once the cursor rests.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Select, Sparkline, Static

from core import aggregates, cards, episodes
from core.episodes import CompactRow, ShardRows
from core.errors import NotFound
from tui.messages import JumpTo
from tui.panes.base import Pane
from tui.widgets.bars import ago, outcome_style, short_time
from tui.widgets.virtual_table import Column, Row, VirtualTable

# Positions in a compact row (core.episodes.COMPACT_FIELDS).
INDEX, ID, TASK, SCORE, OUTCOME, STEPS, TIME, SUMMARY = range(8)

OUTCOMES = ("success", "partial", "failure")
#: A glyph beside the coloured score, so the outcome reads without colour too.
GLYPH = {"success": "✓", "partial": "~", "failure": "✗"}
#: Sizes (in episodes) at which a first load shows what it has so far.
STAGES = (1_000, 10_000)
#: Shards read per store lock: long enough to be cheap, short enough to let others in.
BATCH_SHARDS = 20
#: How long the cursor must rest before the full detail is read.
DETAIL_DELAY = 0.08
SPARK_TAIL = aggregates.SCORE_TAIL


class EpisodeRows:
    """A RowSource over compact rows: a table Row is built only when it is drawn."""

    def __init__(
        self, rows: Sequence[CompactRow], positions: dict[str, int] | None, now: Any
    ) -> None:
        self.rows = rows
        self._positions = positions
        self._now = now

    def __len__(self) -> int:
        return len(self.rows)

    def row(self, index: int) -> Row:
        idx, key, task, score, outcome, steps, stamp, summary = self.rows[index]
        return Row(
            [
                f"#{idx}",
                task,
                Text(f"{score:.2f} {GLYPH.get(outcome, '?')}", style=outcome_style(outcome)),
                str(steps),
                ago(stamp, self._now),
                summary,
            ],
            key=key,
        )

    def index_of(self, key: str) -> int | None:
        if self._positions is None:
            self._positions = _positions(self.rows)
        return self._positions.get(key)


def _positions(rows: Sequence[CompactRow]) -> dict[str, int]:
    return {row[ID]: position for position, row in enumerate(rows)}


def _matches(task: str | None, outcome: str | None):
    if task is not None and outcome is not None:
        return lambda r: r[TASK] == task and r[OUTCOME] == outcome
    if task is not None:
        return lambda r: r[TASK] == task
    return lambda r: r[OUTCOME] == outcome


class EpisodesPane(Pane):
    """The episode list with filters and a score trend; the selection's detail on the right."""

    PANE_ID = "episodes"
    TITLE = "Episodes"
    HELP = (
        "Newest first; the score is coloured by outcome (✓ success, ~ partial, ✗ failure). "
        "t picks a task, o cycles the outcome, x clears both. The sparkline shows the "
        "selected episode's task: its last 200 scores. c opens the episode's mistake card."
    )
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("t", "pick_task", "Task"),
        Binding("o", "cycle_outcome", "Outcome"),
        Binding("x", "clear_filters", "Clear filters"),
        Binding("c", "open_card", "Card"),
        Binding("y", "copy_id", "Copy id"),
    ]

    def __init__(self) -> None:
        super().__init__()
        #: Every episode loaded so far, newest first, and where each id sits.
        self.all_rows: Sequence[CompactRow] = ()
        self.all_positions: dict[str, int] | None = {}
        #: True once the compact index holds every episode.
        self.complete = False
        self.total = 0
        self.tasks: dict[str, dict[str, Any]] = {}
        self.task_filter: str | None = None
        self.outcome_filter: str | None = None
        #: The episode shown in the detail (id, document, cards) once read.
        self.detail: tuple[str, dict[str, Any], list[dict[str, Any]]] | None = None
        self._shards: dict[str, ShardRows] = {}
        self._generation = 0
        self._detail_seq = 0
        self._filter_generation = 0
        self._filter_pending = False
        self._pending_jump: str | None = None
        self._trend_task: str | None = None
        self._task_labels: list[tuple[str, int]] = []

    def compose(self) -> ComposeResult:
        with Horizontal(classes="split"):
            with Vertical(classes="list-column"):
                with Horizontal(id="episodes-toolbar", classes="pane-toolbar"):
                    yield Select[str]([], prompt="All tasks", id="episodes-task", compact=True)
                    yield Select[str](
                        [(o, o) for o in OUTCOMES],
                        prompt="All outcomes",
                        id="episodes-outcome",
                        compact=True,
                    )
                    yield Static("", id="episodes-status")
                yield VirtualTable(
                    [
                        Column("index", "#", width=7, justify="right"),
                        Column("task", "Task", width=16),
                        Column("score", "Score", width=6),
                        Column("steps", "Steps", width=5, justify="right"),
                        Column("when", "When", width=7),
                        Column("summary", "Summary"),
                    ],
                    id="episodes-table",
                    empty_text="Loading episodes…",
                )
                with Vertical(id="episodes-trend"):
                    yield Static("", id="episodes-trend-title")
                    yield Sparkline([], id="episodes-sparkline", summary_function=_mean)
            with VerticalScroll(classes="detail-column", id="episodes-detail-scroll"):
                yield Static("", id="episodes-detail")

    def focus_main(self) -> None:
        self.query_one("#episodes-table", VirtualTable).focus()

    @property
    def table(self) -> VirtualTable:
        """The episode list."""
        return self.query_one("#episodes-table", VirtualTable)

    @property
    def view_rows(self) -> Sequence[CompactRow]:
        """The rows the table shows (all, or the filtered ones)."""
        source = self.table.source
        return source.rows if isinstance(source, EpisodeRows) else ()

    # -- loading ----------------------------------------------------------------------
    def on_mount(self) -> None:
        # The newest episodes cost one small read: take it now, before a long reader
        # (the search index build) holds the store, so the first switch paints at once.
        self._load(self._generation, False, head_only=True)

    def load(self) -> None:
        self._generation += 1
        # After the next frame: the rows preloaded on mount paint first, before the
        # reader thread starts parsing shards and competing for the GIL.
        self.call_after_refresh(self._load, self._generation, self.complete)

    # Workers are not exclusive: a superseded one notices by its generation and stops
    # (cancelling a thread worker cannot stop its thread, only orphan it).
    @work(thread=True, group="episodes-load", exit_on_error=False)
    def _load(self, generation: int, have_all: bool, head_only: bool = False) -> None:
        def head(store: Any) -> tuple[dict, list[dict], list[str]]:
            return (
                aggregates.read_global(store),
                aggregates.all_tasks(store),
                episodes.shard_names(store),
            )

        glob, tasks, names = self.service.read(head)
        total = int(glob["total_episodes"])
        if not have_all:
            # The first paint: the newest episodes straight from the aggregate.
            recent = [
                (
                    e["index"],
                    e["id"],
                    e["task_id"],
                    e["score"],
                    e["outcome"],
                    e["steps"],
                    e["recorded_at"],
                    e.get("summary", ""),
                )
                for e in reversed(glob["recent"])
            ]
            self.app.call_from_thread(self._show_rows, generation, recent, None, False, total)
        self.app.call_from_thread(self._show_tasks, generation, tasks)
        if head_only:
            return

        known = self._shards
        fresh: dict[str, ShardRows] = {}
        rows: list[CompactRow] = []
        stages = [] if have_all else [s for s in STAGES if s < total]
        newest_first = list(reversed(names))
        # The newest shards go first, in small batches while a first paint waits for them.
        batch = 2
        position = 0
        while position < len(newest_first):
            if generation != self._generation:
                return
            chunk = newest_first[position : position + batch]
            position += len(chunk)
            batch = BATCH_SHARDS

            def read(store: Any, chunk: list[str] = chunk) -> list[ShardRows]:
                return [episodes.compact_shard(store, n, known.get(n)) for n in chunk]

            for name, piece in zip(chunk, self.service.read(read), strict=True):
                fresh[name] = piece
                rows.extend(piece.rows)
            if stages and len(rows) >= stages[0] and position < len(newest_first):
                while stages and len(rows) >= stages[0]:
                    stages.pop(0)
                snapshot = tuple(rows)
                self.app.call_from_thread(
                    self._show_rows, generation, snapshot, _positions(snapshot), False, total
                )
        if generation != self._generation:
            return
        self._shards = fresh
        snapshot = tuple(rows)
        self.app.call_from_thread(
            self._show_rows, generation, snapshot, _positions(snapshot), True, total
        )

    def _show_tasks(self, generation: int, tasks: list[dict[str, Any]]) -> None:
        if generation != self._generation:
            return
        self.tasks = {t["task_id"]: t for t in tasks}
        select = self.query_one("#episodes-task", Select)
        wanted = self.task_filter
        labels = [(t["task_id"], t["episodes"]) for t in tasks]
        # Rebuilt only when tasks or counts moved, and never under the user's eyes.
        if labels != self._task_labels and not select.expanded:
            self._task_labels = labels
            with select.prevent(Select.Changed):
                select.set_options([(Text(f"{task} ({count:,})"), task) for task, count in labels])
                if wanted is not None and wanted in self.tasks:
                    select.value = wanted
        if wanted is not None and wanted not in self.tasks:
            self.task_filter = None
            self._refilter()
        self._show_trend()

    def _show_rows(
        self,
        generation: int,
        rows: Sequence[CompactRow],
        positions: dict[str, int] | None,
        complete: bool,
        total: int,
    ) -> None:
        if generation != self._generation:
            return
        if not complete and (self.complete or len(rows) <= len(self.all_rows)) and self.all_rows:
            return  # Never trade a longer list for a shorter partial one.
        self.all_rows = rows
        self.all_positions = positions
        self.complete = complete
        self.total = total
        self._refilter()

    # -- filters ----------------------------------------------------------------------
    def _refilter(self) -> None:
        """Show ``all_rows`` through the current filters (filtering in a worker)."""
        self._filter_generation += 1
        if self.task_filter is None and self.outcome_filter is None:
            self._filter_pending = False
            self._set_view(self.all_rows, self.all_positions)
            return
        self._filter_pending = True
        self._show_status()
        self._filter(self._filter_generation, self.all_rows, self.task_filter, self.outcome_filter)

    @work(thread=True, group="episodes-filter", exit_on_error=False)
    def _filter(
        self,
        generation: int,
        rows: Sequence[CompactRow],
        task: str | None,
        outcome: str | None,
    ) -> None:
        view = tuple(filter(_matches(task, outcome), rows))
        positions = _positions(view)
        self.app.call_from_thread(self._show_filtered, generation, view, positions)

    def _show_filtered(
        self, generation: int, view: Sequence[CompactRow], positions: dict[str, int]
    ) -> None:
        if generation == self._filter_generation:
            self._filter_pending = False
            self._set_view(view, positions)

    def _set_view(self, rows: Sequence[CompactRow], positions: dict[str, int] | None) -> None:
        table = self.table
        filtered = self.task_filter is not None or self.outcome_filter is not None
        if filtered:
            table.empty_text = "No episodes match the filters (x clears them)"
        elif self.complete:
            table.empty_text = "No episodes yet: agents record them (memwork record-episode)"
        else:
            table.empty_text = "Loading episodes…"
        key = table.cursor_key
        at_top = round(table.scroll_y) == 0
        table.set_source(EpisodeRows(rows, positions, self.service.now), keep_key=key)
        if (
            at_top
            and table.scroll_y
            and table.cursor_row < table.scrollable_content_region.height - 1
        ):
            # A list watched from the top shows new episodes arriving (the selection
            # stays on its episode, one row lower).
            table.scroll_to(y=0, animate=False, force=True)
        self._show_status()
        if self._pending_jump is not None:
            self._try_jump()
        if table.cursor_key == key:
            # The same episode is selected: its cards may still have changed.
            self._show_selection(delay=0.0)

    def _show_status(self) -> None:
        shown = len(self.view_rows)
        loaded = len(self.all_rows)
        filtered = self.task_filter is not None or self.outcome_filter is not None
        parts: list[Any] = []
        if self._filter_pending:
            parts.append(("filtering… ", "italic"))
        elif filtered:
            parts += [(f"{shown:,}", "bold"), f" of {loaded:,}"]
        elif self.complete:
            parts += [(f"{loaded:,}", "bold"), " episodes"]
        else:
            parts += [(f"{loaded:,}", "bold"), f" of {self.total:,}"]
        if not self.complete:
            parts.append((" · loading…", "italic"))
        self.query_one("#episodes-status", Static).update(Text.assemble(*parts))

    @on(Select.Changed, "#episodes-task")
    def _task_chosen(self, event: Select.Changed) -> None:
        value = None if event.value is Select.NULL else str(event.value)
        if value != self.task_filter:
            self.task_filter = value
            self._refilter()
        if event.select.has_focus:
            self.focus_main()

    @on(Select.Changed, "#episodes-outcome")
    def _outcome_chosen(self, event: Select.Changed) -> None:
        value = None if event.value is Select.NULL else str(event.value)
        if value != self.outcome_filter:
            self.outcome_filter = value
            self._refilter()
        if event.select.has_focus:
            self.focus_main()

    def action_pick_task(self) -> None:
        """Open the task list (type to jump to a task)."""
        select = self.query_one("#episodes-task", Select)
        select.focus()
        select.action_show_overlay()

    def action_cycle_outcome(self) -> None:
        """All → success → partial → failure → all."""
        order: list[str | None] = [None, *OUTCOMES]
        following = order[(order.index(self.outcome_filter) + 1) % len(order)]
        select = self.query_one("#episodes-outcome", Select)
        select.value = Select.NULL if following is None else following

    def action_clear_filters(self) -> None:
        """Show every episode again."""
        if self.task_filter is None and self.outcome_filter is None:
            return
        for name in ("#episodes-task", "#episodes-outcome"):
            select = self.query_one(name, Select)
            with select.prevent(Select.Changed):
                select.clear()
        self.task_filter = self.outcome_filter = None
        self._refilter()

    # -- selection, trend, detail -------------------------------------------------------
    def selected_row(self) -> CompactRow | None:
        """The compact row under the cursor."""
        rows = self.view_rows
        index = self.table.cursor_row
        return rows[index] if 0 <= index < len(rows) else None

    @on(VirtualTable.CursorMoved, "#episodes-table")
    def _cursor_moved(self) -> None:
        self._show_selection(delay=DETAIL_DELAY)

    def _show_selection(self, delay: float) -> None:
        """What the compact row knows, now; the full detail once the cursor rests."""
        row = self.selected_row()
        self._show_trend()
        if row is None:
            self.detail = None
            self.query_one("#episodes-detail", Static).update(
                Text("No episode selected", style="italic")
            )
            return
        if self.detail is None or self.detail[0] != row[ID]:
            self.detail = None
            self.query_one("#episodes-detail", Static).update(self._render_detail(row, None, []))
        self._read_detail(row, delay)

    def _show_trend(self) -> None:
        row = self.selected_row()
        task_id = row[TASK] if row is not None else self.task_filter
        title = self.query_one("#episodes-trend-title", Static)
        spark = self.query_one("#episodes-sparkline", Sparkline)
        task = self.tasks.get(task_id or "")
        if task is None:
            self._trend_task = None
            title.update(Text("Score trend: select an episode", style="italic"))
            spark.data = []
            return
        tail = list(task.get("score_tail", []))[-SPARK_TAIL:]
        outcomes = task.get("outcomes", {})
        title.update(
            Text.assemble(
                (f"{task['task_id']}", "bold"),
                f" · {task['episodes']:,} · mean {task['mean_score']:.2f} · ",
                (f"✓{outcomes.get('success', 0):,} ", outcome_style("success")),
                (f"~{outcomes.get('partial', 0):,} ", outcome_style("partial")),
                (f"✗{outcomes.get('failure', 0):,}", outcome_style("failure")),
                (
                    f" · last {len(tail)} {min(tail):.2f}–{max(tail):.2f}" if tail else "",
                    "dim",
                ),
            )
        )
        if task_id != self._trend_task or spark.data != tail:
            self._trend_task = task_id
            # Two cells per score until the history fills the width: one bar per episode.
            spark.styles.max_width = max(1, 2 * len(tail))
            spark.data = tail

    def _read_detail(self, row: CompactRow, delay: float) -> None:
        self._detail_seq += 1
        self._detail_worker(self._detail_seq, row, delay)

    @work(thread=True, group="episodes-detail", exit_on_error=False)
    def _detail_worker(self, seq: int, row: CompactRow, delay: float) -> None:
        if delay:
            time.sleep(delay)  # debounce: a newer cursor move supersedes this read
        if seq != self._detail_seq:
            return

        def read(store: Any) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
            try:
                doc = episodes.get_episode(store, f"#{row[INDEX]}")
                if doc["id"] != row[ID]:
                    doc = episodes.get_episode(store, row[ID])
            except NotFound:
                return None
            return doc, _cards_of(store, doc.get("card_ids", []))

        found = self.service.read(read)
        if found is not None and seq == self._detail_seq:
            self.app.call_from_thread(self._show_detail, row, *found)

    def _show_detail(self, row: CompactRow, doc: dict[str, Any], touched: list[dict]) -> None:
        current = self.selected_row()
        if current is None or current[ID] != row[ID]:
            return
        self.detail = (row[ID], doc, touched)
        self.query_one("#episodes-detail", Static).update(self._render_detail(row, doc, touched))

    def _render_detail(
        self, row: CompactRow, doc: dict[str, Any] | None, touched: list[dict[str, Any]]
    ) -> Group:
        now = self.service.now
        outcome = row[OUTCOME]
        head = Text.assemble(
            (f"Episode #{row[INDEX]}", "bold"),
            "  ",
            (f"{row[SCORE]:.2f} {GLYPH.get(outcome, '')} {outcome}", outcome_style(outcome)),
            "\n",
            (f"{row[TASK]}", "bold"),
            f" · {row[STEPS]} steps\n",
            (f"{short_time(row[TIME])} ({ago(row[TIME], now)})", "dim"),
            "\n\n",
            row[SUMMARY] or Text("(no summary)", style="dim italic"),
            "\n",
        )
        if doc is None:
            return Group(head, Text("\nloading…", style="dim italic"))
        parts: list[Any] = [head]
        who = []
        if doc.get("worker_id"):
            who.append(f"worker {doc['worker_id']}")
        if doc.get("session_id"):
            who.append(f"session {doc['session_id']}")
        if who:
            parts.append(Text(" · ".join(who), style="dim"))
        parts += _list_section("Mistakes", doc.get("mistakes", []), "red")
        parts += _list_section("Successes", doc.get("successes", []), "green")
        errors = doc.get("errors", [])
        if errors:
            parts.append(_title(f"Errors ({len(errors)})"))
            for error in errors:
                text = Text.assemble(
                    (f"{error.get('error_type', 'Error')}", "bold red"),
                    f": {error.get('message', '')}",
                )
                if error.get("resolution"):
                    text.append(f"\n  → {error['resolution']}", style="green")
                parts.append(text)
        if touched:
            parts.append(_title(f"Mistake cards ({len(touched)}) · c opens"))
            for card in touched:
                line = Text.assemble(
                    (f"[{card['mistake_type']}]", "magenta"),
                    f" seen {card['seen_count']}×",
                )
                if card.get("correct_decision"):
                    line.append(f"\n  do: {card['correct_decision']}")
                line.append(f"\n  {card.get('lesson', '')}", style="italic")
                if card.get("_merged_into"):
                    line.append(f"\n  (merged into {card['id']})", style="dim")
                parts.append(line)
        elif doc.get("card_ids"):
            parts.append(_title("Mistake cards"))
            parts.append(Text("no longer in the store", style="dim italic"))
        metadata = doc.get("metadata") or {}
        if metadata:
            parts.append(_title("Metadata"))
            parts.append(
                Text("\n".join(f"{key}: {value}" for key, value in sorted(metadata.items())))
            )
        parts.append(Text(f"\n{doc['id']}", style="dim"))
        return Group(*parts)

    # -- jumps and actions ------------------------------------------------------------
    def jump_to(self, ref: str) -> None:
        """Select episode ``ref`` (an id, or ``#index``), loading older episodes if needed."""
        self._pending_jump = ref
        if not self._try_jump():
            self._locate(ref)

    def _try_jump(self) -> bool:
        ref = self._pending_jump
        if ref is None:
            return True
        if ref.startswith("#"):
            return False  # _locate turns an index into an id
        table = self.table
        position = table.source.index_of(ref) if isinstance(table.source, EpisodeRows) else None
        if position is not None:
            self._pending_jump = None
            table.move_cursor(position)
            table.focus()
            return True
        if (
            self.all_positions is not None
            and ref in self.all_positions
            and (self.task_filter is not None or self.outcome_filter is not None)
        ):
            self.app.notify("Filters cleared to show the episode", timeout=3)
            self.action_clear_filters()
            return self._pending_jump is None
        if self.complete and self.all_positions is not None and ref not in self.all_positions:
            self._pending_jump = None
            self.app.notify(f"Episode {ref} is not in the store", severity="warning")
        return False

    @work(thread=True, group="episodes-locate", exit_on_error=False)
    def _locate(self, ref: str) -> None:
        try:
            doc = self.service.read(episodes.get_episode, ref)
        except NotFound:
            self.app.call_from_thread(self._located, ref, None)
            return
        self.app.call_from_thread(self._located, ref, doc)

    def _located(self, ref: str, doc: dict[str, Any] | None) -> None:
        if self._pending_jump != ref:
            return
        if doc is None:
            self._pending_jump = None
            self.app.notify(f"Episode {ref} is not in the store", severity="warning")
            return
        self._pending_jump = doc["id"]
        if not self._try_jump():
            self.app.notify(f"Loading older episodes to show #{doc['index']}…", timeout=3)

    def action_open_card(self) -> None:
        """Show the selected episode's first mistake card in the Cards pane."""
        row = self.selected_row()
        if row is None or self.detail is None or self.detail[0] != row[ID]:
            self.app.notify("Select an episode first", severity="warning")
            return
        touched = self.detail[2]
        if not touched:
            self.app.notify("This episode touched no mistake card")
            return
        self.workbench.post_message(JumpTo("cards", touched[0]["id"]))

    def action_copy_id(self) -> None:
        """Copy the selected episode's id."""
        row = self.selected_row()
        if row is not None:
            self.app.copy_to_clipboard(row[ID])
            self.app.notify(f"Copied {row[ID]}", timeout=2)


def _cards_of(store: Any, card_ids: list[str]) -> list[dict[str, Any]]:
    """The cards an episode touched; a card merged away resolves to the card that took it."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for card_id in card_ids:
        try:
            card = cards.resolve(store, card_id)
        except NotFound:
            continue
        if card["id"] != card_id:
            card["_merged_into"] = True
        if card["id"] not in seen:
            seen.add(card["id"])
            out.append(card)
    return out


def _title(text: str) -> Text:
    return Text(f"\n{text}", style="bold")


def _list_section(title: str, items: list[str], style: str) -> list[Text]:
    if not items:
        return []
    body = Text()
    for number, item in enumerate(items):
        if number:
            body.append("\n")
        body.append("• ", style=style)
        body.append(item)
    return [_title(f"{title} ({len(items)})"), body]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)
