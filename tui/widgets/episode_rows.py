"""Episode rows for a VirtualTable: a Row is built only when it is drawn.

Backed by :class:`core.domain.episodes.EpisodeRow` tuples (a compact index of up to
hundreds of thousands of episodes), so scrolling a list of 100,000 episodes
formats only the rows on screen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from rich.text import Text

from ...core.domain.episodes import EpisodeRow
from .bars import ago, outcome_style
from .virtual_table import Column, Row

OUTCOMES = ("success", "partial", "failure")
#: A glyph beside the coloured score, so the outcome reads without colour too.
GLYPH = {"success": "✓", "partial": "~", "failure": "✗"}

COLUMNS = [
    Column("index", "#", width=7, justify="right", min_width=5),
    Column("task", "Task", width=18, min_width=10, drop_order=3),
    Column("score", "Score", width=6),
    Column("steps", "Steps", width=5, justify="right", drop_order=1),
    Column("when", "When", width=7, drop_order=2),
    Column("summary", "Summary", min_width=16),
]


def positions(rows: Sequence[EpisodeRow]) -> dict[str, int]:
    """Episode id → its position in ``rows``."""
    return {row.id: position for position, row in enumerate(rows)}


def matcher(
    task: str | None, outcome: str | None, agent: str | None = None
) -> Callable[[EpisodeRow], bool]:
    """A predicate for the task, outcome and agent filters (at least one is set; agent
    "" keeps the episodes of no agent)."""
    if agent is not None:
        rest = matcher(task, outcome) if task is not None or outcome is not None else None
        if rest is None:
            return lambda r: r.agent == agent
        return lambda r: r.agent == agent and rest(r)
    if task is not None and outcome is not None:
        return lambda r: r.task_id == task and r.outcome == outcome
    if task is not None:
        return lambda r: r.task_id == task
    return lambda r: r.outcome == outcome


class EpisodeRows:
    """A RowSource over episode rows (see :class:`tui.widgets.virtual_table.RowSource`)."""

    def __init__(
        self, rows: Sequence[EpisodeRow], where: dict[str, int] | None, now: datetime
    ) -> None:
        self.rows = rows
        self._positions = where
        self._now = now

    def __len__(self) -> int:
        return len(self.rows)

    def row(self, index: int) -> Row:
        r = self.rows[index]
        return Row(
            [
                f"#{r.index}",
                r.task_id,
                Text(f"{r.score:.2f} {GLYPH.get(r.outcome, '?')}", style=outcome_style(r.outcome)),
                str(r.steps),
                ago(r.recorded_at, self._now),
                r.summary,
            ],
            key=r.id,
        )

    def index_of(self, key: str) -> int | None:
        if self._positions is None:
            self._positions = positions(self.rows)
        return self._positions.get(key)
