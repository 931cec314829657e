"""A task's score trend: its numbers on one line and a sparkline of its last scores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Sparkline, Static

from .bars import outcome_style


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


class ScoreTrend(Vertical):
    """Count, mean and outcomes of a task, and one bar per recent score."""

    DEFAULT_CSS = """
    ScoreTrend {
        height: 4;
        border-top: solid $panel-lighten-2;
        padding: 0 1;
    }
    ScoreTrend > #episodes-trend-title {
        height: 1;
        color: $text-muted;
    }
    ScoreTrend > Sparkline {
        height: 2;
        margin-top: 0;
    }
    ScoreTrend > Sparkline > .sparkline--min-color {
        color: $error;
    }
    ScoreTrend > Sparkline > .sparkline--max-color {
        color: $success;
    }
    """

    def __init__(self, tail: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tail = tail
        self._shown_task: str | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="episodes-trend-title")
        yield Sparkline([], id="episodes-sparkline", summary_function=_mean)

    def show(self, task: dict[str, Any] | None) -> None:
        """Show a task's aggregate (None: nothing selected)."""
        title = self.query_one("#episodes-trend-title", Static)
        spark = self.query_one(Sparkline)
        if task is None:
            self._shown_task = None
            title.update(Text("Score trend: select an episode", style="italic"))
            spark.data = []
            return
        tail = list(task.get("score_tail", []))[-self.tail :]
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
        if task["task_id"] != self._shown_task or spark.data != tail:
            self._shown_task = task["task_id"]
            # Two cells per score until the history fills the width: one bar per episode.
            spark.styles.max_width = max(1, 2 * len(tail))
            spark.data = tail
