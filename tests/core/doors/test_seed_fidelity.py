"""Seed fidelity, round 3: each defect an audit found, as the CLI reproduction that showed it.

Every test here ran against the code before the fix and failed there. The rules
they check are described in docs/MEMORY.md (Lessons, Failure memory, The
context) and in docs/CLI.md.
"""

from __future__ import annotations

import json
import math
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memwork import Memory
from memwork.core.base.errors import UserError

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
import episodic_reference as ref  # noqa: E402

T = datetime(2026, 11, 1, 12, tzinfo=UTC)


def _at(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _block(cli, moment: datetime) -> list[str]:  # noqa: ANN001
    """The failure block's lines in the context at ``moment``."""
    lines = cli("context", now=_at(moment)).out.splitlines()
    if "## Past failures to avoid" not in lines:
        return []
    start = lines.index("## Past failures to avoid") + 1
    end = lines.index("", start) if "" in lines[start:] else len(lines)
    return lines[start:end]


def _add(cli, text: str, *flags: str) -> dict:  # noqa: ANN001
    done = cli("--json", "lesson", "add", text, *flags, now=_at(T))
    assert done.code == 0, done.err
    record = done.json()
    record["stderr"] = done.err
    return record


# -- 1. new advice is never folded into old ---------------------------------------------
@pytest.mark.parametrize(
    ("old", "new", "opposite"),
    [
        ("Enable strict mode in the compiler", "Disable strict mode in the compiler", True),
        ("Run migrations before deploying", "Run migrations after deploying", True),
        (
            "Check the logs before restarting the service",
            "Restart the service before checking the logs",
            True,
        ),
        (
            "Retry failed uploads",
            "Retry failed uploads at most three times with exponential backoff",
            False,
        ),
    ],
)
def test_new_advice_is_kept_beside_the_old_never_folded_into_it(
    cli,  # noqa: ANN001
    old: str,
    new: str,
    opposite: bool,
) -> None:
    first = _add(cli, old)
    second = _add(cli, new)
    assert second["id"] != first["id"]
    assert second["action"] == ("created" if opposite else "kept-both")
    assert second["content"] == new
    context = cli("context", now=_at(T)).out
    assert f"- {old}\n" in context and f"- {new}\n" in context
    if opposite:
        # Opposites are flagged as such (one verdict at every door), not as near-duplicates.
        assert second["contradicts"] == [first["id"]]
        assert "says the opposite" in second["stderr"]
        shown = cli("--json", "lesson", "show", second["id"], now=_at(T)).json()
        assert shown["contradicts"] == [first["id"]]
        kinds = [f["kind"] for f in cli("--json", "lint", now=_at(T)).json()]
        assert "contradiction" in kinds
    else:
        assert second["near_duplicate_of"] == first["id"] and second["similarity"] >= 90
        assert f"near-duplicate of {first['id']}" in second["stderr"]
        findings = cli("--json", "lint", now=_at(T)).json()
        near = [f for f in findings if f["kind"] == "near_duplicates"]
        assert near and set(near[0]["records"]) == {first["id"], second["id"]}


def test_only_the_same_words_reinforce_silently_and_reinforce_is_still_there_on_request(
    cli,  # noqa: ANN001
) -> None:
    first = _add(cli, "Retry failed uploads")
    same = _add(cli, "  retry FAILED   uploads ")
    assert same["id"] == first["id"] and same["action"] == "reinforced"
    asked = _add(cli, "Retry failed uploads with backoff", "--on-duplicate", "reinforce")
    assert asked["id"] == first["id"] and asked["action"] == "reinforced"
    assert asked["near_duplicate_of"] == first["id"]
    assert cli("context", now=_at(T)).out.count("Retry failed uploads") == 1


# -- 2. the budget never drops context silently -----------------------------------------
def _long_failures() -> list[dict]:
    return [
        {
            "task_id": "api",
            "score": 0.2,
            "steps": n,
            "summary": f"attempt {n}",
            "mistakes": [f"mistake {n} " + "x" * 3000],
        }
        for n in range(5)
    ]


def test_the_episodic_style_has_no_budget_unless_one_is_given(cli) -> None:  # noqa: ANN001
    assert cli("record-episode", stdin=json.dumps(_long_failures()), now=_at(T)).code == 0
    done = cli("context", "--style", "episodic", "--task", "api", now=_at(T))
    assert done.code == 0 and done.err == ""
    text = done.out
    assert text.count("  - [AVOID] mistake") == 5
    assert "Mistakes to avoid:" in text and "Recent api episodes:" in text
    assert "Your mean score on api: 0.20 (over 5 episodes)" in text


def test_dropped_lines_are_reported_and_a_store_with_memory_never_prints_nothing(
    cli,  # noqa: ANN001
) -> None:
    assert cli("record-episode", stdin=json.dumps(_long_failures()), now=_at(T)).code == 0
    done = cli("context", "--style", "episodic", "--task", "api", "--budget", "500", now=_at(T))
    assert done.code == 0
    assert done.out.strip(), "a store with memory printed nothing"
    assert len(done.out.rstrip("\n")) <= 500 * 3
    assert done.out.rstrip("\n").endswith("…")
    (line,) = done.err.splitlines()
    assert line.startswith("memwork: ") and "dropped" in line and "rules" in line
    default = cli("context", "--task", "api", "--budget", "700", now=_at(T))
    assert default.out.strip() and "dropped" in default.err


# -- 3 and 8. failures and skewed clocks ------------------------------------------------
def _failure(error_type: str, message: str = "m", **extra: object) -> dict:
    return {"score": 0.1, "errors": [{"error_type": error_type, "message": message}], **extra}


def test_fifty_failures_from_a_clock_ahead_never_erase_a_real_one(cli) -> None:  # noqa: ANN001
    real = T.replace(hour=11)
    assert cli("record-episode", stdin=json.dumps(_failure("Real")), now=_at(real)).code == 0
    ahead = [_failure(f"Ahead{n}") for n in range(50)]
    assert cli("record-episode", stdin=json.dumps(ahead), now=_at(T.replace(hour=14))).code == 0
    for n in range(3):  # and one at a time, as separate writers
        one = json.dumps(_failure(f"Later{n}"))
        assert cli("record-episode", stdin=one, now=_at(T.replace(hour=14, minute=n))).code == 0
    assert _block(cli, T) == ["- Real: m"]


def test_a_reader_a_little_behind_the_writer_sees_the_failure_just_recorded(
    cli,  # noqa: ANN001
) -> None:
    writer = T + timedelta(seconds=1)
    assert cli("record-episode", stdin=json.dumps(_failure("Just")), now=_at(writer)).code == 0
    assert _block(cli, T) == ["- Just: m"]
    far = [_failure("Later", recorded_at=_at(T + timedelta(minutes=30)))]
    assert cli("record-episode", stdin=json.dumps(far), now=_at(T)).code == 0
    assert _block(cli, T) == ["- Just: m"]


# -- 4. a crash is a failure ------------------------------------------------------------
def test_a_non_zero_exit_code_makes_an_episode_a_failure(cli) -> None:  # noqa: ANN001
    crash = {"task_id": "t", "score": 0.7, "phase": "VERIFY", "exit_code": 1}
    done = cli("--json", "record-episode", stdin=json.dumps(crash), now=_at(T))
    assert done.code == 0
    (episode,) = done.json()
    assert episode["outcome"] == "failure"
    assert _block(cli, T) == ["- IterationError: phase=VERIFY; exit=1"]
    clean = {"task_id": "t", "score": 0.2, "phase": "BUILD", "exit_code": 0}
    assert cli("record-episode", stdin=json.dumps(clean), now=_at(T)).code == 0
    assert _block(cli, T)[0] == "- IterationError: phase=BUILD"


# -- 5. what the episodic library accepts ----------------------------------------------
def test_episodes_the_episodic_library_accepts_are_recorded_and_each_coercion_said(
    cli,  # noqa: ANN001
) -> None:
    batch = [
        {"task_id": "t", "summary": "no score"},
        {"task_id": "t", "score": "0.9", "successes": ["ok"]},
        {"task_id": "t", "score": 0.2, "mistake_cards": ["not a card", {"mistake_type": "x"}]},
        {"task_id": "t", "score": 0.3, "worker_id": 7},
        {"task_id": "t", "score": 0.3, "mistake_cards": [{"mistake_type": "y", "evidence": 42}]},
        {"task_id": "t", "score": 0.3, "mistake_cards": [{"mistake_type": "z", "colour": "red"}]},
    ]
    done = cli("--json", "record-episode", stdin=json.dumps(batch), now=_at(T))
    assert done.code == 0, done.err
    recorded = done.json()
    assert [e["score"] for e in recorded] == [0.0, 0.9, 0.2, 0.3, 0.3, 0.3]
    assert recorded[3]["worker_id"] == "7"
    assert recorded[4]["mistake_cards"][0]["evidence"] == "42"
    assert len(recorded[2]["mistake_cards"]) == 1
    warned = [w for e in recorded for w in e["warnings"]]
    for where in (
        "item 1: score",
        "item 2: score",
        "item 3: mistake_cards.0",
        "item 4: worker_id",
        "item 5: mistake_cards.0.evidence",
        "item 6: mistake_cards.0.colour",
    ):
        assert any(w.startswith(where) for w in warned), (where, warned)
        assert where in done.err
    memory = ref.empty()
    for item in batch:
        ref.record(memory, item)
    context = cli("context", "--style", "episodic", "--task", "t", now=_at(T)).out
    assert context == ref.render(memory, "t") + "\n"


def test_what_no_reading_can_save_is_still_refused_whole(cli, db) -> None:  # noqa: ANN001
    assert cli("record-episode", stdin=json.dumps({"score": 0.5}), now=_at(T)).code == 0
    for bad in ([{"score": 0.5}, {"score": 2}], [{"score": 0.5}, "not an episode"]):
        done = cli("record-episode", stdin=json.dumps(bad), now=_at(T))
        assert done.code == 2 and "item 2" in done.err
    assert cli("--json", "stats").json()["total_episodes"] == 1


# -- 6. tokens are characters / 3 -------------------------------------------------------
def test_tokens_are_estimated_as_characters_over_three(cli) -> None:  # noqa: ANN001
    cli("slot", "set", "persona", "p" * 290, now=_at(T))
    record = cli("context", "--format", "json", now=_at(T)).json()
    assert record["estimated_tokens"] == math.ceil(len(record["text"]) / 3)
    assert "/ 3" in record["token_estimate"]
    needed = math.ceil(len(record["text"]) / 3)
    assert cli("context", "--budget", str(needed), now=_at(T)).err == ""
    assert "dropped" in cli("context", "--budget", str(needed - 1), now=_at(T)).err


# -- 7. reinforcement never moves a clock back ------------------------------------------
def test_reinforcing_with_a_clock_behind_never_lowers_confidence(cli) -> None:  # noqa: ANN001
    lesson = _add(cli, "Pin the base image digest")
    behind = T - timedelta(days=30)
    done = cli("--json", "lesson", "reinforce", lesson["id"], now=_at(behind))
    assert done.code == 0
    shown = cli("--json", "lesson", "show", lesson["id"], now=_at(T)).json()
    assert shown["last_reinforced_at"] == lesson["last_reinforced_at"]
    assert shown["effective_confidence"] == pytest.approx(0.55)


# -- 9. one verdict on contradictions ---------------------------------------------------
def test_lesson_add_reports_the_contradiction_show_and_lint_report(cli) -> None:  # noqa: ANN001
    first = _add(cli, "Always pin dependency versions")
    second = _add(cli, "Never pin dependency versions")
    assert second["contradicts"] == [first["id"]]
    shown = cli("--json", "lesson", "show", second["id"], now=_at(T)).json()
    assert shown["contradicts"] == second["contradicts"]


# -- 10. the external consolidator's rules ----------------------------------------------
def test_rules_from_the_external_consolidator_carry_the_consolidated_prefix(
    cli,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMWORK_CONSOLIDATE_CMD", """echo '["Ship small changes"]'""")
    assert cli("record-episode", stdin=json.dumps({"score": 0.9}), now=_at(T)).code == 0
    assert cli("consolidate", now=_at(T)).code == 0
    assert "  - [CONSOLIDATED] Ship small changes" in cli("context", "--style", "episodic").out


# -- 11. failure lines ------------------------------------------------------------------
def test_an_empty_message_and_a_synthesised_error_read_as_the_failure_loop_writes_them(
    cli,  # noqa: ANN001
) -> None:
    empty = _failure("TimeoutError", "", recorded_at=_at(T - timedelta(minutes=1)))
    assert cli("record-episode", stdin=json.dumps(empty), now=_at(T)).code == 0
    plain = {"score": 0.1, "summary": "gave up"}
    assert cli("record-episode", stdin=json.dumps(plain), now=_at(T)).code == 0
    assert _block(cli, T) == ["- IterationError: gave up", "- TimeoutError"]


# -- 12. stats as the episodic library summarises ---------------------------------------
def test_stats_carry_rule_mistake_and_card_counts_and_the_top_five_cards(
    cli,  # noqa: ANN001
) -> None:
    batch = [
        {
            "task_id": "a",
            "score": 0.2,
            "mistakes": [f"slip {n}"],
            "mistake_cards": [{"mistake_type": f"kind{n}"}],
        }
        for n in range(6)
    ] + [{"task_id": "b", "score": 0.9, "successes": ["steady"]}, {"task_id": "b", "score": 0.4}]
    assert cli("record-episode", stdin=json.dumps(batch), now=_at(T)).code == 0
    cli("rule", "add", "Be brief", now=_at(T))
    stats = cli("stats").json()
    assert stats["rules"] == {"global": 1, "tasks": {"a": 6, "b": 1}}
    assert stats["mistakes"] == 6 and stats["successes"] == 1 and stats["mistake_cards"] == 6
    assert len(stats["top_mistake_cards"]) == 5
    assert stats["tasks"]["b"]["mean_score"] == 0.65
    assert stats["tasks"]["a"]["rules"] == 6
    assert stats["counts"]["episodes"] == 8  # today's fields stay


# -- 13. errors from Memory read as the CLI's -------------------------------------------
def test_errors_from_memory_read_as_the_cli_prints_them(cli, db) -> None:  # noqa: ANN001
    bad = {"score": 2}
    printed = cli("record-episode", stdin=json.dumps(bad)).err.strip()
    assert printed.startswith("memwork: item 1: score")
    with pytest.raises(UserError) as raised:
        Memory(db).record_episode(bad)
    assert str(raised.value) == printed
    missing = cli("lesson", "show", "les_nope").err.strip()
    with pytest.raises(UserError) as raised:
        Memory(db).get_lesson("les_nope")
    assert str(raised.value) == missing


# -- the failure loop: cross-run anti-patterns ------------------------------------------
def test_a_task_that_fails_again_recalls_earlier_failures_of_the_same_kind(
    cli,  # noqa: ANN001
) -> None:
    old = T - timedelta(days=3)
    earlier = [
        _failure("TimeoutError", "upload stalled at 40%", task_id="api"),
        {"task_id": "api", "score": 0.1, "phase": "VERIFY", "exit_code": 2},
        _failure("KeyError", "unrelated", task_id="api"),
    ]
    assert cli("record-episode", stdin=json.dumps(earlier), now=_at(old)).code == 0
    again = [
        _failure("TimeoutError", "upload stalled again " + "y" * 200, task_id="api"),
        {**_failure("AssertionError", "checksum mismatch"), "phase": "VERIFY", "task_id": "api"},
    ]
    assert cli("record-episode", stdin=json.dumps(again), now=_at(T)).code == 0
    block = _block(cli, T)
    assert block[:2] == ["- AssertionError: checksum mismatch", block[1]]
    assert block[1].startswith("- TimeoutError: upload stalled again")
    prior = [line for line in block if line.startswith("- (prior) ")]
    assert prior == [
        "- (prior) IterationError: phase=VERIFY; exit=2",
        "- (prior) TimeoutError: upload stalled at 40%",
    ]
    assert all(len(line) <= 120 for line in prior)
    # Without a new failure of that kind, the old ones stay out of the context.
    assert _block(cli, T + timedelta(days=2)) == []


# -- the failure loop: crash reports -----------------------------------------------------
CRASH = {
    "error_class": "TimeoutError",
    "friction_kind": "tool_timeout",
    "stack_signature": "uploader.py:88 send_chunk",
    "fingerprint": "9f2c1e",
    "message": "upload to s3 stalled; token sk-" + "z" * 32,
    "task": "api",
    "phase": "UPLOAD",
    "exit_code": 124,
}


def test_record_failure_takes_a_crash_report_and_counts_a_repeated_fingerprint(
    cli,  # noqa: ANN001
    db,  # noqa: ANN001
) -> None:
    done = cli("--json", "record-failure", stdin=json.dumps(CRASH), now=_at(T))
    assert done.code == 0, done.err
    first = done.json()
    assert first["count"] == 1 and first["repeated"] is False
    episode = cli("--json", "stats").json()
    assert episode["tasks"]["api"]["episodes"] == 1
    assert _block(cli, T) == ["- TimeoutError: upload to s3 stalled; token [redacted:api_key]"]
    later = T + timedelta(minutes=5)
    again = cli("--json", "record-failure", stdin=json.dumps(CRASH), now=_at(later)).json()
    assert again["episode_id"] == first["episode_id"]
    assert again["count"] == 2 and again["repeated"] is True
    assert cli("--json", "stats").json()["tasks"]["api"]["episodes"] == 1
    assert _block(cli, later) == [
        "- TimeoutError: upload to s3 stalled; token [redacted:api_key] (seen 2x)"
    ]
    assert "sk-zzz" not in json.dumps(cli("export").json())
    other = {**CRASH, "fingerprint": "other", "message": "disk full", "error_class": "OSError"}
    assert cli("record-failure", stdin=json.dumps(other), now=_at(later)).code == 0
    assert _block(cli, later)[0] == "- OSError: disk full"
    with pytest.raises(UserError):
        Memory(db).record_failure({"message": "no class"})
