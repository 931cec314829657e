"""Recording episodes: validation, scrubbing, indexes, cards, rules, aggregates.

One call records one or many episodes all-or-nothing: every item is
validated before the store is touched, and the writes land in one
transaction. Nothing here scans history; it reads and updates aggregates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, NamedTuple, ParamSpec, TypeVar, overload

from ..base import ids, lazyjson
from ..base.clock import iso, parse_instant
from ..base.errors import InvalidInput, NotFound
from ..base.numbers import is_whole_number
from ..base.spool import Spool
from ..ledger import audit, link_batch
from ..models.plain import outcome_for
from ..privacy import scrub, scrub_value
from ..storage import shards
from ..storage.store import Store
from . import aggregates, cards, consolidation, distinct, episodic_cards, failures, readable, rules
from .episode_input import parse_lenient

BASE = "episodes"
#: Each kind of distinct text and the episode field that lists it.
_DISTINCT_LISTS: tuple[tuple[distinct.Kind, str], ...] = (
    ("mistake", "mistakes"),
    ("success", "successes"),
)
T = TypeVar("T")
P = ParamSpec("P")


class Recorded(Sequence[dict[str, Any]]):
    """The episodes one call recorded, in order, kept compactly (on disk past a size:
    :class:`core.base.spool.Spool`) and read back one at a time."""

    def __init__(self, spool: Spool) -> None:
        self._spool = spool

    def __len__(self) -> int:
        return len(self._spool)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for raw in self._spool:
            yield lazyjson.reads(raw)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        docs = list(self)  # a caller that indexes holds few of them
        return docs[index]


def parse_items(items: Iterable[Any]) -> list[dict[str, Any]]:
    """Validate every item first; the error names the item number (from 1) and field.

    Each item becomes what :class:`core.models.episode.EpisodeInput` makes of it
    (its ``model_dump()``), read without pydantic when that is certain to agree
    (:mod:`core.domain.episode_input`), and as the episodic library reads it when the model
    refuses what the library accepts.
    """
    return list(_unspooled(spool_items(items)))


def spool_items(items: Iterable[Any], warnings: dict[int, list[str]] | None = None) -> Spool:
    """Validate every item (the error names the item number, from 1, and the field) and
    keep each one compactly, as JSON bytes.

    What the model refuses but the episodic library accepts is read as the library
    reads it (:func:`core.domain.episode_input.coerce`); ``warnings`` receives, for each item
    so read (by its number, from 1), a note per reading. A bulk input streams through
    here without the lock held; what is kept is about the size of the input (a million
    episodes: ~200 MB), not of its parsed objects (~10x), and past a few megabytes it is
    kept in a temporary file, not in memory.
    """
    spool = Spool()
    for number, item in enumerate(items, start=1):
        episode, notes = parse_lenient(item, number=number)
        if warnings is not None and notes:
            warnings[number] = notes
        if episode["recorded_at"] is not None:
            parse_instant(episode["recorded_at"], field=f"item {number}: recorded_at")
        spool.append(lazyjson.dumps(episode))
    if not len(spool):
        raise InvalidInput("input", "no episodes given")
    return spool


def _unspooled(spool: Spool) -> Iterator[dict[str, Any]]:
    for raw in spool:
        yield lazyjson.reads(raw)


def _named(
    number: int, where: str | None, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs
) -> T:
    """Run one step of recording item ``number``; a refusal names the item and the field.

    Everything is validated before the first write, so this is a safety net: if a
    derived record is ever refused, the message still says which item and which
    of its fields (``where``) it came from, and the transaction writes nothing.
    """
    try:
        return fn(*args, **kwargs)
    except InvalidInput as exc:
        if exc.item is not None:
            raise
        field = f"{where} ({exc.field})" if where else exc.field
        raise InvalidInput(field, exc.rule, item=number) from None


def _prepare(item: dict[str, Any], index: int, now: datetime, synthesise: bool) -> dict[str, Any]:
    stamp = iso(parse_instant(item["recorded_at"])) if item["recorded_at"] else iso(now)
    doc: dict[str, Any] = {
        "id": ids.new_id("ep"),
        "index": index,
        "task_id": item["task_id"],
        "score": item["score"],
        "steps": item["steps"],
        "summary": scrub(item["summary"]).strip(),
        "mistakes": [m for m in (scrub(x).strip() for x in item["mistakes"]) if m],
        "successes": [s for s in (scrub(x).strip() for x in item["successes"]) if s],
        "mistake_cards": [],
        "errors": [{k: scrub(v).strip() for k, v in e.items()} for e in item["errors"]],
        # A crash (a non-zero exit code) is a failure whatever score it reported.
        "outcome": item["outcome"]
        or ("failure" if failures.crashed(item["metadata"]) else outcome_for(item["score"])),
        "session_id": item["session_id"],
        "worker_id": item["worker_id"],
        "metadata": scrub_value(item["metadata"]),
        "card_ids": [],
        "created_at": stamp,
        "updated_at": stamp,
    }
    reported = [cards.normalise_input(c, task_id=item["task_id"]) for c in item["mistake_cards"]]
    # The episode keeps the cards as reported (cut); the cut characters are the card's.
    doc["mistake_cards"] = [{k: v for k, v in c.items() if k != "cut_chars"} for c in reported]
    doc["_cards"] = reported
    if doc["outcome"] == "failure" and not doc["errors"] and synthesise:
        doc["errors"] = [failures.synthesise_error(doc)]
    return doc


def record_episodes(
    store: Store,
    items: Iterable[Any],
    *,
    now: datetime,
    actor: str,
    on_consolidate: Callable[[consolidation.Report], None] | None = None,
) -> Recorded:
    """Record episodes in order; return the stored documents (read back one at a time:
    a bulk record keeps them on disk, not in memory), each with ``warnings`` (not
    stored): what was read as the episodic library reads it, naming item and field.

    A consolidation falls due after every 20th episode. The heuristic runs right
    there, inside the transaction; an external consolidator (which may take
    seconds) runs once after the commit. ``on_consolidate`` receives each report
    (e.g. to show a fallback).
    """
    warned: dict[int, list[str]] = {}
    agent = actor.partition(":")[2]
    spool = spool_items(items, warned)
    synthesise = failures.enabled()
    external = bool(consolidation.external_command())
    reports: list[consolidation.Report] = []
    recorded = Spool()
    # Rules' and cards' episode references are modelled in memory and written once, at
    # the end (core/ledger/link_batch.py): a bulk recording would otherwise make, write and
    # drop links that do not survive it.
    with store.transaction(), link_batch.deferred(store):
        glob = aggregates.read_global(store)
        tasks: dict[str, dict[str, Any]] = {}
        seq = audit.last_seq(store)
        window: list[dict[str, Any]] | None = None
        for number, item in enumerate(_unspooled(spool), start=1):
            index = int(glob["total_episodes"]) + 1
            doc = _prepare(item, index, now, synthesise)
            if agent:
                doc["agent_id"] = agent  # whose episode it is (core/ledger/isolation.py)
            reported = doc.pop("_cards")
            if reported and window is None:
                # The episodic library's own top 30 (for --style episodic), read before
                # this episode's cards reach the table.
                window = episodic_cards.current(store)
            doc["card_ids"] = _named(
                number,
                "mistake_cards",
                cards.apply_cards,
                store,
                reported,
                index=index,
                now=now,
                episode_id=doc["id"],
            )
            if window is not None:
                for card, card_id in zip(reported, doc["card_ids"], strict=True):
                    episodic_cards.add(window, card, index, card_id)
            for kind, plural in _DISTINCT_LISTS:
                fresh = distinct.note_texts(
                    store, kind, doc[plural], episode_index=index, recorded_at=doc["created_at"]
                )
                if fresh:
                    recent = f"recent_{plural}"
                    origins = aggregates.recent_origins(glob, plural)
                    glob[recent] = [*glob[recent], *fresh][-aggregates.DISTINCT_RECENT :]
                    ref = {"id": doc["id"], "index": index}
                    glob[f"{recent}_episodes"] = [*origins, *[ref] * len(fresh)][
                        -aggregates.DISTINCT_RECENT :
                    ]
                    glob[f"distinct_{plural}"] = int(glob[f"distinct_{plural}"]) + len(fresh)
            source = "successes" if doc["score"] >= rules.WORKS_AT else "mistakes"
            _named(number, source, rules.derive_from_episode, store, doc, now)
            task = (
                tasks.get(doc["task_id"])
                or aggregates.read_task(store, doc["task_id"])
                or aggregates.empty_task(doc["task_id"])
            )
            aggregates.add_episode(glob, task, doc, now)
            tasks[doc["task_id"]] = task
            store.put(shards.shard_of(BASE, index), doc["id"], doc)
            seq += 1
            audit.record(
                store,
                actor=actor,
                action="record",
                table=BASE,
                record_id=doc["id"],
                summary=f"episode #{index} {doc['task_id']} score {doc['score']:.2f} "
                f"({doc['outcome']}): {doc['summary'][:80]}",
                now=now,
                seq=seq,
            )
            recorded.append(lazyjson.dumps({**doc, "warnings": warned.get(number, [])}))
            if not external and consolidation.due(glob):
                reports.append(consolidation.consolidate_within(store, glob, now=now, actor=actor))
                seq = audit.last_seq(store)  # the consolidation wrote its own entry
        aggregates.write_global(store, glob)
        aggregates.write_tasks(store, tasks)
        if window is not None:
            episodic_cards.write(store, window)
    if external and consolidation.due(glob):
        reports.append(consolidation.consolidate(store, now=now, actor=actor))
    spool.close()
    if on_consolidate is not None:
        for report in reports:
            on_consolidate(report)
    return Recorded(recorded)


def record_op(
    store: Store,
    *,
    episode: dict[str, Any] | None = None,
    episodes: list[Any] | None = None,
    now: datetime,
    actor: str,
) -> dict[str, list[str]]:
    """The ``record_episode`` operation: one ``episode``, or a batch of ``episodes``
    all-or-nothing; ``{"ids": [...], "warnings": [...]}``: the ids in order, and each
    input read as the episodic library reads it (naming the item and the field)."""
    if episode is not None and episodes is None:
        batch: list[Any] = [episode]
    elif episodes is not None and episode is None:
        batch = episodes
    else:
        raise InvalidInput("episode", "give either episode (one object) or episodes (a list)")
    recorded = record_episodes(store, batch, now=now, actor=actor)
    return {
        "ids": [doc["id"] for doc in recorded],
        "warnings": [w for doc in recorded for w in doc["warnings"]],
    }


# -- reads -------------------------------------------------------------------------------
def get_episode(store: Store, key: str) -> dict[str, Any]:
    """An episode by id or by ``#index``/index number (another agent's, while agents are
    isolated, is not found)."""
    from ..ledger.isolation import check_episode

    with store.reading():
        wanted = key.lstrip("#")
        if is_whole_number(wanted):
            index = int(wanted)
            for doc in readable.docs(store, shards.shard_of(BASE, index)).values():
                if doc["index"] == index:
                    return dict(check_episode(store, doc, key))
            raise NotFound("episode", key)
        for name in reversed(shards.shard_names(store, BASE)):
            found = readable.docs(store, name).get(key)
            if found:
                return dict(check_episode(store, found, key))
    raise NotFound("episode", key)


def count(store: Store) -> int:
    """Episodes recorded (including history imported from elsewhere)."""
    return int(aggregates.read_global(store)["total_episodes"])


def page(store: Store, start_index: int, stop_index: int) -> list[dict[str, Any]]:
    """Episodes with ``start_index <= index < stop_index``, reading only their shards."""
    out: list[dict[str, Any]] = []
    if stop_index <= start_index:
        return out
    first = shards.shard_of(BASE, max(1, start_index))
    last = shards.shard_of(BASE, max(1, stop_index - 1))
    for name in shards.shard_names(store, BASE):
        if first <= name <= last:
            out.extend(
                d
                for d in readable.docs(store, name).values()
                if start_index <= d["index"] < stop_index
            )
    return sorted(out, key=lambda d: d["index"])


def iter_all(store: Store, *, newest_first: bool = False) -> Iterator[dict[str, Any]]:
    """Every episode (reads every shard: for exports and the workbench, not hot paths)."""
    return shards.iter_docs(store, BASE, newest_first=newest_first)


# -- compact rows for list views (read-only helpers) -------------------------------------
class EpisodeRow(NamedTuple):
    """What a list of episodes shows of one episode (9 fields, no lists, no metadata)."""

    # Named for the episode's number, as every pane and command calls it; it hides
    # tuple.index, which nothing calls on a row.
    index: int  # type: ignore[assignment]
    id: str
    task_id: str
    score: float
    outcome: str
    steps: int
    recorded_at: str
    summary: str
    agent: str = ""  # the agent that recorded it ("": none, a global episode)


def row_of(doc: dict[str, Any]) -> EpisodeRow:
    """The list row of an episode document, or of an aggregate's compact entry."""
    return EpisodeRow(
        doc["index"],
        doc["id"],
        doc["task_id"],
        doc["score"],
        doc["outcome"],
        doc["steps"],
        doc.get("recorded_at") or doc["created_at"],
        doc.get("summary", ""),
        doc.get("agent_id", ""),
    )


class ShardRows(NamedTuple):
    """One shard's list rows, newest first, and the documents they were read from.

    (A NamedTuple, not a dataclass: recording imports this module on every agent
    step, and ``dataclasses`` brings ``inspect`` and ``ast`` with it.)
    """

    docs: object
    """The shard's documents mapping when it was read (its identity marks a change)."""
    rows: tuple[EpisodeRow, ...]


def shard_names(store: Store) -> list[str]:
    """The episode shard tables, oldest first."""
    return shards.shard_names(store, BASE)


def compact_shard(store: Store, name: str, previous: ShardRows | None = None) -> ShardRows:
    """The list rows of shard ``name``, newest first (call inside ``store.reading()``).

    ``previous`` is what an earlier call returned for the same shard: when the
    shard has not changed since (the store swaps a table's mapping on every
    commit that touches it and when another process replaces it), it is
    returned as is, so refreshing a list of 100,000 episodes after one more is
    recorded re-reads one shard, not two hundred.
    """
    docs = readable.docs(store, name)  # the same mapping while the shard is unchanged
    if previous is not None and previous.docs is docs:
        return previous
    # tuple.__new__ skips the NamedTuple's Python-level __new__ (a third of the cost
    # of building 100,000 rows).
    make = tuple.__new__
    rows = sorted(
        (
            make(
                EpisodeRow,
                (
                    d["index"],
                    d["id"],
                    d["task_id"],
                    d["score"],
                    d["outcome"],
                    d["steps"],
                    d["created_at"],
                    d.get("summary", ""),
                    d.get("agent_id", ""),
                ),
            )
            for d in docs.values()
        ),
        key=_first,
        reverse=True,
    )
    return ShardRows(docs, tuple(rows))


def _first(row: EpisodeRow) -> int:
    return row[0]
