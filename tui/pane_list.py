"""The one list of panes: digit order, stylesheets, bindings, palette and help follow it."""

from __future__ import annotations

from .panes.base import Pane
from .panes.cards import CardsPane
from .panes.checkpoints import CheckpointsPane
from .panes.context import ContextPane
from .panes.episodes import EpisodesPane
from .panes.graph import GraphPane
from .panes.history import HistoryPane
from .panes.lessons import LessonsPane
from .panes.replay import ReplayPane
from .panes.review import ReviewPane
from .panes.sessions import SessionsPane
from .panes.slots import SlotsPane

#: The panes in the order the digits 1–9 select them; the ones past the ninth have a
#: letter (their ``KEY``: W for the Graph, the web of links, R for the Replay) since 0
#: and g mean something in the panes (docs/WORKBENCH.md).
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
    GraphPane,
    ReplayPane,
)


def pane_key(n: int, pane: type[Pane]) -> str:
    """The key that shows pane number ``n`` (from 1): its digit, or its own ``KEY``."""
    return pane.KEY or str(n)
