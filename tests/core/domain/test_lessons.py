"""Lessons: fingerprints, reinforcement, decay, forgetting, near-duplicates, CLI.

Described in docs/MEMORY.md, Lessons.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwork.core.base.clock import iso
from memwork.core.base.errors import Conflict, InvalidInput, NotFound
from memwork.core.base.text import fingerprint
from memwork.core.domain import cards, episodes, lessons
from memwork.core.domain.decay import effective_confidence, is_forgotten, reinforced_confidence
from memwork.core.ledger import audit
from memwork.core.storage.store import Store
from tests.conftest import NOW, folder_digest

ACTOR = "test"
WEEK = timedelta(weeks=1)


def _add(store: Store, text: str, now: datetime, **kw) -> lessons.LessonWrite:
    return lessons.add_lesson(store, text, now=now, actor=ACTOR, **kw)


def _stored(store: Store, lesson_id: str) -> dict:
    with store.reading():
        return store.get("lessons", lesson_id)


def _count(store: Store) -> int:
    with store.reading():
        return len(store.docs("lessons"))


# -- fingerprint and reinforcement ------------------------------------------------------
def test_fingerprint_is_sha256_of_normalised_lower_case() -> None:
    expected = hashlib.sha256(b"check the lock first").hexdigest()
    assert fingerprint("  Check\tthe  LOCK\nfirst ") == expected
    assert fingerprint("check the lock first") == expected


def test_new_lesson_fields(store: Store, now: datetime) -> None:
    result = _add(store, "  Check the lock first ", now, tags=["b", "a", "b"], scope="task:io")
    assert result.action == "created" and result.duplicate_of is None
    doc = _stored(store, result.lesson["id"])
    assert doc["content"] == "Check the lock first"
    assert doc["fingerprint"] == fingerprint("check the lock first")
    assert (doc["confidence"], doc["reinforcements"], doc["decay_rate"]) == (0.5, 0, 0.05)
    assert doc["scope"] == "task:io" and doc["tags"] == ["a", "b"]
    assert doc["last_reinforced_at"] == doc["created_at"] == iso(now)
    assert not doc["pinned"] and not doc["deleted"]


def test_re_adding_reinforces_exactly(store: Store, now: datetime) -> None:
    first = _add(store, "Check the lock first", now).lesson
    later = now + timedelta(days=3)
    again = _add(store, "CHECK  the lock\nfirst", later)
    assert again.action == "reinforced" and again.exact
    assert again.lesson["id"] == first["id"]
    doc = _stored(store, first["id"])
    assert doc["confidence"] == pytest.approx(0.5 + 0.1 * (1 - 0.5)) == 0.55
    assert doc["reinforcements"] == 1
    assert doc["last_reinforced_at"] == iso(later)
    _add(store, "check the lock first", later)
    assert _stored(store, first["id"])["confidence"] == pytest.approx(0.55 + 0.1 * 0.45)
    assert _count(store) == 1


@pytest.mark.parametrize("start", [0.0, 0.3, 0.5, 0.9, 0.99, 1.0])
def test_reinforcement_closes_a_tenth_of_the_gap(start: float) -> None:
    assert reinforced_confidence(start) == pytest.approx(start + 0.1 * (1 - start), abs=1e-12)
    assert 0.0 <= reinforced_confidence(start) <= 1.0


def test_same_text_in_another_scope_is_another_lesson(store: Store, now: datetime) -> None:
    a = _add(store, "Keep PRs small", now).lesson
    b = _add(store, "Keep PRs small", now, scope="task:review")
    assert b.action == "created" and b.lesson["id"] != a["id"]


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"confidence": 1.5}, "confidence"),
        ({"confidence": -0.1}, "confidence"),
        ({"scope": "team:x"}, "scope"),
        ({"on_duplicate": "merge"}, "on_duplicate"),
    ],
)
def test_invalid_lesson_writes_nothing(store: Store, now: datetime, kw: dict, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        _add(store, "x", now, **kw)
    assert caught.value.field == field
    with pytest.raises(InvalidInput, match="content: must not be empty"):
        _add(store, "  ", now)
    assert _count(store) == 0


# -- decay ---------------------------------------------------------------------------------
def _lesson(confidence: float = 0.5, **kw) -> dict:
    return {
        "confidence": confidence,
        "decay_rate": 0.05,
        "last_reinforced_at": iso(NOW),
        "reinforcements": 0,
        **kw,
    }


@pytest.mark.parametrize(
    ("elapsed", "expected"),
    [
        (timedelta(0), 0.5),
        (timedelta(days=6, hours=23), 0.5),
        (timedelta(days=6, hours=23, minutes=59, seconds=59), 0.5),
        (timedelta(days=7), 0.45),
        (timedelta(days=13, hours=23), 0.45),
        (timedelta(days=14), 0.4),
        (timedelta(weeks=5, days=6), 0.25),
        (timedelta(weeks=10), 0.0),
        (timedelta(weeks=100), 0.0),
        (-timedelta(days=30), 0.5),
    ],
)
def test_decay_counts_whole_weeks(elapsed: timedelta, expected: float) -> None:
    assert effective_confidence(_lesson(), NOW + elapsed) == pytest.approx(expected)


def test_decay_through_the_api_with_the_injected_clock(store: Store, now: datetime) -> None:
    lid = _add(store, "Pin versions", now).lesson["id"]
    assert lessons.get_lesson(store, lid, now + timedelta(days=6, hours=23))[
        "effective_confidence"
    ] == pytest.approx(0.5)
    seen = lessons.get_lesson(store, lid, now + 3 * WEEK)
    assert seen["effective_confidence"] == pytest.approx(0.35)
    assert seen["confidence"] == 0.5  # stored confidence never changes in the background
    assert seen["state"] == "fading" and seen["forgotten"] is False


def test_reinforcing_restarts_decay(store: Store, now: datetime) -> None:
    lid = _add(store, "Pin versions", now).lesson["id"]
    later = now + 3 * WEEK
    lessons.reinforce(store, lid, now=later, actor=ACTOR)
    doc = _stored(store, lid)
    assert doc["confidence"] == pytest.approx(0.55) and doc["last_reinforced_at"] == iso(later)
    assert lessons.get_lesson(store, lid, later + WEEK)["effective_confidence"] == pytest.approx(
        0.5
    )


def test_pinned_lessons_do_not_decay(store: Store, now: datetime) -> None:
    lid = _add(store, "Never force-push main", now).lesson["id"]
    lessons.set_pinned(store, lid, True, now=now, actor=ACTOR)
    far = now + 52 * WEEK
    seen = lessons.get_lesson(store, lid, far)
    assert seen["effective_confidence"] == 0.5 and seen["state"] == "pinned"
    assert not seen["forgotten"]
    # Unpinning restarts decay from the moment of unpinning.
    lessons.set_pinned(store, lid, False, now=far, actor=ACTOR)
    assert lessons.get_lesson(store, lid, far + WEEK)["effective_confidence"] == pytest.approx(0.45)


def test_forgotten_at_point_one_when_never_reinforced(store: Store, now: datetime) -> None:
    lid = _add(store, "Old habit", now).lesson["id"]
    assert not lessons.get_lesson(store, lid, now + 7 * WEEK)["forgotten"]  # 0.15
    seen = lessons.get_lesson(store, lid, now + 8 * WEEK)  # 0.10
    assert seen["forgotten"] and seen["state"] == "forgotten"
    assert [x["id"] for x in lessons.list_lessons(store, now + 8 * WEEK)] == []
    everything = lessons.list_lessons(store, now + 8 * WEEK, include_all=True)
    assert [x["id"] for x in everything] == [lid]
    # Restorable: it comes back and decays anew from the restore.
    restored = lessons.restore(store, lid, now=now + 8 * WEEK, actor=ACTOR)
    assert not restored["forgotten"] and restored["effective_confidence"] == 0.5
    assert lessons.get_lesson(store, lid, now + 9 * WEEK)["effective_confidence"] == 0.45


def test_a_reinforced_lesson_is_never_forgotten_by_decay(store: Store, now: datetime) -> None:
    lid = _add(store, "Old habit", now).lesson["id"]
    lessons.reinforce(store, lid, now=now, actor=ACTOR)
    seen = lessons.get_lesson(store, lid, now + 50 * WEEK)
    assert seen["effective_confidence"] == 0.0 and not seen["forgotten"]
    assert [x["id"] for x in lessons.list_lessons(store, now + 50 * WEEK)] == [lid]


def test_weaken(store: Store, now: datetime) -> None:
    lid = _add(store, "Maybe cache", now, confidence=0.25).lesson["id"]
    assert lessons.weaken(store, lid, now=now, actor=ACTOR)["confidence"] == pytest.approx(0.15)
    weakened = lessons.weaken(store, lid, now=now, actor=ACTOR)
    assert weakened["confidence"] == pytest.approx(0.05) and weakened["forgotten"]
    assert lessons.weaken(store, lid, now=now, actor=ACTOR)["confidence"] == 0.0


def test_forget_and_restore(store: Store, now: datetime) -> None:
    lid = _add(store, "Use tabs", now).lesson["id"]
    forgotten = lessons.forget(store, lid, now=now, actor=ACTOR)
    assert forgotten["deleted"] and forgotten["forgotten"] and forgotten["state"] == "deleted"
    assert lessons.list_lessons(store, now) == []
    with pytest.raises(Conflict):
        lessons.forget(store, lid, now=now, actor=ACTOR)
    restored = lessons.restore(store, lid, now=now, actor=ACTOR)
    assert not restored["deleted"] and not restored["forgotten"]
    with pytest.raises(Conflict):
        lessons.restore(store, lid, now=now, actor=ACTOR)
    with store.reading():
        actions = [e["action"] for e in audit.entries(store, newest_first=False)]
    assert actions == ["add", "forget", "restore"]


def test_unforget_undoes_a_forget_without_restarting_the_decay_clock(
    store: Store, now: datetime
) -> None:
    lid = _add(store, "Use tabs", now).lesson["id"]
    before = lessons.get_lesson(store, lid, now)
    later = now + timedelta(days=10)
    lessons.forget(store, lid, now=later, actor=ACTOR)
    back = lessons.unforget(store, lid, now=later + timedelta(minutes=1), actor=ACTOR)
    # As it was: the same confidence, the same decay clock (not "reinforced just now").
    assert not back["deleted"] and not back["forgotten"]
    assert back["confidence"] == before["confidence"]
    assert back["last_reinforced_at"] == before["last_reinforced_at"]
    assert back["effective_confidence"] == effective_confidence(before, later)
    with pytest.raises(Conflict):  # live: nothing to undo
        lessons.unforget(store, lid, now=later, actor=ACTOR)
    with store.reading():
        actions = [e["action"] for e in audit.entries(store, newest_first=False)]
    assert actions == ["add", "forget", "unforget"]


def test_re_adding_a_forgotten_lesson_brings_it_back(store: Store, now: datetime) -> None:
    lid = _add(store, "Use tabs", now).lesson["id"]
    lessons.forget(store, lid, now=now, actor=ACTOR)
    again = _add(store, "use tabs", now)
    assert again.lesson["id"] == lid and again.action == "reinforced"
    assert not lessons.get_lesson(store, lid, now)["forgotten"]


def test_unknown_ids(store: Store, now: datetime) -> None:
    with pytest.raises(NotFound):
        lessons.reinforce(store, "les_nope", now=now, actor=ACTOR)
    with pytest.raises(NotFound):
        lessons.get_lesson(store, "les_nope", now)


# -- near-duplicates ------------------------------------------------------------------
def test_a_near_duplicate_is_kept_as_its_own_lesson_by_default(store: Store, now: datetime) -> None:
    old = _add(store, "Retry failed uploads", now).lesson
    result = _add(store, "Retry failed uploads at most three times", now + WEEK)
    assert result.action == "kept-both" and result.lesson["id"] != old["id"]
    assert result.near_duplicate_of == old["id"] and result.similarity == 100
    assert _stored(store, old["id"])["reinforcements"] == 0
    assert _count(store) == 2


def test_a_near_duplicate_reinforces_on_request_and_keeps_the_wording(
    store: Store, now: datetime
) -> None:
    old = _add(store, "Always run the tests before pushing", now).lesson
    result = _add(
        store, "always run tests before pushing", now + WEEK, tags=["ci"], on_duplicate="reinforce"
    )
    assert result.action == "reinforced" and not result.exact
    assert result.duplicate_of == old["id"] and result.similarity >= 90
    doc = _stored(store, old["id"])
    assert doc["content"] == "Always run the tests before pushing"
    assert doc["wordings"] == ["always run tests before pushing"]
    assert doc["confidence"] == pytest.approx(0.55) and doc["reinforcements"] == 1
    assert doc["tags"] == ["ci"]
    assert _count(store) == 1


def test_a_merge_lists_each_other_wording_once(store: Store, now: datetime) -> None:
    keep = _add(store, "Always run the tests before pushing", now).lesson
    # The keeper already holds this wording; a second lesson says it again, word for word.
    _add(store, "always run tests before pushing", now, on_duplicate="reinforce")
    other = _add(store, "Always run tests before pushing", now, on_duplicate="keep-both").lesson
    assert other["id"] != keep["id"]
    merged = lessons.merge_lessons(store, keep["id"], [other["id"]], now=now, actor=ACTOR)
    assert merged["wordings"] == ["always run tests before pushing"]
    # The relation is a link (merged_into), read into the lesson's superseded_by.
    assert lessons.get_lesson(store, other["id"], now)["superseded_by"] == keep["id"]
    assert "superseded_by" not in _stored(store, other["id"])


def test_below_ninety_is_not_a_near_duplicate(store: Store, now: datetime) -> None:
    _add(store, "Always run the tests before pushing", now)
    assert _add(store, "Run the tests before you push", now).action == "created"  # ~82
    assert _count(store) == 2


def test_near_duplicates_only_within_the_same_scope(store: Store, now: datetime) -> None:
    _add(store, "Always run the tests before pushing", now, scope="task:a")
    result = _add(store, "always run tests before pushing", now, scope="task:b")
    assert result.action == "created" and result.duplicate_of is None


def test_forgotten_lessons_are_not_near_duplicates(store: Store, now: datetime) -> None:
    lid = _add(store, "Always run the tests before pushing", now).lesson["id"]
    lessons.forget(store, lid, now=now, actor=ACTOR)
    assert _add(store, "always run tests before pushing", now).action == "created"


def test_supersede(store: Store, now: datetime) -> None:
    old = _add(store, "Prefer rg over grep for code search", now, confidence=0.8).lesson
    lessons.reinforce(store, old["id"], now=now, actor=ACTOR)  # 0.82
    result = _add(store, "Prefer ripgrep over grep for code search", now, on_duplicate="supersede")
    assert result.action == "superseded" and result.duplicate_of == old["id"]
    new = _stored(store, result.lesson["id"])
    assert new["content"] == "Prefer ripgrep over grep for code search"
    assert new["confidence"] == pytest.approx(0.82) and new["reinforcements"] == 1
    assert lessons.get_lesson(store, new["id"], now)["supersedes"] == old["id"]
    assert lessons.get_lesson(store, old["id"], now)["superseded_by"] == new["id"]
    assert result.lesson["supersedes"] == old["id"]
    assert [x["id"] for x in lessons.list_lessons(store, now)] == [new["id"]]
    states = {x["id"]: x["state"] for x in lessons.list_lessons(store, now, include_all=True)}
    assert states == {old["id"]: "superseded", new["id"]: "live"}


def test_re_adding_superseded_text_reinforces_the_successor(store: Store, now: datetime) -> None:
    old = _add(store, "Prefer rg over grep for code search", now).lesson
    new = _add(
        store, "Prefer ripgrep over grep for code search", now, on_duplicate="supersede"
    ).lesson
    again = _add(store, "prefer rg over grep for code search", now)
    assert again.action == "reinforced" and again.lesson["id"] == new["id"]
    assert _stored(store, new["id"])["confidence"] == pytest.approx(0.55)
    assert _stored(store, old["id"])["confidence"] == 0.5
    assert [x["id"] for x in lessons.list_lessons(store, now)] == [new["id"]]


def test_keep_both(store: Store, now: datetime) -> None:
    old = _add(store, "Prefer rg over grep for code search", now).lesson
    result = _add(store, "Prefer ripgrep over grep for code search", now, on_duplicate="keep-both")
    assert result.action == "kept-both" and result.duplicate_of == old["id"]
    assert result.lesson["id"] != old["id"]
    assert len(lessons.list_lessons(store, now)) == 2
    assert _stored(store, old["id"])["confidence"] == 0.5


# -- CLI ---------------------------------------------------------------------------------
T0 = "2026-11-01T12:00:00Z"


def test_cli_add_prints_the_id_and_reports_reinforcement(cli) -> None:  # noqa: ANN001
    done = cli("lesson", "add", "Always run the tests before pushing", now=T0)
    assert done.code == 0 and done.err == "" and done.out.startswith("les_")
    lid = done.out.strip()
    again = cli("lesson", "add", "always run the tests  before pushing")
    assert again.out.strip() == lid
    assert again.err == f"already known: reinforced {lid} (confidence 0.55)\n"
    asked = ("--on-duplicate", "reinforce")
    near = cli("lesson", "add", "always run tests before pushing", *asked)
    assert near.code == 0 and near.out.strip() == lid
    assert near.err.startswith(f"near-duplicate of {lid} (similarity 100): reinforced it")
    assert near.err.count("\n") == 1
    keep = cli("lesson", "add", "always run tests before pushing")
    assert keep.out.strip() != lid
    assert keep.err.startswith(f"near-duplicate of {lid} (similarity 100): kept as a lesson")


def test_cli_list_hides_forgotten_and_deleted_unless_all(cli) -> None:  # noqa: ANN001
    live = cli("lesson", "add", "Keep functions short", now=T0).out.strip()
    gone = cli("lesson", "add", "Use global state", now=T0).out.strip()
    faded = cli("lesson", "add", "Tabs not spaces", "--confidence", "0.3", now=T0).out.strip()
    assert cli("lesson", "forget", gone).code == 0
    rows = cli("lesson", "list", "--json", now="2026-11-29T12:00:00Z").json()  # 4 weeks
    assert isinstance(rows, list)
    assert [r["id"] for r in rows] == [live]
    assert rows[0]["effective_confidence"] == pytest.approx(0.3)
    assert rows[0]["forgotten"] is False
    everything = cli("lesson", "list", "--all", "--json").json()
    assert {r["id"]: r["forgotten"] for r in everything} == {
        live: False,
        gone: True,
        faded: True,
    }
    text = cli("lesson", "list").out.splitlines()
    assert len(text) == 1 and text[0].startswith(live) and "0.30" in text[0]
    text = cli("lesson", "list", "--all").out
    assert "deleted" in text and "forgotten" in text


def test_cli_lesson_verbs(cli) -> None:  # noqa: ANN001
    lid = cli("lesson", "add", "Read the error first", now=T0).out.strip()
    shown = cli("lesson", "show", lid, "--json").json()
    assert shown["id"] == lid and shown["effective_confidence"] == 0.5
    assert {"effective_confidence", "forgotten", "state"} <= set(shown)
    assert cli("lesson", "reinforce", lid, "--json").json()["confidence"] == pytest.approx(0.55)
    assert cli("lesson", "weaken", lid, "--json").json()["confidence"] == pytest.approx(0.45)
    assert cli("lesson", "pin", lid, "--json").json()["pinned"] is True
    assert cli("lesson", "unpin", lid, "--json").json()["pinned"] is False
    assert cli("lesson", "forget", lid, "--json").json()["forgotten"] is True
    assert cli("lesson", "restore", lid, "--json").json()["forgotten"] is False
    text = cli("lesson", "show", lid)
    assert text.code == 0 and "content: Read the error first" in text.out


def test_cli_lesson_forget_says_it_is_soft_and_how_to_undo_it(cli) -> None:  # noqa: ANN001
    lid = cli("lesson", "add", "Read the error first", now=T0).out.strip()
    done = cli("lesson", "forget", lid)
    assert done.code == 0
    assert done.out.rstrip().endswith(" forgotten") and "deleted" not in done.out
    assert done.err == (
        f"forgot {lid}: hidden from lists, search and the context, but kept; "
        f"`memwork lesson restore {lid}` brings it back\n"
    )
    assert cli("lesson", "restore", lid).code == 0


def test_cli_lesson_errors_are_exit_2_and_write_nothing(cli, db: Path) -> None:  # noqa: ANN001
    lid = cli("lesson", "add", "x").out.strip()
    before = folder_digest(db)
    for args in (
        ("lesson", "show", "les_missing"),
        ("lesson", "restore", lid),
        ("lesson", "add", "y", "--confidence", "2"),
        ("lesson", "add", "y", "--scope", "nowhere"),
    ):
        done = cli(*args)
        assert done.code == 2, args
        assert done.out == "" and done.err.startswith("memwork: ") and done.err.count("\n") == 1
    assert folder_digest(db) == before


def test_cli_decay_follows_memwork_now(cli) -> None:  # noqa: ANN001
    lid = cli("lesson", "add", "decays", now="2026-01-01T00:00:00Z").out.strip()
    week = cli("lesson", "show", lid, "--json", now="2026-01-07T23:00:00Z").json()
    assert week["effective_confidence"] == 0.5
    assert cli("lesson", "show", lid, "--json", now="2026-01-08T00:00:00Z").json()[
        "effective_confidence"
    ] == pytest.approx(0.45)


def test_cli_restore_brings_a_lesson_stored_at_the_threshold_back_to_life(cli) -> None:  # noqa: ANN001
    lid = cli("lesson", "add", "Cache the wheels", "--confidence", "0.1", now=T0).out.strip()
    assert cli("lesson", "list", "--json", now=T0).json() == []
    done = cli("lesson", "restore", lid, "--json", now="2026-11-08T12:00:00Z")
    assert done.code == 0, done.err
    restored = done.json()
    assert restored["forgotten"] is False and restored["state"] == "live"
    assert restored["confidence"] == lessons.RESTORED_CONFIDENCE == 0.3
    assert restored["restored_from"] == 0.1
    assert restored["last_reinforced_at"] == "2026-11-08T12:00:00.000000Z"
    assert done.err == (
        f"restored {lid}: live at confidence 0.30 (raised from 0.10); its decay starts again now\n"
    )
    rows = cli("lesson", "list", "--json", now="2026-11-08T12:00:00Z").json()
    assert [r["id"] for r in rows] == [lid]
    # It decays from the restore: still live three weeks later, forgotten after four.
    assert (
        cli("lesson", "show", lid, "--json", now="2026-11-29T12:00:00Z").json()["forgotten"]
        is False
    )
    assert cli("lesson", "show", lid, "--json", now="2026-12-06T12:00:00Z").json()["forgotten"]


def test_cli_restore_keeps_a_higher_confidence_and_says_so(cli) -> None:  # noqa: ANN001
    lid = cli("lesson", "add", "Read the logs", "--confidence", "0.8", now=T0).out.strip()
    cli("lesson", "forget", lid)
    done = cli("lesson", "restore", lid, now="2026-11-15T12:00:00Z")
    assert done.code == 0 and done.out.startswith(f"{lid}  0.80")
    assert done.err == f"restored {lid}: live at confidence 0.80; its decay starts again now\n"


def test_restore_after_weakening_below_the_threshold(store: Store, now: datetime) -> None:
    lid = _add(store, "Maybe cache", now, confidence=0.2).lesson["id"]
    lessons.weaken(store, lid, now=now, actor=ACTOR)
    assert lessons.get_lesson(store, lid, now)["forgotten"]
    restored = lessons.restore(store, lid, now=now, actor=ACTOR)
    assert not restored["forgotten"] and restored["confidence"] == 0.3
    assert restored["restored_from"] == pytest.approx(0.1)


def test_cli_add_at_the_threshold_says_the_lesson_starts_forgotten(cli) -> None:  # noqa: ANN001
    done = cli("lesson", "add", "Maybe use tabs", "--confidence", "0.1", "--json", now=T0)
    assert done.code == 0
    added = done.json()
    assert added["starts_forgotten"] is True and added["forgotten"] is True
    assert added["action"] == "created" and added["confidence"] == 0.1
    assert done.err == (
        f"{added['id']} starts forgotten: confidence 0.10 is at or below the forget threshold "
        "(0.1); it is kept but hidden until reinforced or restored\n"
    )
    listed = cli("lesson", "list", "--all", "--json").json()
    assert [r["id"] for r in listed] == [added["id"]]
    plain = cli("lesson", "add", "Use spaces", "--confidence", "0.11", "--json", now=T0)
    assert plain.err == "" and plain.json()["starts_forgotten"] is False


# -- properties -------------------------------------------------------------------------
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.floats(min_value=0, max_value=1),
    ops=st.lists(st.sampled_from(["reinforce", "weaken"]), max_size=30),
)
def test_confidence_stays_in_zero_one(start: float, ops: list[str]) -> None:
    store = Store.in_memory()
    lid = _add(store, "lesson", NOW, confidence=start).lesson["id"]
    for op in ops:
        fn = lessons.reinforce if op == "reinforce" else lessons.weaken
        seen = fn(store, lid, now=NOW, actor=ACTOR)
        assert 0.0 <= seen["confidence"] <= 1.0
        assert 0.0 <= seen["effective_confidence"] <= 1.0


@settings(max_examples=200, deadline=None)
@given(
    confidence=st.floats(min_value=0, max_value=1),
    rate=st.floats(min_value=0, max_value=1),
    pinned=st.booleans(),
    offsets=st.lists(st.integers(min_value=-(10**7), max_value=10**9), min_size=2, max_size=8),
)
def test_effective_confidence_never_rises_with_time(
    confidence: float, rate: float, pinned: bool, offsets: list[int]
) -> None:
    lesson = _lesson(confidence, decay_rate=rate, pinned=pinned)
    values = [effective_confidence(lesson, NOW + timedelta(seconds=s)) for s in sorted(offsets)]
    assert all(a >= b for a, b in zip(values, values[1:], strict=False))
    assert all(0.0 <= v <= confidence + 1e-9 for v in values)
    # Forgetting, like decay, only ever moves one way.
    flags = [is_forgotten(lesson, NOW + timedelta(seconds=s)) for s in sorted(offsets)]
    assert flags == sorted(flags)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=st.integers(min_value=1, max_value=4), second=st.integers(min_value=1, max_value=4))
def test_a_card_merge_counted_twice_counts_twice(first: int, second: int) -> None:
    """Every sighting counts, however it arrives; merging two cards adds their counts."""
    store = Store.in_memory()
    now = datetime(2026, 11, 1, tzinfo=UTC)
    card_a = {"mistake_type": "a", "correct_decision": "x"}
    card_b = {"mistake_type": "b"}
    items = [{"score": 0.2, "mistake_cards": [card_a]} for _ in range(first)]
    items.append({"score": 0.2, "mistake_cards": [card_b] * second})
    episodes.record_episodes(store, items, now=now, actor=ACTOR)
    with store.reading():
        by_type = {c["mistake_type"]: c for c in cards.all_cards(store)}
    assert by_type["a"]["seen_count"] == first and by_type["b"]["seen_count"] == second
    merged = cards.merge_cards(store, by_type["a"]["id"], by_type["b"]["id"], now=now, actor=ACTOR)
    assert merged["seen_count"] == first + second
    # The same card reported again still counts once more.
    episodes.record_episodes(
        store, [{"score": 0.2, "mistake_cards": [card_a, card_a]}], now=now, actor=ACTOR
    )
    with store.reading():
        (card,) = cards.all_cards(store)
    assert card["seen_count"] == first + second + 2


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("confidence", "high", "confidence: must be a number (got 'high')"),
        ("fingerprint", None, "fingerprint: is missing"),
        ("tags", "ops", "tags: must be a list of strings (got 'ops')"),
    ],
    ids=["confidence-high", "fingerprint-missing", "tags-text"],
)
def test_a_wrong_typed_lesson_is_named_and_left_out_of_every_answer(
    cli, db: Path, field: str, value: object, rule: str
) -> None:  # noqa: ANN001
    import json

    from tests.conftest import folded, resealed

    bad = cli("lesson", "add", "Canary every deploy for fifteen minutes").out.strip()
    good = cli("lesson", "add", "Pin dependency versions in the lockfile").out.strip()
    path = folded(db) / "lessons.json"
    data = json.loads(path.read_text())
    if value is None:
        del data["documents"][bad][field]
    else:
        data["documents"][bad][field] = value
    path.write_text(json.dumps(data))
    resealed(path)  # planted by hand: not damage
    said = f"memwork: lessons: record '{bad}': {rule}; left out (memwork doctor names it)\n"
    for args in (
        ("context",),
        ("lesson", "list"),
        ("--json", "lesson", "list"),
        ("search", "canary deploy"),
        ("lesson", "add", "Canary every deploy for fifteen minutes please"),
        ("lesson", "add", "Write the runbook before the deploy"),
    ):
        done = cli(*args)
        assert done.code == 0, (args, done.err)
        assert done.err in ("", said), (args, done.err)  # once per process at most
        assert bad not in done.out and "Canary every deploy for fifteen minutes\n" not in done.out
    assert "Pin dependency versions" in cli("context").out
    assert cli("lesson", "show", good).code == 0
    # A field an older memwork did not write is read with its default.
    data = json.loads(folded(db).joinpath("lessons.json").read_text())
    del data["documents"][good]["wordings"]
    path.write_text(json.dumps(data))
    resealed(path)  # planted by hand: not damage
    assert cli("--json", "lesson", "show", good).json()["wordings"] == []
    # Nothing is lost: the record stays as it was for a person to correct; doctor names it.
    folded(db)
    kept = json.loads(path.read_text())["documents"][bad]
    assert kept.get(field) == value
    if value is not None:  # a field of the wrong kind (doctor reads a missing one as absent)
        doctor = cli("doctor")
        assert doctor.code == 1 and bad in doctor.out
