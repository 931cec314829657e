"""The last answer of a costly pure computation, kept with what it was asked."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class LastResult:
    """The last answer of a costly pure computation, kept with what it was asked: the
    workbench asks for the same lessons' pairs from its header and two panes at once,
    and again whenever an agent's write refreshes them though no lesson changed.
    Callers asking at the same time wait for the one computing, then share its answer."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._asked: object = None
        self._answer: Any = None

    def get(self, asked: Hashable, compute: Callable[[], T]) -> T:
        """The answer for ``asked``: kept, or ``compute()`` (kept in its place)."""
        with self._lock:
            if self._asked is None or self._asked != asked:
                self._answer = compute()
                self._asked = asked
            found: T = self._answer
            return found
