"""The workbench's one door to the store: named reads, the writer, change detection.

Panes never hold the store. They ask this service for what they show (one
named method per read, each one consistent read of the store) and name the
operations they run (:meth:`MemoryService.write`: the operation runner, as at
every door, with the clock, the actor and the person's curator key). Only this
module and :mod:`tui.launch` import ``core.storage``, and no other workbench
module imports a core module that writes: import-linter contracts in
``pyproject.toml`` keep it that way.

Every method blocks on the store's lock and file reads: call them from worker
threads (:meth:`tui.app.MemworkApp.io` runs one and awaits it), never from the
UI thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core.base import clock
from ..core.base.errors import NotFound
from ..core.domain import (
    actions,
    aggregates,
    cards,
    effect,
    episodes,
    lessons,
    rules,
    sessions,
    slots,
)
from ..core.domain.decay import effective_confidence, is_live
from ..core.domain.targets import Targets, known_targets
from ..core.domain.working_memory import overview as working_memory
from ..core.domain.working_memory import scopes as wm_scopes
from ..core.ledger import audit, config
from ..core.ledger.curator import Curator, ensure_key_file
from ..core.ops import runner
from ..core.ops.internal import workbench_op
from ..core.privacy import counting
from ..core.services import checkpoints, history, link_graph, lint, replay, review
from ..core.services.context.build import build_context
from ..core.services.context.log import Injections, injection_counts
from ..core.services.recall.search_docs import build_index
from ..core.services.recall.search_index import SearchIndex
from ..core.storage.store import Store

__all__ = ["EpisodeHead", "LessonExtras", "MemoryService", "SessionDetail", "Store"]

ACTOR = "tui"
Doc = dict[str, Any]


@dataclass(frozen=True, slots=True)
class EpisodeHead:
    """What the Episodes pane needs before any shard: totals, tasks, the newest rows."""

    total: int
    tasks: list[Doc]
    recent: tuple[episodes.EpisodeRow, ...]
    pages: list[str]
    """Names of the episode shards, oldest first (opaque keys for :meth:`episode_rows`)."""


@dataclass(frozen=True, slots=True)
class LessonExtras:
    """What the Lessons pane shows beside the lists, read after them."""

    effects: dict[str, Doc | None]
    """Lesson id → its effect on its task (``core.domain.effect``), or None."""
    contradicts: dict[str, list[str]]
    """Live lesson id → the ids of the live lessons it contradicts."""
    findings: list[Doc]
    """Every lint finding."""
    uses: dict[str, Injections]
    """Record id → how many contexts injected it (``core.services.context.log``)."""
    logging: bool
    """Whether contexts are being logged (setting ``context_log``)."""


@dataclass(frozen=True, slots=True)
class SessionDetail:
    """Everything the Sessions pane shows for one session."""

    session: Doc
    observations: list[Doc]
    wm: Doc
    """:func:`core.domain.working_memory.overview.overview` of the session."""


def run_operation(
    store: Store,
    name: str,
    params: dict[str, Any],
    *,
    now: datetime,
    actor: str,
    curator: Curator | None = None,
) -> Any:
    """Run the operation ``name`` through the operation runner, as every door does: its
    parameters checked under their declared names, then audit, isolation and review as
    for any caller (the workbench's curator key: review holds none of its writes, and
    records the ones that get around it). ``name`` is any door's operation
    (:mod:`core.ops.operations`) or one of the workbench's own (:mod:`core.ops.internal`)."""
    op = workbench_op(name)
    checked = runner.check(op, "api", params)
    return runner.call(op, store, checked, now=now, actor=actor, curator=curator)


class MemoryService:
    """Core calls for the workbench, with the clock and the actor filled in."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.actor = ACTOR
        self._curator: Curator | None = None

    def curator(self) -> Curator:
        """The person's curator key (``core.ledger.curator``): the user's key file, made on the
        first write. The workbench is a person at the keyboard; every write carries it."""
        if self._curator is None:
            self._curator, _ = ensure_key_file()
        return self._curator

    @property
    def now(self) -> datetime:
        """The clock every rule reads (honours MEMWORK_NOW and the demo shift)."""
        return clock.now()

    # -- writing ----------------------------------------------------------------------
    def write(self, operation: str, /, **params: Any) -> Any:
        """Run the operation named ``operation`` with ``params`` (its declared parameter
        names) through the operation runner, as the person at the keyboard: the clock,
        the actor ``tui`` and the person's curator key filled in.

        There is no other way for the workbench to change the store: a pane names an
        operation, never a core function. Redactions the scrubber makes in it are counted
        into the change's audit entry.
        """
        with counting():
            return run_operation(
                self.store,
                operation,
                params,
                now=self.now,
                actor=self.actor,
                curator=self.curator(),
            )

    def location(self) -> str:
        """Where the store is, as an agent would name it in ``MEMWORK_DB``: the folder's
        absolute path, or the Redis URL without its password."""
        if self.store.scheme == "file":
            return str(Path(self.store.location).resolve())
        return self.store.location

    def is_empty(self) -> bool:
        """Whether nothing was ever recorded: no session, episode, lesson, rule, slot or
        mistake card (a fresh store the workbench should explain)."""
        with self.store.reading():
            if int(aggregates.read_global(self.store)["total_episodes"]):
                return False
            if self.store.table_names("observations") or self.store.docs("sessions"):
                return False
            return not any(
                self.store.docs(table) for table in ("lessons", "slots", "mistake_cards")
            ) and not rules.all_rules(self.store)

    def opening_pane(self) -> str | None:
        """Where the workbench opens when the store has no session but holds something
        else: the first of Episodes, Lessons, Slots and Cards with records (None: there
        are sessions, or nothing at all)."""
        with self.store.reading():
            if self.store.docs("sessions"):
                return None
            if int(aggregates.read_global(self.store)["total_episodes"]):
                return "episodes"
            if self.store.docs("lessons") or rules.all_rules(self.store):
                return "lessons"
            if self.store.docs("slots"):
                return "slots"
            if self.store.docs("mistake_cards"):
                return "cards"
        return None

    def generation(self) -> int:
        """The store's commit counter; it moves whenever anyone writes."""
        return self.store.committed_generation()

    def follow(self, on_change: Callable[[], None]) -> Callable[[], None] | None:
        """Have ``on_change`` called (from a thread) after every commit, pushed by the
        store (Redis pub/sub); returns a stop, or None when the store must be polled."""
        return self.store.follow(on_change)

    # -- sessions ---------------------------------------------------------------------
    def sessions_and_detail(self, wanted: str | None) -> tuple[list[Doc], SessionDetail | None]:
        """Every session, and the detail of ``wanted`` (or of the first one)."""
        now = self.now
        with self.store.reading():
            rows = sessions.list_sessions(self.store, now)
            ids = [r["id"] for r in rows]
            sid = wanted if wanted in ids else (ids[0] if ids else None)
            return rows, (self._session_detail(sid, now) if sid else None)

    def session_detail(self, session_id: str) -> SessionDetail:
        """One session with its observations and working memory."""
        with self.store.reading():
            return self._session_detail(session_id, self.now)

    def _session_detail(self, session_id: str, now: datetime) -> SessionDetail:
        return SessionDetail(
            sessions.get_session(self.store, session_id, now),
            sessions.observations(self.store, session_id),
            {
                **working_memory.overview(self.store, session_id, now=now),
                # Its own keys and those it inherits from its agent and project, each with
                # its ``scope`` (core/domain/working_memory/scopes.py).
                "keys": wm_scopes.list_keys(self.store, session_id, now=now),
            },
        )

    # -- links and replays -------------------------------------------------------------
    def linked_records(self) -> list[link_graph.LinkedRecord]:
        """Every record a link touches, most linked first (the Graph pane's list)."""
        return link_graph.linked_records(self.store)

    def link_tree(self, root: str) -> list[link_graph.GraphRow]:
        """The tree of links around ``root`` (the Graph pane)."""
        return link_graph.link_tree(self.store, root)

    def sessions_for_replay(self) -> list[Doc]:
        """Every session, newest first (the Replay pane's list)."""
        return sessions.list_sessions(self.store, self.now)

    def session_replay(self, session_id: str) -> replay.Replay:
        """One session's timeline (the Replay pane)."""
        return replay.session_replay(self.store, session_id)

    # -- episodes ---------------------------------------------------------------------
    def episode_head(self) -> EpisodeHead:
        """Totals, tasks and the newest episodes (from aggregates: no shard is read)."""
        with self.store.reading():
            glob = aggregates.read_global(self.store)
            tasks = aggregates.all_tasks(self.store)
            pages = episodes.shard_names(self.store)
        recent = tuple(episodes.row_of(e) for e in reversed(glob["recent"]))
        return EpisodeHead(int(glob["total_episodes"]), tasks, recent, pages)

    def episode_rows(
        self, pages: Sequence[str], known: dict[str, episodes.ShardRows]
    ) -> list[episodes.ShardRows]:
        """The compact rows of some shards (``known`` ones are reused when unchanged)."""
        with self.store.reading():
            return [episodes.compact_shard(self.store, n, known.get(n)) for n in pages]

    def episode_detail(self, index: int, episode_id: str) -> tuple[Doc, list[Doc]] | None:
        """An episode (found by index, checked by id) and the cards it touched."""
        with self.store.reading():
            try:
                doc = episodes.get_episode(self.store, f"#{index}")
                if doc["id"] != episode_id:
                    doc = episodes.get_episode(self.store, episode_id)
            except NotFound:
                return None
            return doc, cards.cards_of(self.store, doc.get("card_ids", []))

    def find_episode(self, ref: str) -> Doc | None:
        """An episode by id or ``#index``, or None."""
        try:
            return episodes.get_episode(self.store, ref)
        except NotFound:
            return None

    # -- cards, lessons, rules, slots -------------------------------------------------
    def all_cards(self) -> list[Doc]:
        """Every mistake card, ranked."""
        with self.store.reading():
            return cards.all_cards(self.store)

    def lessons_and_rules(self) -> tuple[list[Doc], list[Doc], int]:
        """Every lesson, every rule, and how many near-duplicate lesson groups there are."""
        with self.store.reading():
            all_lessons = lessons.all_lessons(self.store)
            all_rules = rules.all_rules(self.store)
        groups = lessons.near_duplicate_clusters(all_lessons, self.now)
        return all_lessons, all_rules, len(groups)

    def near_duplicate_groups(self, known: Sequence[Doc]) -> list[list[Doc]]:
        """Groups of near-duplicate live lessons among ``known`` (each strongest first),
        largest group first: what merging offers."""
        return lessons.near_duplicate_clusters(list(known), self.now)

    def live_lessons(self) -> list[Doc]:
        """The live lessons, strongest first (what a proposal can be merged into)."""
        now = self.now
        with self.store.reading():
            found = [x for x in lessons.all_lessons(self.store) if is_live(x, now)]
        return sorted(found, key=lambda x: -effective_confidence(x, now))

    def all_slots(self) -> list[Doc]:
        """Every slot in context order, with computed fields."""
        return slots.list_slots(self.store)

    def letta_agents(self) -> list[Doc]:
        """The Letta agents imports brought (name, system prompt, their slots' labels)."""
        from ..core.services.interop.letta_agents import all_agents

        with self.store.reading():
            return all_agents(self.store)

    # -- checkpoints, context, tasks --------------------------------------------------
    def store_checkpoints(self) -> list[Doc]:
        """The store's checkpoints, oldest first."""
        return checkpoints.list_checkpoints(self.store)

    def checkpoint_diff(self, key: str, titles: int) -> Doc:
        """What changed since checkpoint ``key``, with titles for the first ids shown."""
        return checkpoints.diff(self.store, key, titles=titles)

    def work_items(self) -> list[Doc]:
        """Every work item (``core.domain.actions``), as ``memwork action list`` lists them."""
        return actions.list_actions(self.store)

    def tasks(self) -> list[Doc]:
        """Every task with its numbers."""
        with self.store.reading():
            return aggregates.all_tasks(self.store)

    def targets(self) -> Targets:
        """The tasks and projects the store knows (offered, never required)."""
        return known_targets(self.store)

    def context(
        self, task: str | None, budget: int, style: str, *, project: str | None = None
    ) -> Doc:
        """The context an agent would get, as ``memwork context --format json`` prints it,
        plus ``text_sources``: the records behind each line of the text."""
        with self.store.reading():
            result = build_context(
                self.store,
                now=self.now,
                task_id=task,
                budget_tokens=budget,
                style=style,
                project=project,
            )
        return {**result.to_json(), "text_sources": result.text_sources()}

    # -- history ----------------------------------------------------------------------
    def audit_pages(self) -> tuple[int, int]:
        """(number of pages, sequence number of the newest entry) of the audit log."""
        with self.store.reading():
            return history.page_count(self.store), audit.last_seq(self.store)

    def audit_page(self, number: int) -> list[Doc]:
        """One page of the audit log, newest first."""
        with self.store.reading():
            return history.page(self.store, number)

    def audit_after(self, seq: int, newest_id: str) -> list[Doc] | None:
        """Entries newer than ``seq``, newest first; None when the entry ``seq`` is no
        longer ``newest_id`` (the log was replaced: read it whole again)."""
        with self.store.reading():
            known = history.entry_at(self.store, seq)
            if known is None or known["id"] != newest_id:
                return None
            return history.entries_after(self.store, seq)

    def locate(self, table: str, record_id: str) -> tuple[str, str] | None:
        """(kind, ref) of the record an audit entry names, or None when it is gone."""
        return history.locate(self.store, table, record_id)

    # -- curation ---------------------------------------------------------------------
    def header_counts(self) -> tuple[int, int, bool]:
        """(pending proposals, lint findings, whether review is on), for the header."""
        with self.store.reading():
            pending = review.pending_count(self.store)
            reviewing = config.is_on(self.store, "review")
            inputs = lint.read_inputs(self.store)
        # Outside the read: comparing thousands of lessons takes seconds, and a read
        # holds every other pane and every agent's write up.
        return pending, len(inputs.findings(self.now)), reviewing

    def lint_view(self) -> tuple[list[Doc], dict[str, tuple[str, str]]]:
        """Every lint finding, and for each record they name its kind and a title
        (``lesson``/``slot``/``rule`` and its text or label), in one consistent read."""
        names: dict[str, tuple[str, str]] = {}
        with self.store.reading():
            inputs = lint.read_inputs(self.store)
            all_slots = slots.list_slots(self.store)
        found = inputs.findings(self.now)  # outside the read (see header_counts)
        wanted = {record for finding in found for record in finding["records"]}
        for lesson in inputs.lessons:
            if lesson["id"] in wanted:
                names[lesson["id"]] = ("lesson", lesson["content"])
        for slot in all_slots:
            if slot["id"] in wanted:
                names[slot["id"]] = ("slot", slot["label"])
        for rule in inputs.rules:
            if rule["id"] in wanted:
                names[rule["id"]] = ("rule", rule["text"])
        return found, names

    def lint_findings(self) -> list[Doc]:
        """Every lint finding (``core.services.lint``), in report order."""
        return lint.lint(self.store, self.now)

    def lesson_extras(self) -> LessonExtras:
        """For the Lessons pane: each lesson's effect, the ids each live lesson
        contradicts, the lint findings and the injection counts (one consistent read)."""
        now = self.now
        with self.store.reading():
            all_lessons = lessons.all_lessons(self.store)
            effects = effect.effects(self.store, all_lessons)
            inputs = lint.read_inputs(self.store)
            uses = injection_counts(self.store)
            logging = config.is_on(self.store, "context_log")
        found = inputs.findings(now)  # outside the read (see header_counts)
        # The contradicting pairs are the findings' own (comparing every pair of
        # lessons again would double what the pane waits for).
        opposite: dict[str, list[str]] = {}
        for finding in found:
            if finding["kind"] == "contradiction":
                first, second = finding["records"]
                opposite.setdefault(first, []).append(second)
                opposite.setdefault(second, []).append(first)
        return LessonExtras(effects, opposite, found, uses, logging)

    def review_queue(self, include_decided: bool) -> tuple[list[Doc], bool]:
        """Proposals (pending, or all), each described (``core.services.review.describe``), and
        whether the review setting is on."""
        with self.store.reading():
            return (
                review.list_proposals(self.store, self.now, include_decided=include_decided),
                config.is_on(self.store, "review"),
            )

    # -- search -----------------------------------------------------------------------
    def search_index(self) -> tuple[int, SearchIndex]:
        """A fresh search index and the store generation it was built at."""
        generation = self.generation()
        return generation, build_index(self.store)
