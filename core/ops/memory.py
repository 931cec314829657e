"""``Memory``: the Python API for agents that run in the same process as their memory.

A method per operation (:mod:`core.ops.operations`; the methods are generated into
:mod:`core.ops.memory_ops`), each running the same core function as the CLI verb it
mirrors, under the same lock and journal, and returning what that verb prints
for the same store and clock: the text for ``context`` (``format="text"``),
the new id for ``record_episode``, and otherwise the JSON value the verb
prints with ``--json``, as Python data. Bad input raises
:class:`core.base.errors.UserError` (``InvalidInput``, ``NotFound``, ``Conflict``)
whose text is the line the CLI prints for it on exit code 2 (``memwork: item 1:
score: …``), and leaves the store untouched.

One ``Memory`` keeps its store open between calls, so a call pays only for
what it reads; what other processes (the CLI, the workbench, an MCP server)
commit in between is picked up by the next call. Audit entries name the
actor ``api`` (``api:<agent>`` with an agent id).

A ``Memory`` on a Redis store starts even while Redis does not answer: working memory
is then kept in the process (:mod:`core.ops.wm_fallback`) until the store can be
opened, and every other call refuses in one line until then.

    from . import Memory

    memory = Memory()                      # $MEMWORK_DB, else the default store
    prompt = memory.context(task="deploy-api")
    memory.record_episode({"task_id": "deploy-api", "score": 0.9, "summary": "..."})
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, overload

from ..base.clock import now as clock_now
from ..base.errors import MemworkError, worded
from ..storage.store import Store
from .memory_ops import Operations

if TYPE_CHECKING:
    from ..ledger.curator import Curator
    from .hand_over import HandOver
    from .operations import Op
    from .tinydb_view import TinyDBView
    from .wm_fallback import Fallback
    from .wm_session import SessionMemory

#: The doors a Memory serves: the Python API itself, and the MCP server on top of it.
ACTORS = ("api", "mcp", "http")


class Memory(Operations):
    """A memwork store, opened once, with one method per operation.

    ``path`` names the store folder (``None``: ``$MEMWORK_DB``, then the
    default location). ``agent`` is added to the audit actor (``None``:
    ``$MEMWORK_AGENT``). ``clock`` replaces :func:`core.base.clock.now` (tests,
    replays); by default every call reads the clock, which honours
    ``MEMWORK_NOW``. ``actor`` is the kind of writer recorded in the audit log
    (``api``, or ``mcp`` for the MCP server on top of it).

    ``curator_key`` names a curator key file (:mod:`core.ledger.curator`): for a person's
    script, never an agent's. With it this Memory decides proposals, and its writes go
    live while the store's review is on; without it (an agent) its lesson adds, slot
    edits and rules wait for review, and deciding is refused.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        agent: str | None = None,
        clock: Callable[[], datetime] | None = None,
        actor: str = "api",
        curator_key: str | os.PathLike[str] | None = None,
    ) -> None:
        from ..storage.paths import resolve_store_path

        #: The store's folder, or its Redis URL (text: a URL never becomes a path).
        self.path: Path | str = resolve_store_path(os.fspath(path) if path is not None else None)
        #: Working memory in process memory while a Redis store does not answer
        #: (:mod:`core.ops.wm_fallback`); None for a store on disk.
        self.wm_fallback: Fallback | None = None
        self._store: Store | None = None
        self._opening = threading.Lock()
        # Who writes is checked before the store is opened: a refused caller creates
        # nothing (a new store's folder included).
        if actor not in ACTORS:
            from ..base.errors import InvalidInput

            # Agents' doors only: the kind of writer is not a claim to decide anything
            # (core/ledger/curator.py), and "tui" is the workbench's own name in the audit log.
            raise InvalidInput("actor", f"must be one of {', '.join(ACTORS)} (got {actor!r})")
        self.agent = agent if agent is not None else os.environ.get("MEMWORK_AGENT") or None
        if self.agent:
            from ..base.errors import InvalidInput
            from ..privacy import identifier_problem

            problem = identifier_problem(self.agent)
            if problem:
                raise InvalidInput("agent", problem)
        self.actor = f"{actor}:{self.agent}" if self.agent else actor
        self._clock = clock
        self._curator: Curator | None = None
        #: The way to a process that commits this store's writes for others (None: not
        #: looked for yet; False: this store cannot have one). See core/ops/hand_over.py.
        self._hand_over: HandOver | Literal[False] | None = None
        #: The thread readying the recall index (:meth:`warm_recall`), joined on close.
        self._warming: threading.Thread | None = None
        if curator_key is not None:
            from ..ledger.curator import load

            self._curator = load(os.fspath(curator_key))
        self._open_or_fall_back()

    # -- plumbing -----------------------------------------------------------------------
    def _open_or_fall_back(self) -> None:
        """Open the store; a Redis store gets its working-memory fallback, from the start
        when Redis does not answer now (the store is then opened by a later call)."""
        from ..base.errors import StoreUnreachable
        from ..storage.url import REDIS, parse, parse_location

        location = parse_location(self.path)
        if location.scheme == REDIS:
            from . import runner
            from .wm_fallback import Fallback

            shown = parse(location.url).display
            self.wm_fallback = Fallback(shown, run=runner.call, writes=runner.writes)
        try:
            self._store = self._opened()
        except StoreUnreachable as exc:
            if self.wm_fallback is None:
                raise
            self.wm_fallback.start_away(exc)

    def _opened(self) -> Store:
        from ..base import lazyjson

        store = Store(self.path)
        store.fold_mode = "background"  # a long-lived process: no call waits for a fold
        lazyjson.use_fast()  # its ~12 ms import, once, against every commit's JSON work
        return store

    @property
    def store(self) -> Store:
        """The open store. A Redis store that did not answer when this Memory started is
        opened here, on first use (:class:`core.base.errors.StoreUnreachable` while it
        still does not answer)."""
        found = self._store
        if found is None:
            with self._opening:
                found = self._store
                if found is None:
                    found = self._store = self._opened()
        return found

    @property
    def location(self) -> str:
        """Where the store is, as errors and logs name it (a Redis URL without its
        password), known even before the store could be opened."""
        if self._store is not None:
            return self._store.location
        if self.wm_fallback is not None:
            return self.wm_fallback.location
        return str(self.path)

    def call_target(self) -> Store | Callable[[], Store]:
        """What a door hands :func:`core.ops.runner.call`: the store once it is open, else
        the function that opens it, so that working memory can answer from the fallback
        while it cannot be opened."""
        found = self._store
        if found is not None:
            return found
        return lambda: self.store

    @property
    def using_fallback(self) -> bool:
        """Whether working memory is kept in this process's memory now, because the Redis
        store does not answer (every working-memory answer says so too)."""
        return self.wm_fallback is not None and self.wm_fallback.active

    def now(self) -> datetime:
        """The instant a call runs at (the injected clock, else ``core.base.clock.now``)."""
        if self._clock is not None:
            return self._clock()
        # Imported with this module: an import statement run on every call costs ~20 µs
        # once other work has left the caches cold (an agent's every call asks the time).
        return clock_now()

    def warm_recall(self) -> None:
        """Ready the saved recall index in a thread of its own, so the first search costs
        what later ones do (a server, as it starts: :mod:`core.services.recall.warm`).
        Nothing happens for a store not open yet (Redis not answering) or with no saved
        index, nor with ``MEMWORK_WARM_RECALL=0``."""
        if self._store is None or self._warming is not None:
            return
        from ..services.recall import warm

        self._warming = warm.start(self._store)

    def close(self) -> None:
        """Save the recall index if it changed, and drop cached tables (the lock is only
        ever held inside a call)."""
        from ..services.recall.search import flush

        if self._warming is not None:
            self._warming.join()  # its index is the one saved below, not one made after
        if self.wm_fallback is not None:
            self.wm_fallback.close(self.call_target())
        if self._hand_over:
            self._hand_over.close()
        if self._store is None:
            return  # never opened: Redis did not answer while this Memory lived
        try:
            flush(self._store)
        finally:
            # A save that failed (a damaged store) still lets the files go.
            self._store.close()

    def tinydb(self) -> TinyDBView:
        """The live store as a read-only ``tinydb.TinyDB``, to query with TinyDB's ``Query``.

        ``db = memory.tinydb(); db.table("episodes").search(Query().score < 0.5)``.
        ``db.tables()`` lists logical tables, and ``db.table("episodes")`` holds every
        episode (all its shards; ``table("observations")`` every session's observations,
        ``table("rules")`` every scope's rules, archived ones too), each document keyed by
        its own id (``doc_id`` is the record's ``"id"``). Every query reads the store as it
        is when it runs (under the store's lock, what other processes committed and a
        folder store's log included), so writes made after this call are seen.

        Any write through it (``insert``, ``update``, ``upsert``, ``remove``,
        ``truncate``, ``drop_table``...) raises :class:`core.base.errors.ReadOnlyView` and
        writes nothing: write through this Memory's methods or the CLI. While agents are
        isolated it is refused without the curator key, as ``export`` is. A Python-API
        helper, not an operation (no CLI verb or tool); TinyDB is imported only here.
        Details: :mod:`core.ops.tinydb_view`.
        """
        from .tinydb_view import TinyDBView

        return TinyDBView(self.store, actor=self.actor, curator=self._curator)

    def working_memory(
        self, session: str, *, project: str | None = None, title: str = ""
    ) -> SessionMemory:
        """Session ``session``'s working memory with the working-memory library's plain
        answers: ``get(key, default)`` gives the value or the default, ``delete(key)`` True
        or False, ``update_progress(...)`` None when there is no task. With ``project``,
        the session (an id of the caller's own) is started in that project, so the keys
        the project shares are seen. Details: :mod:`core.ops.wm_session`."""
        from .wm_session import SessionMemory

        return SessionMemory(self, session, project=project, title=title)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the context ----------------------------------------------------------------------
    @overload
    def context(
        self,
        task: str | None = None,
        *,
        project: str | None = None,
        budget: int | None = None,
        style: str = "default",
        format: Literal["text"] = "text",  # noqa: A002 - the CLI's flag name
        query: str | None = None,
        max_rules: int | None = None,
        max_recent: int | None = None,
    ) -> str: ...
    @overload
    def context(
        self,
        task: str | None = None,
        *,
        project: str | None = None,
        budget: int | None = None,
        style: str = "default",
        format: Literal["json"],  # noqa: A002 - the CLI's flag name
        query: str | None = None,
        max_rules: int | None = None,
        max_recent: int | None = None,
    ) -> dict[str, Any]: ...
    @overload
    def context(
        self,
        task: str | None = None,
        *,
        project: str | None = None,
        budget: int | None = None,
        style: str = "default",
        format: str,  # noqa: A002 - the CLI's flag name
        query: str | None = None,
        max_rules: int | None = None,
        max_recent: int | None = None,
    ) -> str | dict[str, Any]: ...
    def context(
        self,
        task: str | None = None,
        *,
        project: str | None = None,
        budget: int | None = None,
        style: str = "default",
        format: str = "text",  # noqa: A002 - the CLI's flag name
        query: str | None = None,
        max_rules: int | None = None,
        max_recent: int | None = None,
    ) -> str | dict[str, Any]:
        """The prompt context: text (``format="text"``) or the ``--format json`` document.

        Call at the start of every task. ``project`` ranks that project's lessons as
        matching; ``budget`` is in estimated tokens (characters / 3; default
        ``$MEMWORK_TOKEN_BUDGET``; without either the default style keeps to 2,000 and
        the episodic style is never cut; the JSON document lists what a budget dropped).
        While the store's ``context_log`` is on, what it injected is recorded (a store
        this process cannot write to still gives its context). ``query`` adds a
        "Relevant memories" section: the observations, episodes and lessons that best
        answer it. ``max_rules`` and ``max_recent`` are the episodic library's knobs of
        ``build_memory_context`` (``style="episodic"`` only; 5 and 3 by default).
        """
        params = {"task": task, "project": project, "budget": budget, "style": style}
        params.update(format=format, query=query, max_rules=max_rules, max_recent=max_recent)
        result: str | dict[str, Any] = self._operation("context", params)
        return result

    # -- episodes -------------------------------------------------------------------------
    def record_episodes(self, episodes: list[Any]) -> list[str]:
        """Record episodes all-or-nothing; the new ids in order.

        What the episodic library accepts and memwork's model does not (a missing score,
        a numeric string, a card that is not an object…) is read as the library reads
        it, and each such reading is a :class:`core.base.errors.CoercionWarning` naming the
        item and the field, worded as the CLI's stderr line.
        """
        from ..base.errors import InvalidInput

        if not isinstance(episodes, list):
            raise InvalidInput("episodes", "must be a list of episode objects")
        return self._recorded({"episodes": episodes})

    def record_episode(self, episode: dict[str, Any]) -> str:
        """Record one episode (call after every attempt at a task); its new id (and a
        :class:`core.base.errors.CoercionWarning` per reading, as for :meth:`record_episodes`)."""
        return self._recorded({"episode": episode})[0]

    def _recorded(self, params: dict[str, Any]) -> list[str]:
        import warnings

        from ..base.errors import PREFIX, CoercionWarning

        recorded: dict[str, list[str]] = self._operation("record_episode", params)
        for note in recorded.get("warnings", []):
            # stacklevel 3: the caller of record_episode(s), not this helper.
            warnings.warn(PREFIX + note, CoercionWarning, stacklevel=3)
        return recorded["ids"]

    # -- every operation runs here ----------------------------------------------------------
    def _operation(self, name: str, params: dict[str, Any]) -> Any:
        """Check ``params`` as the JSON doors do and run operation ``name`` as this Memory."""
        invoke, by_name = _runner()
        op = by_name(name)
        try:
            checked = invoke.check(op, "api", params)
            now = self.now()
            if op.writes and self._curator is None and self._hand_over is not False:
                return self.agents_write(op, params, checked, now=now, actor=self.actor)
            return invoke.call(
                op,
                self.call_target(),
                checked,
                now=now,
                actor=self.actor,
                curator=self._curator,
                fallback=self.wm_fallback,
            )
        except MemworkError as exc:
            # The same exception (class, fields, traceback), its text the CLI's line.
            exc.args = (worded(exc),)
            raise

    def agents_write(
        self,
        op: Op,
        given: dict[str, Any],
        checked: dict[str, Any],
        *,
        now: datetime,
        actor: str,
    ) -> Any:
        """An agent's write (``op`` with its parameters as given and as checked), handed
        to the process that serves this store if one takes it (the same call, run
        there: :mod:`core.ops.hand_over`), else run here, where a lock found taken by
        another process sends the next ones to that process again. For a caller
        without the curator key (the doors of agents)."""
        invoke, _ = _runner()
        way = self._hand_over if self._hand_over is not None else self._way_over()
        if way and op.name in way.names:
            done, value = way.call(op.name, given, now, actor)
            if done:
                return value
        target = self.call_target()
        if not way or self.wm_fallback is not None or not isinstance(target, Store):
            return invoke.call(op, target, checked, now=now, actor=actor, fallback=self.wm_fallback)
        busy = target.backend.times_found_busy()
        value = invoke.call(op, target, checked, now=now, actor=actor)
        if target.backend.times_found_busy() != busy:
            way.contended()
        return value

    def _way_over(self) -> HandOver | Literal[False]:
        """This Memory's way to a desk that commits for its store (False: a store on
        Redis, or a system without the desk's sockets)."""
        from . import hand_over

        way: HandOver | Literal[False] = False
        if isinstance(self.path, Path) and self.wm_fallback is None and hand_over.supported():
            way = hand_over.HandOver(self.path)
        self._hand_over = way
        return way


@functools.cache
def _runner() -> tuple[ModuleType, Callable[[str], Op]]:
    """The runner and the operations' lookup, imported on the first call (``import
    memwork`` stays light) and then at hand: an agent may call on every step."""
    from . import runner
    from .operations import by_name

    return runner, by_name
