"""The "Past failures to avoid" block through the CLI: clock skew, every error,
lines that say something. The clock is MEMWORK_NOW throughout.

Described in docs/MEMORY.md, Failure memory.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from memwork.core.base.clock import iso
from memwork.core.domain import failures

T = datetime(2026, 11, 1, 12, tzinfo=UTC)


def _at(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _failure(error_type: str, message: str = "m", **extra: object) -> dict:
    return {"score": 0.1, "errors": [{"error_type": error_type, "message": message}], **extra}


def _block(cli, moment: datetime) -> list[str]:  # noqa: ANN001
    out = cli("context", now=_at(moment)).out
    lines = out.splitlines()
    if not lines:
        return []
    assert lines[0] == "## Past failures to avoid", out
    return lines[1:]


# -- clock skew --------------------------------------------------------------------------
def test_failures_from_a_clock_that_ran_ahead_do_not_hide_one_recorded_now(cli) -> None:  # noqa: ANN001
    ahead = T + timedelta(days=3)
    batch = [_failure(f"Ahead{n}") for n in range(50)]
    assert cli("record-episode", stdin=json.dumps(batch), now=_at(ahead)).code == 0
    # The clock goes back to the true time; a real failure happens.
    assert cli("record-episode", stdin=json.dumps(_failure("Now")), now=_at(T)).code == 0
    assert _block(cli, T + timedelta(minutes=1)) == ["- Now: m"]
    # When the clock reaches the future stamps, they show, newest first.
    assert _block(cli, ahead) == ["- Ahead49: m", "- Ahead48: m", "- Ahead47: m"]


def test_future_recorded_at_stamps_do_not_hide_failures_inside_the_window(cli) -> None:  # noqa: ANN001
    batch = [_failure(f"Future{n}", recorded_at=_at(T + timedelta(hours=1 + n))) for n in range(60)]
    assert cli("record-episode", stdin=json.dumps(batch), now=_at(T)).code == 0
    older = [_failure("TwoHoursAgo", recorded_at=_at(T - timedelta(hours=2)))]
    assert cli("record-episode", stdin=json.dumps(older), now=_at(T)).code == 0
    assert cli("record-episode", stdin=json.dumps(_failure("Now")), now=_at(T)).code == 0
    assert _block(cli, T) == ["- Now: m", "- TwoHoursAgo: m"]
    # The earliest future stamps come due first as the clock moves on.
    assert _block(cli, T + timedelta(hours=2)) == [
        "- Future1: m",
        "- Future0: m",
        "- Now: m",
    ]


@pytest.mark.slow
def test_a_failure_recorded_before_the_clock_ran_ahead_survives_it(cli) -> None:  # noqa: ANN001
    assert cli("record-episode", stdin=json.dumps(_failure("Real")), now=_at(T)).code == 0
    ahead = T + timedelta(days=365)
    for n in range(60):
        body = json.dumps(_failure(f"Ahead{n}"))
        assert cli("record-episode", stdin=body, now=_at(ahead + timedelta(seconds=n))).code == 0
    # The clock is put right again: the real failure is still inside its window.
    assert _block(cli, T + timedelta(hours=1)) == ["- Real: m"]


def test_the_window_reaches_five_minutes_ahead_to_the_end_of_that_minute(cli) -> None:  # noqa: ANN001
    stamps = {
        "InASecond": T + timedelta(seconds=1),
        "FiveAndAHalf": T + timedelta(minutes=5, seconds=30),
        "Six": T + timedelta(minutes=6),
    }
    batch = [_failure(name, recorded_at=_at(at)) for name, at in stamps.items()]
    assert cli("record-episode", stdin=json.dumps(batch), now=_at(T)).code == 0
    assert _block(cli, T) == ["- FiveAndAHalf: m", "- InASecond: m"]
    assert _block(cli, T - timedelta(seconds=2)) == ["- InASecond: m"]
    later = ["- Six: m", "- FiveAndAHalf: m", "- InASecond: m"]
    assert _block(cli, T + timedelta(minutes=1)) == later


def test_newest_first_by_recorded_stamp_not_by_recording_order(cli) -> None:  # noqa: ANN001
    for hours, name in ((3, "Third"), (1, "First"), (2, "Second")):
        body = json.dumps(_failure(name, recorded_at=_at(T - timedelta(hours=hours))))
        assert cli("record-episode", stdin=body, now=_at(T)).code == 0
    assert _block(cli, T) == ["- First: m", "- Second: m", "- Third: m"]


@pytest.mark.slow
def test_kept_failures_stay_bounded_under_skew() -> None:
    kept: list[dict] = []
    for n in range(3000):
        stamp = T + timedelta(minutes=(n * 37) % 6000 - 3000, seconds=n % 60)
        failure = {"episode_id": f"e{n}", "errors": [], "index": n + 1, "recorded_at": iso(stamp)}
        kept = failures.add_to_recent(kept, failure, T)
    minutes = 2 * failures.NEAR // timedelta(minutes=1) + 1 + 2 * failures.KEEP
    assert len(kept) <= failures.PER_MINUTE * minutes
    assert len({f["recorded_at"][:16] for f in kept}) <= minutes


def test_a_crash_seen_again_replaces_its_kept_failure() -> None:
    first = {"episode_id": "e1", "errors": [], "index": 1, "recorded_at": iso(T)}
    again = {**first, "recorded_at": iso(T + timedelta(minutes=3)), "count": 2}
    kept = failures.add_to_recent([first], again, T)
    assert kept == [again]


# -- one line per error ------------------------------------------------------------------
def test_every_error_of_a_failed_episode_gets_a_line(cli) -> None:  # noqa: ANN001
    body = {
        "score": 0.2,
        "errors": [
            {"error_type": "E1", "message": "first"},
            {"error_type": "E2", "message": "second"},
            {"error_type": "E3", "message": "third"},
        ],
    }
    assert cli("record-episode", stdin=json.dumps(body), now=_at(T)).code == 0
    assert _block(cli, T) == ["- E1: first", "- E2: second", "- E3: third"]


def test_newest_episode_first_and_three_lines_in_all(cli) -> None:  # noqa: ANN001
    older = {
        "score": 0.2,
        "recorded_at": _at(T - timedelta(hours=1)),
        "errors": [{"error_type": "Old1", "message": "a"}, {"error_type": "Old2", "message": "b"}],
    }
    newer = {
        "score": 0.2,
        "errors": [{"error_type": "New1", "message": "c"}, {"error_type": "New2", "message": "d"}],
    }
    assert cli("record-episode", stdin=json.dumps([older, newer]), now=_at(T)).code == 0
    assert _block(cli, T) == ["- New1: c", "- New2: d", "- Old1: a"]


# -- the synthesised line ---------------------------------------------------------------
def test_a_failure_without_errors_shows_its_summary_and_first_mistake(cli) -> None:  # noqa: ANN001
    body = {
        "score": 0.4,
        "steps": 12,
        "summary": "migration left the schema half-applied",
        "mistakes": ["ran the migration without a backup", "ignored the lock warning"],
    }
    assert cli("record-episode", stdin=json.dumps(body), now=_at(T)).code == 0
    assert _block(cli, T) == [
        "- IterationError: migration left the schema half-applied; "
        "mistake: ran the migration without a backup"
    ]


def test_phase_and_exit_code_still_lead_when_given(cli) -> None:  # noqa: ANN001
    body = {"score": 0.4, "summary": "s", "mistakes": ["m"], "phase": "deploy", "exit_code": 3}
    assert cli("record-episode", stdin=json.dumps(body), now=_at(T)).code == 0
    assert _block(cli, T) == ["- IterationError: phase=deploy; exit=3"]


def test_a_long_summary_and_mistake_give_a_line_within_160(cli) -> None:  # noqa: ANN001
    body = {"score": 0.1, "summary": "step failed " * 40, "mistakes": ["trace " * 3000]}
    assert cli("record-episode", stdin=json.dumps(body), now=_at(T)).code == 0
    (line,) = _block(cli, T)
    message = line.removeprefix("- IterationError: ")
    assert len(message) <= failures.MESSAGE_CAP and message.endswith("…")
    assert "; mistake: trace trace" in message


# -- "(prior)" lines ---------------------------------------------------------------------
def test_prior_lines_recall_the_task_and_kind_but_never_repeat_a_shown_line(
    cli,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = T - timedelta(days=2)
    earlier = [
        _failure("TimeoutError", "same words", task_id="api"),
        _failure("TimeoutError", "other words", task_id="api"),
        _failure("TimeoutError", "another task", task_id="web"),
    ]
    assert cli("record-episode", stdin=json.dumps(earlier), now=_at(old)).code == 0
    again = _failure("TimeoutError", "same words", task_id="api")
    assert cli("record-episode", stdin=json.dumps(again), now=_at(T)).code == 0
    assert _block(cli, T) == ["- TimeoutError: same words", "- (prior) TimeoutError: other words"]
    # MEMWORK_FAILURE_MEMORY=0 turns them off with the block.
    monkeypatch.setenv("MEMWORK_FAILURE_MEMORY", "0")
    assert "(prior)" not in cli("context", now=_at(T)).out


def test_the_prior_memory_stays_bounded() -> None:
    glob: dict = {}
    for n in range(1, 400):
        failure = {
            "episode_id": f"e{n}",
            "errors": [{"error_type": f"E{n % 37}", "message": "m"}],
            "index": n,
            "phase": f"P{n % 11}",
            "recorded_at": iso(T - timedelta(minutes=n)),
            "task_id": f"t{n % 13}",
        }
        failures.note_prior(glob, failure, T)
    pairs = [(t, k) for t, kinds in glob["failure_kinds"].items() for k in kinds]
    assert len(pairs) == failures.PRIOR_KINDS
    for kinds in glob["failure_kinds"].values():
        assert all(len(k["entries"]) <= 2 * failures.PRIOR_KEEP for k in kinds.values())
    # The most recently seen pair is among those kept.
    assert "type:E29" in glob["failure_kinds"]["t9"]  # failure 399: E(399 % 37), t(399 % 13)


def test_prior_failures_live_in_their_own_document_written_only_when_they_change(
    tmp_path,  # noqa: ANN001
) -> None:
    """Every episode rewrites the global aggregate; the prior-failure memory (large at its
    cap) goes into the store only when a failure changes it."""
    from memwork.core.domain import aggregates, episodes
    from memwork.core.storage.store import Store

    store = Store(tmp_path / "s")
    now = T
    bad = {"task_id": "api", "score": 0.1, "summary": "s", "errors": [{"error_type": "E"}]}
    good = {"task_id": "api", "score": 0.9, "summary": "s", "successes": ["ok"]}
    episodes.record_episodes(store, [bad], now=now, actor="cli")
    written: list[str] = []
    heard = lambda change: written.extend(  # noqa: E731
        doc_id for name, t in change.tables.items() if name == "meta" for doc_id in t.put
    )
    store.subscribe(heard)
    episodes.record_episodes(store, [good], now=now, actor="cli")
    assert "episodes" in written and aggregates.FAILURE_KINDS_DOC not in written
    written.clear()
    episodes.record_episodes(
        store, [{**bad, "errors": [{"error_type": "F"}]}], now=now, actor="cli"
    )
    assert aggregates.FAILURE_KINDS_DOC in written
    with store.reading():
        meta = store.docs("meta")
        assert "failure_kinds" not in meta["episodes"]
        kinds = aggregates.read_global(store)["failure_kinds"]["api"]
    assert set(kinds) == {"type:E", "type:F"}


def test_a_store_that_kept_prior_failures_inside_the_aggregate_reads_and_moves_them(
    tmp_path,  # noqa: ANN001
) -> None:
    from memwork.core.domain import aggregates, episodes
    from memwork.core.storage.store import Store

    store = Store(tmp_path / "s")
    bad = {"task_id": "api", "score": 0.1, "summary": "s", "errors": [{"error_type": "E"}]}
    episodes.record_episodes(store, [bad], now=T, actor="cli")
    with store.transaction():  # as a store written before the document of its own
        glob = aggregates.read_global(store)
        store.put("meta", "episodes", glob)
        store.delete("meta", [aggregates.FAILURE_KINDS_DOC])
    with store.reading():
        assert set(aggregates.read_global(store)["failure_kinds"]["api"]) == {"type:E"}
    good = {"task_id": "api", "score": 0.9, "summary": "s", "successes": ["ok"]}
    episodes.record_episodes(store, [good], now=T, actor="cli")
    with store.reading():
        meta = store.docs("meta")
        assert "failure_kinds" not in meta["episodes"]
        assert set(meta[aggregates.FAILURE_KINDS_DOC]["kinds"]["api"]) == {"type:E"}
