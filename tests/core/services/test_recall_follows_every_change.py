"""Whatever an agent does to its store, in whatever order, through one long-lived
process or another or a CLI call: the next search of each answers as an index built
afresh from the store would, and nothing deleted, forgotten or restored away is found.

A state machine (hypothesis) writes, deletes, forgets, records episodes, edits lessons,
checkpoints and restores, through two ``Memory`` objects on one folder store (each
keeps its own recall index and follows the other's commits, as two processes do), and
closes and reopens the first (its index saved to its file and read back). After each
step both, and a CLI call (which reads the saved file, catches it up and saves it
again), are asked a few words, and their hits must be those of a reader that builds
its index from the store alone (no saved file read)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)

from memwork import Memory
from memwork.core.base.errors import Conflict, NotFound
from memwork.core.services import checkpoints as checkpoint_service
from memwork.core.services.recall import search
from tests import cli_in_process
from tests.conftest import NOW
from tests.redis_server import RedisServer

#: Few words, so that notes share them and every search has rivals to rank.
WORDS = ("heron", "egret", "pier", "gate", "dawn", "tide", "reed", "marsh")
PROBES = ("heron", "egret pier", "dawn tide", "reed marsh gate", "heorn pire", "marhs")

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


def hits(memory: Memory, query: str, **where: Any) -> list[tuple[str, str, float]]:
    """What a search (with the filters ``where``) finds, as (kind, id, score), best
    first: records of one score come newest first, whichever process indexed them in
    whichever order."""
    return [(h["kind"], h["id"], h["score"]) for h in memory.search(query, limit=50, **where)]


def answers(memory: Memory, session: str) -> dict[str, Any]:
    """The probes' hits, plain and filtered (by kind, by session), and the context an
    agent gets with a query."""
    found: dict[str, Any] = {q: hits(memory, q) for q in PROBES}
    for q in PROBES[:2]:
        for kinds in (["observation"], ["lesson", "episode"]):
            found[f"{q} {kinds}"] = hits(memory, q, kinds=kinds)
        found[f"{q} in {session}"] = hits(memory, q, session=session)
    found["context"] = memory.context(query="heron pier", budget=4000)
    return found


def afresh(location: str, session: str, agent: str | None = None) -> dict[str, Any]:
    """:func:`answers` of an index built from the store alone, its file left unread,
    for ``agent`` (None: an agent of no name)."""
    os.environ["MEMWORK_SEARCH_CACHE"] = "0"
    try:
        reader = Memory(location, clock=lambda: NOW, agent=agent)
        try:
            return answers(reader, session)
        finally:
            reader.close()
    finally:
        del os.environ["MEMWORK_SEARCH_CACHE"]


class StoreUnderAgents(RuleBasedStateMachine):
    """Two long-lived readers and writers of one store (a folder of its own, unless
    :attr:`where` gives another), as the agents :attr:`agents` names."""

    #: Where each run's store lives (None: a new folder).
    where: Callable[[], str] | None = None
    #: The agent each reader is (None: no name), and whether each reads only its own.
    agents: tuple[str | None, str | None] = (None, None)
    isolated = False

    notes = Bundle("notes")
    sessions = Bundle("sessions")
    lessons = Bundle("lessons")
    checkpoints = Bundle("checkpoints")

    def __init__(self) -> None:
        super().__init__()
        self.folder = tempfile.mkdtemp(prefix="memwork-follow-")
        where = type(self).where
        self.location = where() if where is not None else str(Path(self.folder) / "s")
        if self.isolated:
            done = cli_in_process.run(self.location, "config", "set", "isolation", "agent")
            assert done.returncode == 0, done.stderr
        self.first = self.reader(False)
        self.second = self.reader(True)
        shared = self.first.start_session(title="watch")["id"]
        #: Each reader's own session (one both write to, unless they are kept apart).
        self.own = {
            False: shared,
            True: self.second.start_session(title="watch")["id"] if self.isolated else shared,
        }
        #: The ids of notes and sessions no search may find any more (deleted,
        #: forgotten), until a restore may bring them back.
        self.gone: set[str] = set()

    def reader(self, second: bool) -> Memory:
        return Memory(self.location, clock=lambda: NOW, agent=self.agents[second])

    def by(self, second: bool) -> Memory:
        return self.second if second else self.first

    @rule(target=notes, text=texts, second=st.booleans())
    def observe(self, text: str, second: bool) -> str:
        session = self.own[second]
        note = self.by(second).observe(session, text)
        return f"{session}/{note['id']}"

    @rule(target=sessions, text=texts, second=st.booleans())
    def start_session(self, text: str, second: bool) -> str:
        return str(self.by(second).start_session(title=text)["id"])

    @rule(target=notes, session=sessions, text=texts, second=st.booleans())
    def observe_elsewhere(self, session: str, text: str, second: bool) -> Any:
        try:
            note = self.by(second).observe(session, text)
        except NotFound:  # its session deleted or restored away
            return multiple()
        return multiple(f"{session}/{note['id']}")

    # A record the caller cannot reach (restored away, its session deleted, another
    # agent's) is not found: nothing is gone then.
    @rule(session=consumes(sessions), second=st.booleans())
    def delete_session(self, session: str, second: bool) -> None:
        with suppress(NotFound):
            self.by(second).delete_session(session=session)
            self.gone.add(session)

    @rule(note=consumes(notes), second=st.booleans())
    def delete_note(self, note: str, second: bool) -> None:
        with suppress(NotFound):
            self.by(second).delete_observations(observations=[note.split("/")[1]])
            self.gone.add(note)

    @rule(note=consumes(notes), second=st.booleans())
    def forget_note(self, note: str, second: bool) -> None:
        with suppress(NotFound):
            self.by(second).forget(kind="observation", id=note.split("/")[1])
            self.gone.add(note)

    @rule(text=texts, second=st.booleans())
    def record_episode(self, text: str, second: bool) -> None:
        self.by(second).record_episode(
            {"task_id": "survey", "score": 0.5, "steps": 2, "summary": text}
        )

    @rule(target=lessons, text=texts, second=st.booleans())
    def add_lesson(self, text: str, second: bool) -> str:
        found: dict[str, Any] = self.by(second).add_lesson(text=f"{text} lesson")
        return str(found["id"])

    @rule(lesson=lessons, text=texts, second=st.booleans())
    def edit_lesson(self, lesson: str, text: str, second: bool) -> None:
        with suppress(NotFound):  # restored away
            self.by(second).edit_lesson(lesson=lesson, text=f"{text} lesson edited")

    @rule(lesson=lessons, second=st.booleans())
    def forget_lesson(self, lesson: str, second: bool) -> None:
        with suppress(NotFound, Conflict):  # forgotten, merged or gone since
            self.by(second).forget_lesson(lesson=lesson)

    @rule(lesson=lessons, second=st.booleans())
    def unforget_lesson(self, lesson: str, second: bool) -> None:
        with suppress(NotFound, Conflict):  # forgotten, merged or gone since
            self.by(second).unforget_lesson(lesson=lesson)

    @rule(keep=lessons, absorb=consumes(lessons), second=st.booleans())
    def merge_lessons(self, keep: str, absorb: str, second: bool) -> None:
        if keep != absorb:
            with suppress(NotFound, Conflict):  # forgotten, merged or gone since
                self.by(second).merge_lessons(keep=keep, absorb=[absorb])

    @rule(lesson=consumes(lessons), second=st.booleans())
    def delete_lesson(self, lesson: str, second: bool) -> None:
        with suppress(NotFound, Conflict):  # forgotten, merged or gone since
            self.by(second).delete_lessons(lessons=[lesson])
            self.gone.add(lesson)

    @rule(target=checkpoints, second=st.booleans())
    def checkpoint(self, second: bool) -> str:
        return str(self.by(second).create_checkpoint(description="step")["id"])

    @rule(checkpoint=checkpoints, second=st.booleans())
    def restore(self, checkpoint: str, second: bool) -> None:
        if self.isolated:  # an agent may not rewind the others: a person does, as the
            # workbench does (no agent asking)
            checkpoint_service.restore_op(self.by(second).store, checkpoint, now=NOW, actor="tui")
        else:
            self.by(second).restore_checkpoint(checkpoint=checkpoint)
        # What was deleted since may be back, and what came since is gone: the
        # comparison with an index built afresh says which.
        self.gone.clear()

    @rule()
    def reopen_first(self) -> None:
        self.first.close()  # its index saved to the store's file, read back below
        self.first = self.reader(False)

    @invariant()
    def each_answers_as_an_index_built_afresh(self) -> None:
        for second in (False, True):
            agent, session = self.agents[second], self.own[second]
            expected = afresh(self.location, session, agent)
            # A CLI call: the saved file read, caught up and saved again.
            for q in PROBES[:2]:
                done = cli_in_process.run(
                    self.location,
                    "search",
                    q,
                    "--json",
                    "--limit",
                    "50",
                    MEMWORK_NOW=NOW.isoformat(),
                    MEMWORK_AGENT=agent or "",
                )
                assert done.returncode == 0, done.stderr
                listed = [(h["kind"], h["id"], h["score"]) for h in json.loads(done.stdout)]
                assert listed == expected[q]
            found = answers(self.by(second), session)
            assert found == expected
            ids = {hit[1] for q in PROBES for hit in found[q]}
            assert not {i for i in ids if i in self.gone or i.split("/")[0] in self.gone}
            if self.isolated:  # nothing of the other's session
                other = self.own[not second]
                assert not {i for i in ids if i.split("/")[0] == other}

    def teardown(self) -> None:
        for memory in (self.first, self.second):
            memory.close()
        shutil.rmtree(self.folder, ignore_errors=True)


RUNS = settings(
    max_examples=30,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
StoreUnderAgents.TestCase.settings = RUNS
test_the_index_follows_every_change_through_two_readers = pytest.mark.slow(
    StoreUnderAgents.TestCase
)


@pytest.mark.slow
def test_on_redis_too(redis_server: RedisServer) -> None:
    """The same on a Redis store, where no process keeps a file of its index: each
    builds it from the store and follows the other's commits."""

    class OnRedis(StoreUnderAgents):
        where = redis_server.fresh_db

    run_state_machine_as_test(OnRedis, settings=settings(RUNS, max_examples=15))


@pytest.mark.slow
def test_with_tables_staged_on_disk_and_the_index_saved_as_it_goes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same where every transaction holding more than a few documents stages them
    on disk (as a restore of a big store does), and each reader's index is saved in
    the background a moment after each change, while the other reads and writes."""
    monkeypatch.setenv("MEMWORK_STAGE_DOCUMENTS", "3")
    monkeypatch.setattr(search, "SAVE_AFTER", 0.001)
    run_state_machine_as_test(StoreUnderAgents, settings=settings(RUNS, max_examples=15))


@pytest.mark.slow
def test_two_agents_kept_apart_each_see_their_own() -> None:
    """The same for two agents on a store that keeps each agent's sessions and episodes
    to itself: each reader answers as an index built afresh answers that agent, and
    nothing of the other's session reaches it."""

    class KeptApart(StoreUnderAgents):
        agents = ("alpha", "beta")
        isolated = True

    run_state_machine_as_test(KeptApart, settings=settings(RUNS, max_examples=15))


def test_records_of_one_score_come_newest_first_in_any_process(tmp_path: Path) -> None:
    """The case the machine above first found: a lesson and an episode of equal scores
    came in the order this process indexed them, the other way round in an index built
    afresh, and the search's feedback then read the one first, so one process listed a
    record the other did not."""
    location = str(tmp_path / "s")
    first = Memory(location, clock=lambda: NOW)
    try:

        def episode(text: str) -> None:
            first.record_episode({"task_id": "survey", "score": 0.5, "steps": 2, "summary": text})

        session = first.start_session(title="watch")["id"]
        episode("heron")
        first.add_lesson(text="heron lesson")
        for text in ("heron", "heron egret", "heron", "heron", "egret"):
            episode(text)
        found = hits(first, "heron")
        assert found == afresh(location, session)["heron"]
        scores = [score for _, _, score in found]
        tied = [hit for hit in found if scores.count(hit[2]) > 1]
        assert tied  # the case needs ties
        for a, b in zip(tied, tied[1:], strict=False):
            if a[2] == b[2]:  # newest first: ids are time-ordered
                assert a[1].partition("_")[2] > b[1].partition("_")[2]
    finally:
        first.close()
