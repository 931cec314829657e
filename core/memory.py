"""``Memory``: the Python API for agents that run in the same process as their memory.

Every method calls the same core function as the CLI verb it mirrors, under
the same lock and journal, and returns what that verb prints for the same
store and clock: the text for ``context`` (``format="text"``), the new id for
``record_episode``, and otherwise the JSON value the verb prints with
``--json``, as Python data. Bad input raises :class:`core.errors.UserError`
(``InvalidInput``, ``NotFound``, ``Conflict``) with the CLI's exit-2 message,
and leaves the store untouched.

One ``Memory`` keeps its store open between calls, so a call pays only for
what it reads; what other processes (the CLI, the workbench, an MCP server)
commit in between is picked up by the next call. Audit entries name the
actor ``api`` (``api:<agent>`` with an agent id).

    from . import Memory

    memory = Memory()                      # $MEMWORK_DB, else the default store
    prompt = memory.context(task="deploy-api")
    memory.record_episode({"task_id": "deploy-api", "score": 0.9, "summary": "..."})
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from .storage.store import Store

if TYPE_CHECKING:
    from .recall.follow import Recall
    from .working_memory import KeyView


class Memory:
    """A memwork store, opened once, with one method per agent-facing verb.

    ``path`` names the store folder (``None``: ``$MEMWORK_DB``, then the
    default location). ``agent`` is added to the audit actor (``None``:
    ``$MEMWORK_AGENT``). ``clock`` replaces :func:`core.clock.now` (tests,
    replays); by default every call reads the clock, which honours
    ``MEMWORK_NOW``. ``actor`` is the kind of writer recorded in the audit log.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        agent: str | None = None,
        clock: Callable[[], datetime] | None = None,
        actor: str = "api",
    ) -> None:
        from .paths import resolve_store_path

        #: The store's folder, or its Redis URL (text: a URL never becomes a path).
        self.path: Path | str = resolve_store_path(os.fspath(path) if path is not None else None)
        self.store = Store(self.path)
        self.agent = agent if agent is not None else os.environ.get("MEMWORK_AGENT") or None
        self.actor = f"{actor}:{self.agent}" if self.agent else actor
        self._clock = clock
        self._search_lock = threading.Lock()
        self._recall: Recall | None = None

    # -- plumbing -----------------------------------------------------------------------
    def now(self) -> datetime:
        """The instant a call runs at (the injected clock, else ``core.clock.now``)."""
        if self._clock is not None:
            return self._clock()
        from .clock import now

        return now()

    def close(self) -> None:
        """Save the recall index if it changed, and drop cached tables (the lock is only
        ever held inside a call)."""
        if self._recall is not None:
            with self._search_lock:
                self._recall.flush()
        self.store.close()

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
        budget: int = 2000,
        style: str = "default",
        format: Literal["text"] = "text",  # noqa: A002 - the CLI's flag name
        query: str | None = None,
    ) -> str: ...
    @overload
    def context(
        self,
        task: str | None = None,
        *,
        project: str | None = None,
        budget: int = 2000,
        style: str = "default",
        format: Literal["json"],  # noqa: A002 - the CLI's flag name
        query: str | None = None,
    ) -> dict[str, Any]: ...
    @overload
    def context(
        self,
        task: str | None = None,
        *,
        project: str | None = None,
        budget: int = 2000,
        style: str = "default",
        format: str,  # noqa: A002 - the CLI's flag name
        query: str | None = None,
    ) -> str | dict[str, Any]: ...
    def context(
        self,
        task: str | None = None,
        *,
        project: str | None = None,
        budget: int = 2000,
        style: str = "default",
        format: str = "text",  # noqa: A002 - the CLI's flag name
        query: str | None = None,
    ) -> str | dict[str, Any]:
        """The prompt context: text (``format="text"``) or the ``--format json`` document.

        ``query`` adds a "Relevant memories" section: the observations, episodes and
        lessons that best answer it (without one, the context is as before)."""
        from .context.build import build_context
        from .errors import InvalidInput

        if format not in ("text", "json"):
            raise InvalidInput("format", f"must be 'text' or 'json' (got {format!r})")
        now = self.now()
        with self._search_lock:  # the recall index is shared between calls
            result = build_context(
                self.store,
                now=now,
                task_id=task,
                budget_tokens=budget,
                style=style,
                project=project,
                query=query,
                recall=self._recall_index() if query else None,
            )
        if result.log_wanted:  # the store asks to record what reached the agent
            from .context.log import record_injections
            from .errors import MemworkError

            try:
                record_injections(self.store, result, now=now, actor=self.actor)
            except MemworkError:
                pass  # the context itself must reach the agent (a read-only store)
        return result.to_json() if format == "json" else result.text

    # -- episodes -------------------------------------------------------------------------
    def record_episodes(self, episodes: list[Any]) -> list[str]:
        """Record episodes all-or-nothing; the new ids in order."""
        from . import episodes as core_episodes
        from .errors import InvalidInput

        if not isinstance(episodes, list):
            raise InvalidInput("episodes", "must be a list of episode objects")
        recorded = core_episodes.record_episodes(
            self.store, episodes, now=self.now(), actor=self.actor
        )
        return [doc["id"] for doc in recorded]

    def record_episode(self, episode: dict[str, Any]) -> str:
        """Record one episode; its new id."""
        return self.record_episodes([episode])[0]

    # -- sessions -------------------------------------------------------------------------
    def start_session(self, agent: str = "", project: str = "", title: str = "") -> dict[str, Any]:
        """Start a session (the agent defaults to this Memory's agent id)."""
        from . import sessions

        return sessions.start_session(
            self.store,
            agent_id=agent or self.agent or "",
            project=project,
            title=title,
            now=self.now(),
            actor=self.actor,
        )

    def end_session(self, session: str, summary: str = "") -> dict[str, Any]:
        """End a session."""
        from . import sessions

        return sessions.end_session(
            self.store, session, summary=summary, now=self.now(), actor=self.actor
        )

    def observe(
        self, session: str, text: str, *, kind: str = "note", tags: Iterable[str] = ()
    ) -> dict[str, Any]:
        """Add an observation to a session."""
        from . import sessions

        return sessions.observe(
            self.store,
            session,
            text,
            kind=kind,
            tags=list(tags),
            now=self.now(),
            actor=self.actor,
        )

    # -- lessons --------------------------------------------------------------------------
    def add_lesson(
        self,
        text: str,
        *,
        scope: str = "global",
        confidence: float | None = None,
        tags: Iterable[str] = (),
        on_duplicate: str = "reinforce",
    ) -> dict[str, Any]:
        """Add a lesson (re-adding or a near-duplicate reinforces by default; ``action``
        says what happened, ``contradicts`` names similar lessons that say the opposite).

        While the store's review queue is on, the lesson becomes a proposal instead:
        the proposal is returned, with ``"proposed": True`` (see :mod:`core.review`).
        """
        from . import lessons, review

        now = self.now()
        submitted = review.submit_lesson(
            self.store,
            text,
            now=now,
            actor=self.actor,
            scope=scope,
            confidence=confidence,
            tags=list(tags),
            on_duplicate=on_duplicate,
        )
        if submitted.proposal is not None:
            return self._proposed(submitted.proposal, now)
        return lessons.write_record(submitted.result, now)

    def _proposed(self, proposal: dict[str, Any], now: datetime) -> dict[str, Any]:
        """What a write that became a proposal returns (as ``--json`` prints it)."""
        from . import review

        return {**review.get_proposal(self.store, proposal["id"], now), "proposed": True}

    def _slot_write(self, op: str, label: str, **args: Any) -> dict[str, Any]:
        from . import review

        now = self.now()
        submitted = review.submit_slot(self.store, op, label, now=now, actor=self.actor, **args)
        if submitted.proposal is not None:
            return self._proposed(submitted.proposal, now)
        written: dict[str, Any] = submitted.result  # the slot's view, as the CLI prints it
        return written

    def reinforce_lesson(self, lesson: str) -> dict[str, Any]:
        """Reinforce a lesson (id or unique prefix)."""
        from . import lessons

        return lessons.reinforce(self.store, lesson, now=self.now(), actor=self.actor)

    def weaken_lesson(self, lesson: str) -> dict[str, Any]:
        """Weaken a lesson (id or unique prefix)."""
        from . import lessons

        return lessons.weaken(self.store, lesson, now=self.now(), actor=self.actor)

    def list_lessons(self, *, all: bool = False) -> list[dict[str, Any]]:  # noqa: A002
        """Lessons, best first; forgotten, deleted and superseded ones only with ``all``."""
        from . import lessons

        return lessons.list_lessons(self.store, self.now(), include_all=all)

    def get_lesson(self, lesson: str) -> dict[str, Any]:
        """One lesson with its computed fields."""
        from . import lessons

        return lessons.get_lesson(self.store, lesson, self.now())

    # -- recall ---------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        kinds: Iterable[str] | None = None,
        limit: int = 10,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        session: str | None = None,
    ) -> list[dict[str, Any]]:
        """Every kind of memory, best first: ``{"kind", "id", "title", "score"}`` per hit.

        ``since``/``until`` bound the record's own time (an ISO-8601 instant or date, a
        span back from now like ``"7d"``, or a datetime); ``session`` keeps what belongs
        to one session. The recall index is kept in memory between calls and follows
        every commit, this process's or another's."""
        from . import search

        with self._search_lock:  # the recall index is shared between calls
            hits = search.search(
                self.store,
                query,
                now=self.now(),
                kinds=search.parse_kinds(list(kinds) if kinds is not None else None),
                limit=limit,
                since=since,
                until=until,
                session=session,
                recall=self._recall_index(),
            )
        return [hit.to_json() for hit in hits]

    def _recall_index(self) -> Recall:
        if self._recall is None:
            from .recall.follow import Recall

            # A long-lived process saves its index to the cache folder at most every
            # 30 s (and on close): saving after every write would cost each query.
            self._recall = Recall(save_after=30.0)
        return self._recall

    def history(
        self,
        *,
        table: str | None = None,
        record: str | None = None,
        actor: str | None = None,
        limit: int = 50,
    ) -> list[dict[str, Any]]:
        """Audit entries, newest first."""
        from . import history
        from .errors import InvalidInput

        if limit < 1:
            raise InvalidInput("limit", f"must be >= 1 (got {limit})")
        return history.query(self.store, table=table, record=record, actor=actor, limit=limit)

    def stats(self) -> dict[str, Any]:
        """Counts per table, per-task scores, the top mistake cards."""
        from .stats import store_stats

        return store_stats(self.store)

    # -- slots ----------------------------------------------------------------------------
    def list_slots(self) -> list[dict[str, Any]]:
        """Every slot in context order."""
        from . import slots

        return slots.list_slots(self.store)

    def get_slot(self, label: str) -> dict[str, Any]:
        """One slot."""
        from . import slots

        return slots.get_slot(self.store, label)

    def set_slot(
        self,
        label: str,
        text: str,
        *,
        limit: int | None = None,
        description: str | None = None,
    ) -> dict[str, Any]:
        """Create or overwrite a slot (a proposal while review is on, as for lessons)."""
        return self._slot_write("set", label, content=text, limit=limit, description=description)

    def append_slot(self, label: str, text: str) -> dict[str, Any]:
        """Append a line to a slot (a proposal while review is on)."""
        return self._slot_write("append", label, text=text)

    def replace_in_slot(self, label: str, old: str, new: str) -> dict[str, Any]:
        """Replace ``old`` with ``new`` in a slot (``replaced``: how many times; a proposal
        while review is on)."""
        done = self._slot_write("replace", label, old=old, new=new)
        if isinstance(done, dict):
            return done
        slot, count = done
        return {**slot, "replaced": count}

    def delete_slot(self, label: str) -> dict[str, Any]:
        """Delete a slot."""
        from . import slots

        return slots.delete_slot(self.store, label, now=self.now(), actor=self.actor)

    # -- working memory -------------------------------------------------------------------
    def wm_set(self, session: str, key: str, value: Any, *, ttl: float | None = None) -> KeyView:
        """Set a working-memory key (``ttl`` in seconds)."""
        from . import working_memory as wm

        return wm.set_key(
            self.store, session, key, value, ttl=ttl, now=self.now(), actor=self.actor
        )

    def wm_get(self, session: str, key: str) -> KeyView:
        """A live key's entry."""
        from . import working_memory as wm

        return wm.get_key(self.store, session, key, now=self.now())

    def wm_delete(self, session: str, key: str) -> KeyView:
        """Delete a key."""
        from . import working_memory as wm

        return wm.delete_key(self.store, session, key, now=self.now(), actor=self.actor)

    def wm_list(self, session: str) -> list[KeyView]:
        """Live keys, sorted."""
        from . import working_memory as wm

        return wm.list_keys(self.store, session, now=self.now())

    def wm_task(
        self,
        session: str,
        *,
        task_id: str | None = None,
        description: str | None = None,
        step: int | None = None,
        total: int | None = None,
        progress: float | None = None,
        status: str | None = None,
    ) -> dict[str, Any] | None:
        """Update the task state (only the fields given), or read it when none is given."""
        from . import working_memory as wm

        changes = (task_id, description, status, step, total, progress)
        if all(v is None for v in changes):
            return wm.get_task(self.store, session)
        return wm.update_task(
            self.store,
            session,
            now=self.now(),
            actor=self.actor,
            task_id=task_id,
            description=description,
            status=status,
            current_step=step,
            total_steps=total,
            progress_percent=progress,
        )

    def scratch_add(self, session: str, text: str) -> dict[str, Any]:
        """Append a scratchpad note."""
        from . import working_memory as wm

        return wm.scratch_add(self.store, session, text, now=self.now(), actor=self.actor)

    def scratch_list(self, session: str) -> list[dict[str, Any]]:
        """Scratchpad notes, oldest first."""
        from . import working_memory as wm

        return wm.scratch_list(self.store, session)
