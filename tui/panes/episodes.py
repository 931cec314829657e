"""Episodes: every attempt at a task, newest first, coloured by outcome.

Fast on 100,000 episodes: the table is backed by a compact in-memory index (one
:class:`core.domain.episodes.EpisodeRow` per episode) that a worker builds shard by shard. The
first paint needs no shard at all (the global aggregate keeps the last 100 episodes);
older episodes arrive in stages, newest first, and later refreshes re-read
only the shards that changed. Filters run over the compact index in a worker;
the detail of the selected episode is read in a worker once the cursor rests.
"""

from __future__ import annotations

from collections.abc import Sequence
from time import sleep
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Select, Static
from textual.worker import get_current_worker

from ...core.domain import aggregates
from ...core.domain.episodes import EpisodeRow, ShardRows
from ..gc_pause import big_load
from ..messages import JumpTo
from ..widgets.episode_detail import render_episode
from ..widgets.episode_rows import COLUMNS, OUTCOMES, EpisodeRows, matcher, positions
from ..widgets.score_trend import ScoreTrend
from ..widgets.virtual_table import VirtualTable
from .base import Pane

#: Sizes (in episodes) at which a first load shows what it has so far.
STAGES = (1_000, 10_000)
#: Shards read per store lock: long enough to be cheap, short enough to let others in.
BATCH_SHARDS = 20
#: How long the cursor must rest before the full detail is read.
DETAIL_DELAY = 0.08
SPARK_TAIL = aggregates.SCORE_TAIL


class EpisodesPane(Pane):
    """The episode list with filters and a score trend; the selection's detail on the right."""

    PANE_ID = "episodes"
    TITLE = "Episodes"
    HELP = (
        "Newest first; the score is coloured by outcome (✓ success, ~ partial, ✗ failure). "
        "t picks a task, o cycles the outcome, f the agent that recorded it (all, each "
        "agent, then episodes of no agent), x clears them. The sparkline shows the "
        "selected episode's task: its last 200 scores. c opens the episode's mistake card."
    )
    PALETTE_ANYWHERE = frozenset({"pick_task", "cycle_outcome", "cycle_agent", "clear_filters"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "pick_task", "Task"),
        Binding("o", "cycle_outcome", "Outcome"),
        Binding("f", "cycle_agent", "Agent", tooltip="Show one agent's episodes (cycles)"),
        Binding("x", "clear_filters", "Clear filters"),
        Binding("c", "open_card", "Card"),
        Binding("y", "copy_id", "Copy id"),
    ]

    def __init__(self) -> None:
        super().__init__()
        #: Every episode loaded so far, newest first, and where each id sits.
        self.all_rows: Sequence[EpisodeRow] = ()
        self.all_positions: dict[str, int] | None = {}
        #: True once the compact index holds every episode.
        self.complete = False
        self.total = 0
        self.tasks: dict[str, dict[str, Any]] = {}
        self.task_filter: str | None = None
        self.outcome_filter: str | None = None
        #: The agent whose episodes show (None: every agent; "": episodes of no agent).
        self.agent_filter: str | None = None
        #: The episode shown in the detail (id, document, cards) once read.
        self.detail: tuple[str, dict[str, Any], list[dict[str, Any]]] | None = None
        self._shards: dict[str, ShardRows] = {}
        self._filter_pending = False
        self._pending_jump: str | None = None
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
                yield VirtualTable(COLUMNS, id="episodes-table", empty_text="Loading episodes…")
                yield ScoreTrend(SPARK_TAIL, id="episodes-trend")
            with VerticalScroll(classes="detail-column", id="episodes-detail-scroll"):
                yield Static("", id="episodes-detail")

    def focus_main(self) -> None:
        self.query_one("#episodes-table", VirtualTable).focus()

    @property
    def table(self) -> VirtualTable:
        """The episode list."""
        return self.query_one("#episodes-table", VirtualTable)

    @property
    def view_rows(self) -> Sequence[EpisodeRow]:
        """The rows the table shows (all, or the filtered ones)."""
        source = self.table.source
        return source.rows if isinstance(source, EpisodeRows) else ()

    # -- loading ----------------------------------------------------------------------
    def on_mount(self) -> None:
        # The newest episodes cost one small read: take it now, before a long reader
        # (the search index build) holds the store, so the first switch paints at once.
        self._load(False, head_only=True)

    def load(self) -> None:
        # After the next frame: the rows preloaded on mount paint first, before the
        # reader thread starts parsing shards and competing for the GIL.
        self.call_after_refresh(self._load, self.complete)

    @work(thread=True, exclusive=True, group="episodes-load", exit_on_error=False)
    def _load(self, have_all: bool, head_only: bool = False) -> None:
        worker = get_current_worker()
        head = self.service.episode_head()
        if not have_all:
            # The first paint: the newest episodes straight from the aggregate.
            self.deliver(self._show_rows, head.recent, None, False, head.total)
        self.deliver(self._show_tasks, head.tasks)
        if head_only:
            return
        with big_load():  # no full collection pass while the rows pile up
            known = self._shards
            fresh: dict[str, ShardRows] = {}
            rows: list[EpisodeRow] = []
            stages = [] if have_all else [s for s in STAGES if s < head.total]
            newest_first = list(reversed(head.pages))
            # The newest shards go first, in small batches while a first paint waits for them.
            batch = 2
            position = 0
            while position < len(newest_first):
                if worker.is_cancelled:
                    return  # a newer load took over (a thread cannot be stopped from outside)
                chunk = newest_first[position : position + batch]
                position += len(chunk)
                batch = BATCH_SHARDS
                for name, piece in zip(chunk, self.service.episode_rows(chunk, known), strict=True):
                    fresh[name] = piece
                    rows.extend(piece.rows)
                if stages and len(rows) >= stages[0] and position < len(newest_first):
                    while stages and len(rows) >= stages[0]:
                        stages.pop(0)
                    partial = tuple(rows)
                    self.deliver(self._show_rows, partial, positions(partial), False, head.total)
            if worker.is_cancelled:
                return
            self._shards = fresh
            loaded = tuple(rows)
            self.deliver(self._show_rows, loaded, positions(loaded), True, head.total)

    def _show_tasks(self, tasks: list[dict[str, Any]]) -> None:
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
        rows: Sequence[EpisodeRow],
        where: dict[str, int] | None,
        complete: bool,
        total: int,
    ) -> None:
        if not complete and (self.complete or len(rows) <= len(self.all_rows)) and self.all_rows:
            return  # Never trade a longer list for a shorter partial one.
        self.all_rows = rows
        self.all_positions = where
        self.complete = complete
        self.total = total
        self._refilter()

    # -- filters ----------------------------------------------------------------------
    def _refilter(self) -> None:
        """Show ``all_rows`` through the current filters (filtering in a worker)."""
        if not self.filtered:
            self.workers.cancel_group(self, "episodes-filter")  # its result is stale now
            self._filter_pending = False
            self._set_view(self.all_rows, self.all_positions)
            return
        self._filter_pending = True
        self._show_status()
        self._filter(self.all_rows, self.task_filter, self.outcome_filter, self.agent_filter)

    @property
    def filtered(self) -> bool:
        """Whether a filter (task, outcome, agent) is set."""
        return (
            self.task_filter is not None
            or self.outcome_filter is not None
            or self.agent_filter is not None
        )

    @work(thread=True, exclusive=True, group="episodes-filter", exit_on_error=False)
    def _filter(
        self,
        rows: Sequence[EpisodeRow],
        task: str | None,
        outcome: str | None,
        agent: str | None,
    ) -> None:
        view = tuple(filter(matcher(task, outcome, agent), rows))
        self.deliver(self._show_filtered, view, positions(view))

    def _show_filtered(self, view: Sequence[EpisodeRow], where: dict[str, int]) -> None:
        self._filter_pending = False
        self._set_view(view, where)

    def _set_view(self, rows: Sequence[EpisodeRow], where: dict[str, int] | None) -> None:
        table = self.table
        if self.filtered:
            table.empty_text = "No episodes match the filters (x clears them)"
        elif self.complete:
            table.empty_text = "No episodes yet: agents record them (memwork record-episode)"
        else:
            table.empty_text = "Loading episodes…"
        key = table.cursor_key
        # A list watched from the top shows new episodes arriving (the table keeps its
        # top in view); scrolled down, it says how many arrived above.
        table.set_source(EpisodeRows(rows, where, self.service.now), keep_key=key)
        self._show_status()
        if self._pending_jump is not None:
            self._try_jump()
        if table.cursor_key == key:
            # The same episode is selected: its cards may still have changed.
            self._show_selection(delay=0.0)

    def _show_status(self) -> None:
        shown = len(self.view_rows)
        loaded = len(self.all_rows)
        parts: list[Any] = []
        if self._filter_pending:
            parts.append(("filtering… ", "italic"))
        elif self.filtered:
            parts += [(f"{shown:,}", "bold"), f" of {loaded:,}"]
        elif self.complete:
            parts += [(f"{loaded:,}", "bold"), " episode" if loaded == 1 else " episodes"]
        else:
            parts += [(f"{loaded:,}", "bold"), f" of {self.total:,}"]
        if self.agent_filter is not None:
            parts += [" · agent ", (self.agent_filter or "(none)", "bold magenta")]
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

    def action_cycle_agent(self) -> None:
        """All → each agent that recorded an episode → episodes of no agent → all."""
        named = sorted({r.agent for r in self.all_rows if r.agent})
        anonymous = [""] if any(not r.agent for r in self.all_rows) else []
        order: list[str | None] = [None, *named, *anonymous]
        at = order.index(self.agent_filter) if self.agent_filter in order else 0
        self.agent_filter = order[(at + 1) % len(order)]
        # The list's status line says whose; no toast (it would hide the rows).
        self._refilter()

    def action_clear_filters(self) -> None:
        """Show every episode again."""
        if not self.filtered:
            return
        for name in ("#episodes-task", "#episodes-outcome"):
            select = self.query_one(name, Select)
            with select.prevent(Select.Changed):
                select.clear()
        self.task_filter = self.outcome_filter = self.agent_filter = None
        self._refilter()

    # -- selection, trend, detail -------------------------------------------------------
    def selected_row(self) -> EpisodeRow | None:
        """The row under the cursor."""
        rows = self.view_rows
        index = self.table.cursor_row
        return rows[index] if 0 <= index < len(rows) else None

    @on(VirtualTable.CursorMoved, "#episodes-table")
    def _cursor_moved(self) -> None:
        self._show_selection(delay=DETAIL_DELAY)

    def _show_selection(self, delay: float) -> None:
        """What the list row knows, now; the full detail once the cursor rests."""
        row = self.selected_row()
        self._show_trend()
        detail = self.query_one("#episodes-detail", Static)
        if row is None:
            self.detail = None
            detail.update(Text("No episode selected", style="italic"))
            return
        if self.detail is None or self.detail[0] != row.id:
            self.detail = None
            detail.update(render_episode(row, None, [], self.service.now))
        self._read_detail(row, delay)

    def _show_trend(self) -> None:
        row = self.selected_row()
        task_id = row.task_id if row is not None else self.task_filter
        self.query_one(ScoreTrend).show(self.tasks.get(task_id or ""))

    @work(thread=True, exclusive=True, group="episodes-detail", exit_on_error=False)
    def _read_detail(self, row: EpisodeRow, delay: float) -> None:
        if delay:
            sleep(delay)  # debounce: a newer cursor move replaces this worker meanwhile
        if get_current_worker().is_cancelled:
            return
        found = self.service.episode_detail(row.index, row.id)
        if found is not None:
            self.deliver(self._show_detail, row, *found)

    def _show_detail(
        self, row: EpisodeRow, doc: dict[str, Any], touched: list[dict[str, Any]]
    ) -> None:
        current = self.selected_row()
        if current is None or current.id != row.id:
            return
        self.detail = (row.id, doc, touched)
        self.query_one("#episodes-detail", Static).update(
            render_episode(row, doc, touched, self.service.now)
        )

    # -- jumps and actions ------------------------------------------------------------
    def jump_to(self, ref: str) -> None:
        """Select episode ``ref`` (an id, or ``#index``), loading older episodes if needed;
        ``task:<id>`` shows that task's episodes (a context line about a whole task)."""
        if ref.startswith("task:"):
            self._show_task(ref.removeprefix("task:"))
            return
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
        if self.all_positions is not None and ref in self.all_positions and self.filtered:
            self.app.notify("Filters cleared to show the episode", timeout=3)
            self.action_clear_filters()
            return self._pending_jump is None
        if self.complete and self.all_positions is not None and ref not in self.all_positions:
            self._pending_jump = None
            self.warn(f"Episode {ref} is not in the store")
        return False

    def _show_task(self, task: str) -> None:
        """Filter the list to ``task`` (kept for when the task list arrives)."""
        select = self.query_one("#episodes-task", Select)
        if task in self.tasks:
            select.value = task  # posts Changed, which filters
        else:
            self.task_filter = task  # _show_tasks selects it once the tasks are in
            self._refilter()
        self.table.focus()

    @work(thread=True, exclusive=True, group="episodes-locate", exit_on_error=False)
    def _locate(self, ref: str) -> None:
        self.deliver(self._located, ref, self.service.find_episode(ref))

    def _located(self, ref: str, doc: dict[str, Any] | None) -> None:
        if self._pending_jump != ref:
            return
        if doc is None:
            self._pending_jump = None
            self.warn(f"Episode {ref} is not in the store")
            return
        self._pending_jump = doc["id"]
        if not self._try_jump():
            self.app.notify(f"Loading older episodes to show #{doc['index']}…", timeout=3)

    def action_open_card(self) -> None:
        """Show the selected episode's first mistake card in the Cards pane."""
        row = self.selected_row()
        if row is None or self.detail is None or self.detail[0] != row.id:
            self.warn("Select an episode first")
            return
        touched = self.detail[2]
        if not touched:
            self.app.notify("This episode touched no mistake card")
            return
        self.workbench.post_message(JumpTo("cards", touched[0]["id"]))

    async def action_copy_id(self) -> None:
        """Copy the selected episode's id."""
        row = self.selected_row()
        if row is None:
            self.warn("No episode selected")
            return
        await self.workbench.copy_out(row.id, f"The id of episode #{row.index} ({row.id})")
