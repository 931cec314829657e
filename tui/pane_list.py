"""The one list of panes: digit order, stylesheets, bindings, palette and help follow it."""

from __future__ import annotations

from .panes.base import Pane
from .panes.cards import CardsPane
from .panes.checkpoints import CheckpointsPane
from .panes.context import ContextPane
from .panes.episodes import EpisodesPane
from .panes.history import HistoryPane
from .panes.lessons import LessonsPane
from .panes.review import ReviewPane
from .panes.sessions import SessionsPane
from .panes.slots import SlotsPane

#: The panes in the order the digits 1–9 select them (docs/WORKBENCH.md).
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
