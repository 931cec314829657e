"""Working memory that never fails an agent: a long-lived process's fallback while its
Redis store does not answer.

A process that outlives one call (``Memory``, and the MCP server and the HTTP door on
top of it) keeps a :class:`Fallback` for a Redis store. Every working-memory operation
(the ``wm`` verbs) goes through it:

- While Redis answers, the operation runs on the store as always, at no extra cost.
- A process that starts while Redis does not answer starts all the same, on the fallback
  from its first call, with nothing in it yet (the store is opened when Redis answers).
- When Redis stops answering (:class:`core.base.errors.StoreUnreachable`), the working memory
  the process last read (the sessions, their working memory, the shared scopes, as its
  store's cache holds them) is copied into an in-memory store, and the operation runs
  there instead: reads see what the process last saw plus what it wrote since, and
  writes are kept. Every answer then says so: ``using_fallback: true``
  in an object (``_using_fallback`` in ``wm get-all``'s, whose other keys are the
  user's), and lists are :class:`FallbackList` (a list with ``using_fallback = True``;
  the MCP tool and the HTTP door say it beside them). One line goes to stderr, once
  per outage.
- Each write made on the fallback is journaled (the operation, its parameters, its
  instant and actor). When Redis answers again (tried on the next working-memory call,
  at most once a second), the journal is replayed on the store in order, each write at
  its own instant, so nothing written during the outage is lost; a write the store
  refuses now (a key deleted meanwhile by another process) is skipped and named. One
  line on stderr says what was written back. A process that closes while Redis is still
  away says on stderr how many writes it could not write back.

Every other operation (episodes, lessons, slots, observations...) still refuses with
the store's one-line error: only working memory is short-lived enough to keep in a
process. The CLI, one process per call, has no fallback (see docs/CONCEPTS.md).
"""

from __future__ import annotations

import functools
import sys
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TextIO, cast

from ..base.errors import StoreUnreachable, UserError

if TYPE_CHECKING:
    from ..storage.store import Store
    from .operations import Op

#: How often a process on the fallback asks Redis again (seconds, on a working-memory call).
RETRY_S = 1.0


class FallbackList(list[Any]):
    """A working-memory answer that is a list, given from process memory."""

    using_fallback = True


class FallbackDict(dict[str, Any]):
    """A working-memory answer that is an object, given from process memory."""

    using_fallback = True


def is_wm(op: Op) -> bool:
    """Whether ``op`` is a working-memory operation (a ``wm`` verb)."""
    return op.cli.split()[:1] == ["wm"]


def used_fallback(value: object) -> bool:
    """Whether an answer was given from process memory."""
    return isinstance(value, FallbackList | FallbackDict)


def mark(op: Op, value: Any) -> Any:
    """``value`` marked as given from process memory."""
    if isinstance(value, dict):
        field = "_using_fallback" if op.result == "wm_values" else "using_fallback"
        return FallbackDict({**value, field: True})
    if isinstance(value, list):
        return FallbackList(value)
    return value


def reach(store: Store | Callable[[], Store]) -> Store:
    """The open store behind ``store`` (opening it when it is an opener)."""
    if isinstance(store, _store_class()):
        return store
    return cast("Callable[[], Store]", store)()


@functools.cache
def _store_class() -> type[Store]:
    """The store class, imported on first use and then remembered: an import statement
    in :func:`reach` ran importlib's lookup on every operation (~15 µs of a call once the
    caches are cold), and one at the top would load the storage layer wherever a door
    imports this module."""
    from ..storage.store import Store

    return Store


class RunOp(Protocol):
    """The runner's ``call``: runs an operation on a store at an instant, as an actor."""

    def __call__(
        self, op: Op, store: Store, params: Mapping[str, Any], *, now: datetime, actor: str
    ) -> Any: ...


class _Write(NamedTuple):
    op: Op
    params: dict[str, Any]
    now: datetime
    actor: str


class Fallback:
    """Working memory in process memory for the Redis store at ``location``."""

    def __init__(
        self,
        location: str,
        *,
        run: RunOp,
        writes: Callable[[Op, Mapping[str, Any]], bool],
        err: TextIO | None = None,
        retry_s: float = RETRY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.location = location
        #: How an operation runs and whether it writes: the runner's, given by whoever
        #: makes the fallback (the runner sits above this policy and hands it in).
        self._run_op = run
        self._writes = writes
        self._err = err
        self._retry_s = retry_s
        self._clock = clock
        self._lock = threading.RLock()
        self._mirror: Store | None = None
        self._journal: list[_Write] = []
        self._next_try = 0.0
        self._written = 0
        self._refused: list[str] = []
        #: True while Redis does not answer and working memory is kept here.
        self.active = False

    # -- what the doors call ----------------------------------------------------------------
    def start_away(self, exc: StoreUnreachable) -> None:
        """Redis did not answer when the process started: working memory is kept here from
        the first call (empty: nothing was read), and written back once the store opens."""
        from ..storage.store import Store

        with self._lock:
            self._mirror = Store.in_memory()
            self._fall_back(exc)

    def run(
        self,
        op: Op,
        store: Store | Callable[[], Store],
        params: Mapping[str, Any],
        call: Callable[[Store], Any],
        *,
        now: datetime,
        actor: str,
    ) -> Any:
        """Run working-memory operation ``op`` (``call(store)``) on ``store`` (the store, or
        a function that opens it), or on the fallback while it does not answer; the answer,
        marked when it came from the fallback."""
        with self._lock:
            if self.active and (self._clock() < self._next_try or not self._replay(store)):
                return self._on_fallback(op, params, call, now=now, actor=actor)
            opened: Store | None = None
            try:
                opened = reach(store)
                value = call(opened)
            except StoreUnreachable as exc:
                if self.active:  # still away: nothing was journaled to find that out
                    self._next_try = self._clock() + self._retry_s
                else:
                    self._seed(opened)
                    self._fall_back(exc)
                return self._on_fallback(op, params, call, now=now, actor=actor)
            if self.active:
                self._back()
            return value

    def _on_fallback(
        self,
        op: Op,
        params: Mapping[str, Any],
        call: Callable[[Store], Any],
        *,
        now: datetime,
        actor: str,
    ) -> Any:
        value = call(self._store())
        if self._writes(op, params):
            self._journal.append(_Write(op, dict(params), now, actor))
        return mark(op, value)

    def close(self, store: Store | Callable[[], Store]) -> None:
        """Write back what is left if Redis answers; else say what could not be."""
        with self._lock:
            if not self._journal:
                return
            if self._replay(store):
                self._back()
                return
            if self._journal:
                self._say(
                    f"Redis at {self.location} still does not answer: "
                    f"{_count(len(self._journal), 'working-memory write')} kept in this "
                    "process's memory could not be written back and are lost"
                )

    # -- falling back and coming back ---------------------------------------------------------
    def _fall_back(self, exc: StoreUnreachable) -> None:
        self.active = True
        self._next_try = self._clock() + self._retry_s
        reason = str(exc).split("; ")[0].removeprefix("memwork: ")
        self._say(
            f"{reason}: working memory is kept in this process's memory until Redis answers "
            "again (answers say using_fallback: true); other writes are refused"
        )

    def _replay(self, store: Store | Callable[[], Store]) -> bool:
        """Replay the journal on ``store`` in order; False when it still does not answer
        (what was written back stays written, the rest waits)."""
        while self._journal:
            write = self._journal[0]
            try:
                self._run_op(write.op, reach(store), write.params, now=write.now, actor=write.actor)
            except StoreUnreachable:
                self._next_try = self._clock() + self._retry_s
                return False
            except UserError as exc:
                self._refused.append(f"{write.op.cli} ({exc})")
            else:
                self._written += 1
            self._journal.pop(0)
        return True

    def _back(self) -> None:
        self.active = False
        line = (
            f"Redis at {self.location} answers again: wrote back "
            f"{_count(self._written, 'working-memory write')} made while it did not"
        )
        if self._refused:
            line += f"; {len(self._refused)} refused now: " + "; ".join(self._refused)
        self._say(line)
        self._written, self._refused = 0, []

    def _say(self, line: str) -> None:
        err = self._err or sys.stderr
        try:
            print(f"memwork: {line}", file=err, flush=True)
        except (OSError, ValueError):
            pass  # a closed stderr never fails an agent's working memory

    # -- the copy in process memory -------------------------------------------------------------
    def _store(self) -> Store:
        if self._mirror is None:
            from ..storage.store import Store

            self._mirror = Store.in_memory()
        return self._mirror

    def _seed(self, store: Store | None) -> None:
        """A fresh in-memory store holding the working memory ``store`` last read (its
        sessions, their working memory, the shared scopes), read from this process's
        memory: nothing is copied while Redis answers, so the fallback costs nothing
        until it is needed. Empty when the store could not even be opened."""
        from ..domain.working_memory import scopes as wm_scopes
        from ..storage.store import Store

        if store is None:
            self._mirror = Store.in_memory()
            return

        # ``meta`` holds the store's settings: isolation and wm_default_ttl apply on the
        # fallback as on the store.
        picked = store.last_read(
            lambda name: (
                name in ("sessions", "meta", wm_scopes.TABLE) or name.startswith("working_memory.")
            )
        )
        self._mirror = mirror = Store.in_memory()
        with mirror.transaction():
            for name, docs in picked.items():
                if docs:
                    mirror.put_many(name, {k: dict(v) for k, v in docs.items()})


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"
