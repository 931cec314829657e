"""The one list of panes: digit order, stylesheets, bindings, palette and help follow it."""

from __future__ import annotations

from tui.panes.base import Pane
from tui.panes.cards import CardsPane
from tui.panes.checkpoints import CheckpointsPane
from tui.panes.context import ContextPane
from tui.panes.episodes import EpisodesPane
from tui.panes.history import HistoryPane
from tui.panes.lessons import LessonsPane
from tui.panes.review import ReviewPane
from tui.panes.sessions import SessionsPane
from tui.panes.slots import SlotsPane

#: The panes in the order the digits 1–9 select them (the README's workbench section).
PANES: tuple[type[Pane], ...] = (
    SessionsPane,
    EpisodesPane,
    CardsPane,
    LessonsPane,
    SlotsPane,
    CheckpointsPane,
    ContextPane,
    HistoryPane,
    ReviewPane,
)
