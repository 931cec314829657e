"""A fold prepared while the lock is free: writers commit meanwhile and lose nothing,
a fold another process made meanwhile wins, and a dropped plan leaves no file behind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memwork.core.services.doctor.folder import report
from memwork.core.storage import wal
from memwork.core.storage.backend import NO_FOLD_NEEDED, Change
from memwork.core.storage.store import Store


def _commit(store: Store, n: int) -> None:
    with store.transaction():
        store.put("notes", f"n{n:02d}", {"id": f"n{n:02d}", "text": f"note {n}"})


def _file_ids(folder: Path) -> list[str]:
    return sorted(json.loads((folder / "notes.json").read_text())["documents"])


def _read_fresh(folder: Path) -> list[str]:
    store = Store(folder, create=False)
    try:
        with store.reading():
            return sorted(store.docs("notes"))
    finally:
        store.close()


def _log_generations(folder: Path) -> list[int]:
    data = (folder / wal.LOG_NAME).read_bytes()
    base = wal.read_header(folder / wal.LOG_NAME, data)
    tail = wal.read_records(folder / wal.LOG_NAME, data, 0, base, skip=wal.HEADER_SIZE)
    return [c.generation for c in tail.records]


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp-" in p.name)


def _plan(store: Store) -> object:
    with store.reading():
        plan = store.backend.fold_begin()
    assert plan is not None and plan != NO_FOLD_NEEDED
    store.backend.fold_prepare(plan)
    return plan


def _finish(store: Store, plan: object) -> bool:
    with store.reading():
        return store.backend.fold_finish(plan)


def test_commits_made_while_a_fold_is_prepared_stay_in_the_new_log(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folding, other = Store(folder), Store(folder)
    with folding.transaction():
        folding.put("notes", "seed", {"id": "seed"})
    with folding.reading():
        pass
    for n in range(5):
        _commit(folding, n)
    plan = _plan(folding)
    for n in range(5, 8):
        _commit(other, n)  # the lock is free: another writer commits meanwhile
    assert _finish(folding, plan)
    assert _file_ids(folder) == ["n00", "n01", "n02", "n03", "n04", "seed"]
    later = _log_generations(folder)
    assert len(later) == 3  # the three commits made meanwhile, copied as they were
    assert later == list(range(later[0], later[0] + 3))
    assert _temps(folder) == []
    everything = ["seed", *(f"n{n:02d}" for n in range(8))]
    assert _read_fresh(folder) == sorted(everything)
    # Both writers go on from the new log, and commit numbers go on without a gap.
    heard: list[Change] = []
    other.subscribe(heard.append)
    _commit(folding, 8)
    _commit(other, 9)
    assert _log_generations(folder) == list(range(later[0], later[0] + 5))
    assert _read_fresh(folder) == sorted([*everything, "n08", "n09"])
    # The writer that had read the copied records already is told of the one new commit,
    # document by document, not that the whole table may have changed.
    told = [c.tables["notes"] for c in heard if not c.local]
    assert [(sorted(t.put), t.whole) for t in told] == [(["n08"], False)]


def _claimed(folder: Path) -> tuple[Store, Store, Any]:
    """Two stores on ``folder``; the first has committed three times and claimed the
    fold (its plan returned)."""
    first, second = Store(folder), Store(folder)
    for n in range(3):
        _commit(first, n)
    with first.reading():
        plan = first.backend.fold_begin()
    assert plan is not None and plan != NO_FOLD_NEEDED
    return first, second, plan


def test_one_fold_is_prepared_at_a_time(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    first, second, plan = _claimed(folder)
    with second.reading():
        assert second.backend.fold_begin() == NO_FOLD_NEEDED
    first.backend.fold_prepare(plan)
    verdict = report(folder)  # the prepared files are no strays while it runs
    assert verdict["ok"] and not [c for c in verdict["checks"] if c["name"] == "files"]
    assert _finish(first, plan)
    assert _temps(folder) == []


def test_a_commit_past_the_limit_asks_for_no_fold_while_another_is_prepared(
    tmp_path: Path, monkeypatch
) -> None:
    # Eight writers past the log's limit would each wake a fold that takes the lock
    # only to find the claim: while one is prepared, the others ask for none.
    monkeypatch.setenv("MEMWORK_LOG_RECORDS", "3")
    folder = tmp_path / "s"
    folding, other = Store(folder), Store(folder)
    folding.fold_mode = other.fold_mode = "close"
    for n in range(3):
        _commit(folding, n)
    plan = _plan(folding)
    _commit(other, 3)
    assert not other._fold_at_close  # the fold under way takes this record with it
    assert _finish(folding, plan)
    for n in range(4, 7):
        _commit(other, n)
    assert other._fold_at_close  # no claim now: this one asks, as before
    folding.close()
    other.close()


def test_a_fold_made_meanwhile_by_another_process_wins(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folding, other = Store(folder), Store(folder)
    for n in range(4):
        _commit(folding, n)
    plan = _plan(folding)
    other.fold_log()  # folds under the lock, the old way
    _commit(other, 4)
    assert _finish(folding, plan)  # nothing left to do: the plan is dropped
    assert _temps(folder) == []
    assert _file_ids(folder) == ["n00", "n01", "n02", "n03"]
    assert _read_fresh(folder) == [f"n{n:02d}" for n in range(5)]


def test_a_plan_whose_files_an_open_swept_away_falls_back(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folding = Store(folder)
    for n in range(4):
        _commit(folding, n)
    plan = _plan(folding)
    Store(folder).close()  # an open removes temp files no journal names
    assert not _finish(folding, plan)
    assert _read_fresh(folder) == [f"n{n:02d}" for n in range(4)]
    folding.fold_log()
    assert _file_ids(folder) == [f"n{n:02d}" for n in range(4)]
    assert _log_generations(folder) == []
    assert _temps(folder) == []


def test_a_claim_left_by_a_dead_process_is_taken_over_after_a_minute(tmp_path: Path) -> None:
    import os
    import time

    from memwork.core.storage import fold_outside

    folder = tmp_path / "s"
    first, second, plan = _claimed(folder)  # its process dies with the claim taken
    claim = next(p for p in folder.iterdir() if "-plan-" in p.name)
    with second.reading():
        assert second.backend.fold_begin() == NO_FOLD_NEEDED  # a live claim is respected
    old = time.time() - fold_outside.CLAIM_SECONDS - 1
    os.utime(claim, (old, old))
    taken = _plan(second)  # a minute on, the fold is claimed again and prepared
    assert _finish(second, taken)
    assert _file_ids(folder) == ["n00", "n01", "n02"]
    assert _temps(folder) == []


def test_a_log_another_process_folded_away_is_closed_after_the_lock_is_let_go(
    tmp_path: Path,
) -> None:
    """Closing the last descriptor of a replaced log frees its blocks (a millisecond or
    more for a full one): no writer waiting for the lock should wait for that too."""
    folder = tmp_path / "s"
    reader, other = Store(folder), Store(folder)
    with reader.transaction():
        reader.put("notes", "a", {"text": "kept in the first log"})
    with other.transaction():
        other.put("notes", "b", {"text": "folded with it"})
    old = reader.backend._log  # type: ignore[attr-defined]
    assert old is not None
    other.fold_log()  # another process folds: a new store.log replaces the one open here
    with reader.reading():  # reads the new log under the lock
        assert reader.docs("notes").keys() == {"a", "b"}
        assert reader.backend._log is not old  # type: ignore[attr-defined]
        assert old.fd >= 0  # let go of, but not closed while the lock is held
    assert old.fd == -1  # closed once the lock was let go
    with reader.transaction():
        reader.put("notes", "c", {"text": "in the new log"})
    reader.close()
    other.close()
    fresh = Store(folder)
    with fresh.reading():
        assert sorted(fresh.docs("notes")) == ["a", "b", "c"]
    fresh.close()


def _claims(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if "-plan-" in p.name]


def test_a_fold_another_process_claimed_or_made_never_takes_the_lock(tmp_path: Path) -> None:
    """Eight writers' commits ask for the same fold: one claims it before waiting for
    the lock, and the others' folds give up without taking the lock at all."""
    folder = tmp_path / "s"
    late, first = Store(folder), Store(folder)
    for n in range(3):
        _commit(late, n)
    taken: list[str] = []
    acquire = late.backend.acquire

    def counted(wait: bool = True) -> None:
        taken.append("lock")
        acquire(wait)

    late.backend.acquire = counted  # type: ignore[method-assign]
    assert first.backend.fold_wanted()  # claimed, the lock not yet taken
    assert len(_claims(folder)) == 1
    assert late._fold_off_the_lock()  # being folded elsewhere: nothing to do here
    assert taken == []
    assert first._fold_off_the_lock()  # the claim's owner folds, and lets it go
    assert _file_ids(folder) == ["n00", "n01", "n02"]
    assert _claims(folder) == [] and _temps(folder) == []
    assert late._fold_off_the_lock()  # its log was folded away meanwhile
    assert taken == []
    assert _read_fresh(folder) == ["n00", "n01", "n02"]


def test_a_claim_taken_for_a_fold_that_does_not_go_ahead_is_let_go(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    store = Store(folder)
    for n in range(3):
        _commit(store, n)
    with store.transaction():  # a fold asked for inside a transaction waits for its end
        assert not store._fold_off_the_lock()
    assert _claims(folder) == []
    other = Store(folder)  # and another process may claim it at once
    assert other.backend.fold_wanted()
    other.backend.fold_unwanted()
    assert _claims(folder) == []
    store.fold_log()
    assert _file_ids(folder) == ["n00", "n01", "n02"]


def test_records_a_fold_carries_into_the_new_log_are_not_decoded_again(
    tmp_path: Path, monkeypatch: Any
) -> None:
    folder = tmp_path / "s"
    folding, other, reader = Store(folder), Store(folder), Store(folder)
    _commit(folding, 0)
    with reader.reading():
        reader.docs("notes")
    for n in range(1, 5):
        _commit(folding, n)
    plan = _plan(folding)
    for n in range(5, 11):
        _commit(other, n)  # six commits the new log starts with
    with reader.reading():
        assert len(reader.docs("notes")) == 11  # the reader has read all of them already
    assert _finish(folding, plan)
    assert len(_log_generations(folder)) == 6

    decoded: list[int] = []
    real = wal._decode

    def counted(path: Any, data: bytes, start: int, end: int, generation: int) -> Any:
        decoded.append(generation)
        return real(path, data, start, end, generation)

    monkeypatch.setattr(wal, "_decode", counted)
    _commit(folding, 11)
    with reader.reading():
        assert sorted(reader.docs("notes")) == [f"n{n:02d}" for n in range(12)]
    # The first record of the new log (its time is the log's age) and the one commit
    # the reader had not seen: not the five others again.
    assert len(decoded) == 2, decoded
    assert decoded[-1] == max(decoded)
    monkeypatch.undo()
    assert _read_fresh(folder) == [f"n{n:02d}" for n in range(12)]
    for store in (folding, other, reader):
        store.close()
