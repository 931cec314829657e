"""Recall: one natural-language query over every kind of memory, best first.

``memwork search``, the MCP ``search`` tool, ``Memory.search`` and the
context's "Relevant memories" section ask here. Ranking is
:mod:`core.services.recall.engine` (BM25 over stems, stop words out, OR semantics,
field weights, the conversation ideas for observations, a typo fallback only
for words the store never used, proximity as a bonus inside the score);
keeping the index in step with the store, in memory and in the store's cache
folder, is :mod:`core.services.recall.follow`. The workbench's search box is a different
tool for a different moment (a prefix and typo match per keystroke,
:mod:`core.services.recall.search_index`).

Filters: ``kinds``; ``since``/``until`` on the record's own time (when it was
recorded: an episode's or observation's creation, a lesson's, a working-memory
key's last set; both ends included); ``session`` (its observations, working
memory, episodes recorded in it, and the session itself). A hit's ``score`` is
its relevance (higher is better; comparable within one query only).
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from ...base.errors import InvalidInput
from ...base.no_wait import WouldWait, may_wait, taken
from ...base.text import clip
from ...ledger import isolation
from ...privacy import scrub
from ...privacy.seal import sealed
from ...storage import derived_files
from ...storage.store import Store
from . import index_files, short_fill, when
from .extract import KIND_NAMES
from .follow import SAVED_FILE_DAMAGE, IndexFile, Recall
from .query import Filter

if TYPE_CHECKING:
    from .engine import RecallIndex
    from .query import Scored, Visibility
    from .saver import Saver

#: Every kind a search covers, as ``--kind`` names them.
KINDS = KIND_NAMES
_ALIASES = {
    "lessons": "lesson",
    "rules": "rule",
    "cards": "card",
    "mistake_card": "card",
    "mistake_cards": "card",
    "mistake-card": "card",
    "mistake-cards": "card",
    "episodes": "episode",
    "observations": "observation",
    "slots": "slot",
    "working_memory": "wm",
    "working-memory": "wm",
    "sessions": "session",
    "checkpoints": "checkpoint",
}
DEFAULT_LIMIT = 10
MAX_LIMIT = 1000
_SPAN = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_kinds(values: Iterable[str] | None) -> set[str] | None:
    """``--kind`` values as kind names (plurals and ``working_memory`` accepted); None = all."""
    if not values:
        return None
    kinds = set()
    for value in values:
        name = value.strip().lower()
        name = _ALIASES.get(name, name)
        if name not in KINDS:
            raise InvalidInput("kind", f"must be one of {', '.join(KINDS)} (got {value!r})")
        kinds.add(name)
    return kinds


def parse_when(text: str | datetime | None, *, now: datetime, field: str) -> float | None:
    """``--since``/``--until`` as seconds since the epoch: an ISO-8601 instant, a date
    (its first instant for ``since``, its last for ``until``), or a span back from now
    (``30m``, ``12h``, ``7d``, ``2w``)."""
    if text is None:
        return None
    if isinstance(text, datetime):
        return (text if text.tzinfo else text.replace(tzinfo=UTC)).timestamp()
    span = _SPAN.match(text)
    if span:
        try:
            return (now - timedelta(seconds=int(span[1]) * _UNITS[span[2]])).timestamp()
        except OverflowError:
            # Back past the calendar's first day ("--since 999999999d"): from the start.
            return datetime.min.replace(tzinfo=UTC).timestamp()
    value = text.strip()
    rule = "must be an ISO-8601 instant or date, or a span back from now like 12h or 7d"
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        try:
            day = datetime.fromisoformat(value).replace(tzinfo=UTC)
        except ValueError:
            raise InvalidInput(field, f"{rule} (got {text!r})") from None
        if field == "until":
            day += timedelta(days=1, microseconds=-1)
        return day.timestamp()
    from ...base.clock import parse_instant

    try:
        return parse_instant(value, field=field).timestamp()
    except InvalidInput:
        raise InvalidInput(field, f"{rule} (got {text!r})") from None


class Hit(NamedTuple):
    """One search result: what it is, its id, the line that shows it, its score, and
    whether it only filled a search its words left short (it holds none of them)."""

    kind: str
    id: str
    title: str
    score: float
    filled: bool = False

    def to_json(self) -> dict[str, Any]:
        """The record ``memwork search --json`` prints (``filled`` only when true, so a
        word match reads as it always did)."""
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "score": self.score,
            "title": self.title,
        }
        if self.filled:
            out["filled"] = True
        return out


#: Longest query, in characters (every door): a question, not a document. A 10 MB query
#: used to hold an MCP server for half a minute.
QUERY_MAX = 4096


def check_query(query: object) -> str:
    """A query within :data:`QUERY_MAX` characters, else InvalidInput naming ``query``."""
    if not isinstance(query, str):
        raise InvalidInput("query", f"must be text (got {type(query).__name__})")
    if len(query) > QUERY_MAX:
        raise InvalidInput(
            "query", f"must be at most {QUERY_MAX:,} characters (got {len(query):,})"
        )
    return query


def search(
    store: Store,
    query: str,
    *,
    now: datetime,
    kinds: set[str] | None = None,
    limit: int = DEFAULT_LIMIT,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
    session: str | None = None,
    recall: Recall | None = None,
) -> list[Hit]:
    """The best ``limit`` records for ``query``, best first (see the module docstring).

    ``recall`` is the index a long-lived caller keeps between searches (a fresh one
    reads the store's cache folder, or the store).
    """
    return [
        hit
        for hit, _ in scored_hits(
            store,
            query,
            now=now,
            kinds=kinds,
            limit=limit,
            since=since,
            until=until,
            session=session,
            recall=recall,
        )
    ]


def scored_hits(
    store: Store,
    query: str,
    *,
    now: datetime,
    kinds: set[str] | None = None,
    limit: int = DEFAULT_LIMIT,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
    session: str | None = None,
    recall: Recall | None = None,
    leave_out: frozenset[tuple[str, str]] = frozenset(),
    fill: bool = True,
) -> list[tuple[Hit, Scored]]:
    """:func:`search`'s hits, each with what the index knows of it (its session).

    ``leave_out`` names records, as (table, id), that never become hits: they are left
    out inside the ranking as filters are, so the ``limit`` is spent on the others (the
    context leaves out the lessons it lists already). ``fill=False`` returns only what
    the query's words find, never filled (the context lists nothing else)."""
    check_query(query)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput("limit", f"must be a whole number from 1 to {MAX_LIMIT} (got {limit})")
    start = parse_when(since, now=now, field="since")
    end = parse_when(until, now=now, field="until")
    if start is not None and end is not None and start > end:
        raise InvalidInput("since", "must not be later than until")
    if session is not None and not session.strip():
        raise InvalidInput("session", "must not be empty")
    if not query.strip():
        return []
    recall = recall or Recall()
    where = Filter(
        kinds=frozenset(kinds) if kinds else None,
        since=start,
        until=end,
        session=session.strip() if session else None,
        now=now.timestamp(),
        near=when.window(query, now),
    )
    try:
        ranked = _ranked(store, recall, query, limit, where, leave_out, fill)
    except SAVED_FILE_DAMAGE:
        # An index read from a damaged file (a flipped byte the file's own checks could
        # not see): the file is a cache, so it goes, and the index is built from the store.
        if not recall.drop_damaged_file():
            raise
        ranked = _ranked(store, recall, query, limit, where, leave_out, fill)
    found, titles, superseded, clean = ranked
    return [
        (
            Hit(
                s.kind,
                s.ref,
                _title(s, titles, s.ref in superseded, s.slot in clean),
                round(s.score, 4),
                s.filled,
            ),
            s,
        )
        for s in found
    ]


def _ranked(
    store: Store,
    recall: Recall,
    query: str,
    limit: int,
    where: Filter,
    leave_out: frozenset[tuple[str, str]] = frozenset(),
    fill: bool = True,
) -> tuple[list[Scored], dict[str, str], set[str], set[int]]:
    """The ranking, with what the hits' titles need (see :func:`scored_hits`): the
    sessions' titles, the superseded lessons and the slots whose titles the index
    found clean (their seals match)."""
    if recall.index is None:
        # The first catch-up may read many tables: it takes the lock a few tables at a
        # time, so writers never wait for a whole build.
        first_catch_up(store, recall)
    # One read of the store for the catch-up, the setting, the ranking and the titles:
    # without the lock while nothing was committed since the last (most searches).
    return store.read(lambda: _ranked_in(store, recall, query, limit, where, leave_out, fill))


def _ranked_in(
    store: Store,
    recall: Recall,
    query: str,
    limit: int,
    where: Filter,
    leave_out: frozenset[tuple[str, str]],
    fill: bool,
) -> tuple[list[Scored], dict[str, str], set[str], set[int]]:
    """:func:`_ranked` inside its read of the store (which may run it twice: see
    :meth:`Store.read`)."""
    index = recall.refresh(store)
    view = isolation.viewer(store)
    if view is not None:
        # Another agent's records never become candidates: the ranking's own depth
        # is spent on what this caller may see (one index for every agent).
        where = where._replace(visible=_visible_to(store, view))
    if leave_out:
        tables: dict[str, list[str]] = {}
        for table, ref in leave_out:
            tables.setdefault(table, []).append(ref)
        without = frozenset().union(*(index.slots_in(t, r) for t, r in tables.items()))
        where = where._replace(without=without)
    found = short_fill.rank(store, recall, index, query, limit, where, fill)
    if not found:
        return [], {}, set(), set()
    titles = _session_titles(index, {s.session for s in found if s.kind == "observation"})
    superseded = _superseded(store) if any(s.kind == "lesson" for s in found) else set()
    seals = index.seals
    clean = {s.slot for s in found if sealed(s.title, seals[s.slot])}
    return found, titles, superseded, clean


def first_catch_up(store: Store, recall: Recall) -> None:
    """The first catch-up of ``recall``: the saved index read, or the whole index built.

    In a long-lived process (one whose index is saved in the background) with no
    saved index to read, a big store's index is built by a child process
    (:mod:`core.services.recall.build_apart`); otherwise the catch-up runs in a
    thread of its own, which this one waits for. A build makes and lets go of hundreds
    of megabytes of objects at 100k records; made by another thread, they come from
    that thread's own heap, which the allocator can hand back once the index gives way
    to its saved file. Made here, they would leave this thread's heap sparse for the
    rest of the process, and every later allocation would touch one more of its pages
    (~100 MB more resident after 100 searches at 100k long notes). A caller that holds
    the store's lock builds here (the thread would wait for that lock).
    """
    if not may_wait():  # a build or a read of the saved index: seconds at 100k
        raise WouldWait
    file = IndexFile.of(store)
    if file is not None and not file.exists() and not store.cache.lock_held():
        # A child saving the file a write took away, or a build left (save_apart.py):
        # waiting for it is quicker than building the index again here.
        from .save_apart import wait_for_saver

        wait_for_saver(file)
    if recall.wake is None or store.cache.lock_held():
        recall.refresh(store)
        return
    from . import build_apart

    if not recall.has_saved_index(store) and build_apart.worth_it(store):
        built = build_apart.build(store)
        if built is not None:
            recall.start_from(store, built)
            recall.refresh(store)  # what was committed while the child built
            return
    failed: list[BaseException] = []

    def build() -> None:
        try:
            recall.refresh(store)
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller
            failed.append(exc)

    worker = threading.Thread(target=build, name="memwork-recall-build", daemon=True)
    worker.start()
    try:
        worker.join()
    except BaseException:
        # Interrupted (Ctrl-C): the build changes the index the caller's lock guards, so
        # it must end before the caller lets go of that lock.
        worker.join()
        raise
    if failed:
        raise failed[0]


def _visible_to(store: Store, view: str) -> Visibility:
    """Whether ``view`` sees a record (call inside a read): a session's records are its
    agent's, an episode the agent's that recorded it, anything else is global."""
    from .query import Visibility

    sessions = store.docs("sessions")  # read as asked: a query meets a few sessions

    def session_seen(session: str | None) -> bool:
        doc = sessions.get(session or "")
        return isolation.sees(view, doc.get("agent_id") if doc is not None else None)

    def episode_seen(kind: str, ref: str, session: str | None, table: str) -> bool:
        doc = store.docs(table).get(ref) or {}
        return isolation.sees(view, doc.get("agent_id"))

    return Visibility(
        frozenset({"observation", "wm", "session"}),
        session_seen,
        frozenset({"episode"}),
        episode_seen,
    )


def _superseded(store: Store) -> set[str]:
    """The lessons another supersedes (a ``supersedes`` link points at each; call inside
    a read). Links live beside the records, so the index never holds this."""
    from ...ledger.links import lesson_relations

    superseded_by, _ = lesson_relations(store)
    return set(superseded_by)


#: How much of its session's title an observation's hit shows.
SESSION_WIDTH = 28


def _session_titles(index: RecallIndex, wanted: set[str | None]) -> dict[str, str]:
    """How the sessions the hits name show in the hits' titles: their current titles
    from the index's own records of those sessions (caught up in the same read as the
    ranking), scrubbed unless sealed, then cut to 28 characters (scrubbed first: a cut
    can leave a secret too short for its rule).

    Not from the sessions table: a one-call search read and decoded the whole table for
    ten titles, ~2.7 MB of a CLI search's peak memory at 1,000 sessions. A session the
    index leaves out (a damaged record) is named by its id."""
    if not wanted or "sessions" not in index.table_codes:
        return {}
    # A few sessions hold most hits: each is worked out once while the records stay as
    # they are (what was shown is shown again: a title changed on disk meanwhile never is).
    known = index.kept("session titles")
    shown: dict[str, str] = {}
    slots: dict[str, int] | None = None
    titles, seals = index.titles, index.seals
    for sid in wanted:
        if not sid:
            continue
        found = known.get(sid)
        if found is None:
            if slots is None:
                slots = index.slots_of("sessions")
            slot = slots.get(sid)
            if slot is None:
                continue
            title = titles[slot]
            found = known[sid] = clip(_as_shown(title, sealed(title, seals[slot])), SESSION_WIDTH)
        shown[sid] = found
    return shown


def _as_shown(title: str, clean: bool) -> str:
    """A title part as a hit shows it: as it is when the index found it clean (its seal
    matches), else scrubbed of secrets (hits show personal details as written)."""
    return title if clean else scrub(title, personal=False)


def _title(
    found: Scored, sessions: dict[str, str], superseded: bool = False, clean: bool = False
) -> str:
    """How a hit shows: its title, scrubbed unless ``clean`` (the index found it clean
    and its seal says so); an observation's with its session's title inside (as
    :func:`_session_titles` shows it); a superseded lesson's marked as such.

    Titles come from the store or its cache folder's index: a secret planted in either
    (a file edited by hand) never reaches the output. The parts are scrubbed one by one,
    as they were written (a session title and a note's text are separate texts)."""
    title = _as_shown(found.title, clean)
    if superseded:  # kept as history: a hit says the agent no longer gets it
        return f"(superseded) {title}"
    if found.kind != "observation" or found.session is None:
        return title
    # The session's current title names the note's session (it is not part of the index).
    kind, _, content = title.partition(": ")
    session = sessions.get(found.session)
    if session is None:
        session = clip(scrub(found.session, personal=False), SESSION_WIDTH)
    return f"{kind} · {session}: {content}"


# One recall index per open store: a long-lived caller (Memory, an MCP or HTTP server)
# keeps it between searches (it follows every commit), and concurrent searches of one
# store take turns. A long-lived caller's index is saved by a background thread (a
# ``Saver``); the CLI's, when its call ends (:func:`settle`).
_KEPT: weakref.WeakKeyDictionary[Store, tuple[threading.Lock, Recall]] = weakref.WeakKeyDictionary()
_SAVERS: weakref.WeakKeyDictionary[Store, Saver] = weakref.WeakKeyDictionary()
_KEPT_LOCK = threading.Lock()
#: Seconds a long-lived process lets its saved index lag behind its own: rewriting the
#: whole file after every write would cost more than it spares the next process.
SAVE_AFTER = 30.0


def kept_recall(store: Store) -> tuple[threading.Lock, Recall]:
    """The recall index kept for ``store`` in this process, and the lock that guards it."""
    with _KEPT_LOCK:
        kept = _KEPT.get(store)
        if kept is None:
            if store.one_call:
                kept = _KEPT[store] = (threading.Lock(), Recall(one_call=True))
            else:
                from .saver import Saver

                recall = Recall(save_after=SAVE_AFTER)
                kept = _KEPT[store] = (threading.Lock(), recall)
                saver = _SAVERS[store] = Saver(store, kept[0], recall)
                recall.wake = saver.wake
                _stop_at_exit()
    return kept


def _file_removed(backend: object) -> None:
    """A commit of ``backend`` in this process removed its store's index file: the
    index kept for that store, if any, is saved again soon (:meth:`Recall.file_removed`)."""
    for store, (_, recall) in list(_KEPT.items()):
        if store.backend is backend:
            recall.file_removed()


derived_files.when_removed(index_files.NAME, _file_removed)


def saver_of(store: Store) -> Saver | None:
    """The background saver of ``store``'s kept recall index (None: a one-call store, or
    no search yet)."""
    return _SAVERS.get(store)


def flush(store: Store) -> None:
    """Save the kept recall index of ``store`` now if it changed (``Memory.close``): the
    background saver is stopped first."""
    saver = _SAVERS.pop(store, None)
    if saver is not None:
        saver.stop()
    kept = _KEPT.get(store)
    if kept is not None:
        try:
            with kept[0]:
                kept[1].wake = None
                # Caught up first (inside): a commit since the last search may have
                # removed text, and the index file with it, which a stale index must not
                # write back.
                kept[1].flush(store)
        finally:
            release(store)


def release(store: Store) -> None:
    """Let go of the recall index kept for ``store``, its saved file's mapping with it
    (the store is closing: a process that opens many stores in turn keeps no file of
    each open)."""
    with _KEPT_LOCK:
        _KEPT.pop(store, None)
        _SAVERS.pop(store, None)


def settle(store: Store, *, apart: bool = False) -> None:
    """Save the kept recall index of ``store`` if the process owes it to the next one
    (built here or found far behind): the end of a CLI call, after its answer.

    ``apart`` (the CLI's own process, its answer written): the save is left to a
    child process the call does not wait for (see :mod:`core.services.recall.save_apart`),
    where the system allows; else it is made here."""
    kept = _KEPT.get(store)
    if kept is None:
        return
    with kept[0]:
        recall = kept[1]
        if apart and recall.owes_save():
            from .save_apart import save_apart

            if save_apart(store, recall):
                return
        recall.settle(store)


_AT_EXIT: list[bool] = []


def _stop_at_exit() -> None:
    """When the interpreter exits with a store still open (a script that never closed
    its ``Memory``): stop its background saver between two slices, then save what
    is due, as a CLI call does after its answer (an index built here is not left
    for the next process to build again)."""
    if not _AT_EXIT:
        import atexit

        _AT_EXIT.append(True)
        atexit.register(_at_exit)


def _at_exit() -> None:
    for store, saver in list(_SAVERS.items()):
        saver.stop()
        try:
            settle(store)
        except Exception:  # noqa: BLE001, S112 - only a cache: the next process catches up
            continue


def search_op(
    store: Store,
    query: str,
    *,
    now: datetime,
    kinds: Iterable[str] | None = None,
    limit: int = DEFAULT_LIMIT,
    since: str | None = None,
    until: str | None = None,
    session: str | None = None,
) -> list[dict[str, Any]]:
    """The ``search`` operation: :func:`search` with the store's kept index, as JSON."""
    wanted = parse_kinds(list(kinds) if kinds is not None else None)
    lock, recall = kept_recall(store)
    with taken(lock):
        hits = search(
            store,
            query,
            now=now,
            kinds=wanted,
            limit=limit,
            since=since,
            until=until,
            session=session,
            recall=recall,
        )
    return [hit.to_json() for hit in hits]
