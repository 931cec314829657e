"""The clock rules as properties: skewed writers never hide a failure a reader should
see, and never weaken a lesson by reinforcing it.

Described in docs/MEMORY.md, Failure memory and Lessons. The failure examples record
through the aggregate's own function (:func:`core.domain.failures.add_to_recent`, what every
recording runs) with writers whose clocks are skewed, then compare what a reader sees
with what it would see if every failure had been kept.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memwork.core.base.clock import iso
from memwork.core.domain import failures, lessons
from memwork.core.domain.decay import effective_confidence
from memwork.core.storage.store import Store

T = datetime(2026, 11, 1, 12, tzinfo=UTC)
#: Writers within this of the reader's clock: the near band minus the reader's lead.
CLOSE = failures.NEAR - failures.AHEAD - timedelta(minutes=1)


def _ideal(all_failures: list[dict], reader: datetime) -> list[str]:
    """The block if nothing had ever been dropped."""
    return failures.lines_for_context(all_failures, reader)


def _record(writes: list[tuple[datetime, datetime]]) -> tuple[list[dict], list[dict]]:
    """(what the aggregate keeps, every failure) after each (writer clock, stamp)."""
    kept: list[dict] = []
    every: list[dict] = []
    for index, (clock, stamp) in enumerate(writes, start=1):
        failure = {
            "episode_id": f"ep{index}",
            "errors": [{"error_type": f"E{index}", "message": ""}],
            "index": index,
            "recorded_at": iso(stamp),
            "task_id": "t",
        }
        every.append(failure)
        kept = failures.add_to_recent(kept, failure, clock)
    return kept, every


def _bursts(skew: timedelta, stamp_spread: timedelta) -> st.SearchStrategy:
    """Bursts of failures: a writer clock (within ``skew`` of T), how many, and how each
    is stamped (the writer's clock, or a ``recorded_at`` up to ``stamp_spread`` away)."""
    minutes = int(skew / timedelta(minutes=1))
    spread = int(stamp_spread / timedelta(seconds=1))
    return st.lists(
        st.tuples(
            st.integers(-minutes, minutes),  # writer clock, minutes from T
            st.integers(1, 80),  # failures in the burst
            st.sampled_from([0, 1, 20, 60, 3600]),  # seconds between their stamps
            st.one_of(st.just(0), st.integers(-spread, spread)),  # recorded_at offset
        ),
        min_size=1,
        max_size=6,
    )


def _writes(bursts: list[tuple[int, int, int, int]]) -> list[tuple[datetime, datetime]]:
    out = []
    for clock_minutes, count, step, offset in bursts:
        clock = T + timedelta(minutes=clock_minutes)
        for n in range(count):
            out.append((clock, clock + timedelta(seconds=offset + n * step)))
    return out


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    bursts=_bursts(CLOSE, timedelta(days=3)),
    reader_minutes=st.integers(0, 60),
    reader_seconds=st.integers(0, 59),
)
def test_writers_within_six_hours_never_hide_a_failure_whatever_their_number_or_stamps(
    bursts: list[tuple[int, int, int, int]], reader_minutes: int, reader_seconds: int
) -> None:
    # The reader's clock is T plus a little; every writer is within CLOSE of it.
    reader = T + timedelta(seconds=reader_seconds)
    writes = [
        (max(min(c, reader + CLOSE), reader - CLOSE), s)
        for c, s in _writes(bursts)
        for c in [c + timedelta(minutes=reader_minutes) - timedelta(minutes=30)]
    ]
    kept, every = _record(writes)
    assert failures.lines_for_context(kept, reader) == _ideal(every, reader)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    bursts=st.lists(
        st.tuples(
            st.integers(-5 * 24 * 60, 5 * 24 * 60),  # a writer up to five days off
            st.integers(1, 60),
            st.sampled_from([0, 0, 1, 30]),  # the same minute, or a minute or two
            st.just(0),
        ),
        min_size=1,
        max_size=4,
    ),
    reader_minutes=st.integers(-5 * 24 * 60, 5 * 24 * 60),
)
def test_any_skew_hides_nothing_while_few_minutes_hold_failures(
    bursts: list[tuple[int, int, int, int]], reader_minutes: int
) -> None:
    # However far off the clocks are, a burst in one minute or two (any number of
    # failures) never takes the place of a failure in the reader's window, while few
    # minutes hold failures: beyond a writer's near band only KEEP minutes on each side
    # are kept, so more than KEEP of them (bursts spread over half an hour each, say)
    # leave that promise to writers within NEAR of the reader.
    writes = _writes(bursts)
    assume(len({iso(stamp)[:16] for _, stamp in writes}) <= failures.KEEP)
    kept, every = _record(writes)
    reader = T + timedelta(minutes=reader_minutes)
    assert failures.lines_for_context(kept, reader) == _ideal(every, reader)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ahead_hours=st.integers(1, 5),
    real_minutes_before=st.integers(1, 23 * 60),
    count=st.integers(1, 400),
    step=st.sampled_from([0, 1, 60]),
)
def test_future_stamped_failures_never_hide_one_inside_the_window(
    ahead_hours: int, real_minutes_before: int, count: int, step: int
) -> None:
    # A real failure, then any number from a writer whose clock runs hours ahead (the
    # clock moving on as they come in), then a reader at the true time.
    real = T - timedelta(minutes=real_minutes_before)
    ahead = T + timedelta(hours=ahead_hours)
    writes = [(real, real)]
    writes += [(ahead + timedelta(seconds=n * step),) * 2 for n in range(count)]
    kept, every = _record(writes)
    assert failures.lines_for_context(kept, T) == ["- E1"]
    assert _ideal(every, T) == ["- E1"]


# -- reinforcement never lowers confidence -------------------------------------------------
def _reinforce_by(way: str, store: Store, lesson_id: str, when: datetime) -> None:
    if way == "reinforce":
        lessons.reinforce(store, lesson_id, now=when, actor="test")
    elif way == "same words":
        lessons.add_lesson(store, "  pin the BASE image ", now=when, actor="test")
    elif way == "near-duplicate":
        lessons.add_lesson(
            store, "Pin the base image digest", now=when, actor="test", on_duplicate="reinforce"
        )
    else:
        lessons.reinforce_with(store, lesson_id, "Pin base images", now=when, actor="test")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(
        st.tuples(
            st.integers(-90 * 24, 90 * 24),  # the reinforcing clock, hours from T
            st.sampled_from(["reinforce", "same words", "near-duplicate", "wording"]),
        ),
        min_size=1,
        max_size=6,
    ),
    created_hours=st.integers(-90 * 24, 90 * 24),
    readers=st.lists(st.integers(-120, 240), min_size=1, max_size=5),  # days from T
)
def test_reinforcing_never_lowers_effective_confidence_whatever_the_clock(
    steps: list[tuple[int, str]], created_hours: int, readers: list[int]
) -> None:
    store = Store.in_memory()
    made = lessons.add_lesson(
        store, "Pin the base image", now=T + timedelta(hours=created_hours), actor="test"
    ).lesson
    for hours, way in steps:
        with store.reading():
            before = dict(store.docs("lessons")[made["id"]])
        _reinforce_by(way, store, made["id"], T + timedelta(hours=hours))
        with store.reading():
            after = dict(store.docs("lessons")[made["id"]])
        assert after["last_reinforced_at"] >= before["last_reinforced_at"]
        for days in readers:
            reader = T + timedelta(days=days)
            assert effective_confidence(after, reader) >= effective_confidence(before, reader)
