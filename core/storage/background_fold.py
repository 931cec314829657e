"""The thread that folds a long-lived process's folder store off its writers' path.

A fold (the log written into the table files) costs a few to tens of milliseconds,
most of it now without the store's lock (:mod:`core.storage.fold_outside`). A
commit that leaves the log past its record count or age no longer pays it: in a
process that lives on (the Python API, MCP, HTTP) this thread runs it soon after,
while the writer has already returned.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class BackgroundFold:
    """A daemon thread that calls ``fold`` each time it is woken (once per burst), with
    each plan it was handed (a fold begun in the commit's own hold), or with None."""

    def __init__(self, fold: Callable[[object | None], None]) -> None:
        self._fold = fold
        self._wanted = threading.Event()
        self._stopping = False
        #: Plans handed over and not run yet (each holds a claim on its fold: none is
        #: dropped unrun, or other processes would wait a minute for that fold).
        self._plans: list[object] = []
        #: Guards ``_busy`` (a fold running) and ``_plans``, for :meth:`settle`.
        self._idle = threading.Condition()
        self._busy = False
        self._thread = threading.Thread(target=self._run, name="memwork-fold", daemon=True)
        self._thread.start()

    def wake(self, plan: object | None = None) -> None:
        """Ask for a fold, with the plan begun for it if there is one (several asks
        before it runs make one, each plan still run)."""
        if plan is not None:
            with self._idle:
                self._plans.append(plan)
        self._wanted.set()

    def stop(self) -> bool:
        """End the thread (a fold already running, and each plan handed over, finish
        first); True when a fold was asked for without a plan and had not started: the
        caller runs it."""
        with self._idle:
            pending = self._wanted.is_set() and not self._plans
        self._stopping = True
        self._wanted.set()
        self._thread.join(timeout=30)
        return pending

    def settle(self, timeout: float) -> bool:
        """Wait until no fold is running or asked for (at most ``timeout`` seconds); False
        when one still is. The caller must not hold the store: the fold needs it."""
        with self._idle:
            return self._idle.wait_for(
                lambda: not self._busy and not self._wanted.is_set(), timeout
            )

    def _run(self) -> None:
        while True:
            self._wanted.wait()
            with self._idle:
                self._wanted.clear()
                plans, self._plans = self._plans, []
                self._busy = bool(plans) or not self._stopping
            if self._busy:
                try:
                    for plan in plans or [None]:
                        self._fold(plan)
                except Exception:  # noqa: BLE001, S110 - the log keeps every commit; the next one asks again
                    pass
            with self._idle:
                self._busy = False
                self._idle.notify_all()
            if self._stopping:
                return
