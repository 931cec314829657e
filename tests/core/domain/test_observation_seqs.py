"""The numbers a store keeps of a session's observations between observes
(core/domain/observation_seqs.py): every answer the same as reading every note."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from memwork.core.domain import forgetting, observation_seqs, sessions
from memwork.core.storage.store import Store

ACTOR = "test"
CAP = 80  # past KEPT_FROM, so a full session is kept


@pytest.fixture(autouse=True)
def small_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMWORK_MAX_OBS_PER_SESSION", str(CAP))


def checked(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Compare every answer the kept numbers give with the scan of the same notes;
    the list says, call by call, whether they answered (False: the caller scanned)."""
    real = observation_seqs.last_and_oldest
    answered: list[bool] = []

    def compared(store: Store, table: str, docs: dict) -> tuple[int, str | None] | None:
        got = real(store, table, docs)
        answered.append(got is not None)
        if got is not None:
            seqs = sessions._seqs(docs)
            assert got == (max(seqs), sessions._oldest(docs, seqs, 1)[0])
        return got

    monkeypatch.setattr(observation_seqs, "last_and_oldest", compared)
    return answered


def _seqs_in(store: Store, sid: str) -> list[int]:
    with store.reading():
        docs = store.docs(sessions.observations_table(sid))
        return sorted(d["seq"] for d in docs.values())


def test_two_writers_forgets_and_folds_answer_as_the_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, now: datetime
) -> None:
    """Two stores on one folder take turns at random observing into one full session;
    one forgets a note now and then; the log is folded every 32 commits (the numbers
    are then read again). The kept numbers answer most calls, always as the scan does,
    and the session keeps its newest notes, numbered past every note before."""
    monkeypatch.setenv("MEMWORK_LOG_RECORDS", "32")
    answered = checked(monkeypatch)
    writers = [Store(tmp_path / "s"), Store(tmp_path / "s")]
    sid = sessions.start_session(writers[0], now=now, actor=ACTOR)["id"]
    rng = random.Random(7)
    last = 0
    for n in range(400):
        at = now + timedelta(seconds=n)
        store = rng.choice(writers)
        saved = sessions.observe(store, sid, f"note {n} about the canary", now=at, actor=ACTOR)
        assert saved["seq"] > last
        last = saved["seq"]
        if n % 17 == 16:  # the other writer forgets one of the notes
            other = writers[1] if store is writers[0] else writers[0]
            with other.reading():
                held = list(other.docs(sessions.observations_table(sid)))
            forgetting.forget_observations(other, [rng.choice(held)], now=at, actor=ACTOR)
    for store in writers:
        assert _seqs_in(store, sid)[-1] == last
        store.close()
    assert answered.count(True) > 250
    assert answered.count(False) > 0  # the session filling up, and after the folds


def test_a_seq_that_is_not_a_number_is_left_to_the_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, now: datetime
) -> None:
    """A note whose seq a hand edit left as text: the kept numbers stand aside, and the
    scan numbers and drops as it always did."""
    answered = checked(monkeypatch)
    store = Store(tmp_path / "s")
    sid = sessions.start_session(store, now=now, actor=ACTOR)["id"]
    for n in range(CAP + 5):
        sessions.observe(store, sid, f"note {n}", now=now + timedelta(seconds=n), actor=ACTOR)
    assert answered[-1] is True
    table = sessions.observations_table(sid)
    with store.transaction():
        newest = max(store.docs(table).values(), key=lambda d: d["seq"])
        store.put(table, newest["id"], {**newest, "seq": str(newest["seq"])})
    saved = sessions.observe(
        store, sid, "after the edit", now=now + timedelta(hours=1), actor=ACTOR
    )
    assert answered[-1] is False
    assert saved["seq"] == int(newest["seq"]) + 1
    store.close()


def test_notes_written_earlier_in_the_same_transaction_are_read_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, now: datetime
) -> None:
    """Two observes inside one transaction: the second reads the notes the first wrote
    (not yet committed), numbers past them and drops the oldest."""
    answered = checked(monkeypatch)
    store = Store(tmp_path / "s")
    sid = sessions.start_session(store, now=now, actor=ACTOR)["id"]
    for n in range(CAP):
        sessions.observe(store, sid, f"note {n}", now=now + timedelta(seconds=n), actor=ACTOR)
    before = _seqs_in(store, sid)
    with store.transaction():
        first = sessions.observe(store, sid, "one", now=now + timedelta(hours=1), actor=ACTOR)
        second = sessions.observe(store, sid, "two", now=now + timedelta(hours=1), actor=ACTOR)
    assert answered[-2:] == [True, False]
    assert (first["seq"], second["seq"]) == (before[-1] + 1, before[-1] + 2)
    assert _seqs_in(store, sid) == before[2:] + [first["seq"], second["seq"]]
    store.close()


def test_a_store_that_cannot_say_what_changed_scans(
    monkeypatch: pytest.MonkeyPatch, now: datetime
) -> None:
    """An in-memory store keeps no log to ask: every call scans, with the same result."""
    answered = checked(monkeypatch)
    store = Store.in_memory()
    sid = sessions.start_session(store, now=now, actor=ACTOR)["id"]
    for n in range(CAP + 10):
        sessions.observe(store, sid, f"note {n}", now=now + timedelta(seconds=n), actor=ACTOR)
    assert not any(answered)
    assert _seqs_in(store, sid) == list(range(11, CAP + 11))


def test_the_newest_note_forgotten_is_no_longer_the_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, now: datetime
) -> None:
    """The newest note forgotten by another writer, then by the same one: the kept
    numbers' largest seq is the scan's, and the next note is numbered past every note
    the session ever had (forgotten ones count)."""
    answered = checked(monkeypatch)
    writers = [Store(tmp_path / "s"), Store(tmp_path / "s")]
    sid = sessions.start_session(writers[0], now=now, actor=ACTOR)["id"]
    table = sessions.observations_table(sid)
    for n in range(CAP + 3):
        sessions.observe(writers[0], sid, f"note {n}", now=now + timedelta(seconds=n), actor=ACTOR)
    for forgetter in (writers[1], writers[0]):
        with forgetter.reading():
            newest = max(forgetter.docs(table).values(), key=lambda d: d["seq"])
        forgetting.forget_observations(forgetter, [newest["id"]], now=now, actor=ACTOR)
        saved = sessions.observe(writers[0], sid, "next", now=now + timedelta(hours=1), actor=ACTOR)
        assert answered[-1] is True
        assert saved["seq"] == newest["seq"] + 1
    for store in writers:
        store.close()


def test_kept_numbers_follow_puts_and_deletes_of_any_note() -> None:
    """What the store reports changed, applied in turn (the largest deleted, a note
    renumbered, many taken out so the heap starts again): each time the largest seq and
    the oldest (seq, then id) are those of the notes left."""
    rng = random.Random(3)
    notes = {f"obs_{n:03d}": n for n in range(1, 101)}
    numbers = observation_seqs._Numbers(dict(notes), version=1, stamp=0)
    for step in range(300):
        changes: dict[str, dict | None] = {}
        if step % 7 == 0 and notes:
            changes[max(notes, key=notes.__getitem__)] = None  # the newest goes
        for doc_id in rng.sample(sorted(notes), min(3, len(notes))):
            gone = rng.random() < 0.5 and len(notes) > 20
            changes[doc_id] = None if gone else {"seq": rng.randint(1, 400)}
        if step % 2:  # a new newest note every other step only
            changes[f"obs_new{step}"] = {"seq": 400 + step}
        assert numbers.take(changes)
        for doc_id, doc in changes.items():
            if doc is None:
                notes.pop(doc_id, None)
            else:
                notes[doc_id] = doc["seq"]
        assert numbers.top == max(notes.values())
        assert numbers.oldest() == min(notes, key=lambda d: (notes[d], d))
    assert len(numbers.heap) <= 2 * len(notes) + observation_seqs.KEPT_FROM
    assert not numbers.take({"obs_x": {"seq": "7"}})  # not a number: the caller scans
