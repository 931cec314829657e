"""Long texts never refuse an episode: stack traces in mistakes are normal.

Described in docs/MEMORY.md, Failure memory.

Episode text fields hold up to 100,000 characters each and are stored whole;
what is derived from them (rules, mistake cards) is cut at its own limit with
an ellipsis. A batch that is refused still names the item and the field.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwork.core.domain import cards, episodes, rules
from memwork.core.models.card import TEXT_CAP as CARD_CAP
from memwork.core.models.episode import TEXT_MAX
from memwork.core.models.rule import TEXT_CAP as RULE_CAP
from memwork.core.storage.store import Store
from tests.conftest import folder_digest

T0 = "2026-11-01T12:00:00Z"
NOW = datetime(2026, 11, 1, 12, tzinfo=UTC)


def _rules(db: Path, task: str) -> list[str]:
    store = Store(db)
    with store.reading():
        return [r["text"] for r in rules.in_scope(store, f"task:{task}")]


def test_a_long_mistake_is_recorded_and_its_rule_is_cut_with_an_ellipsis(cli, db: Path) -> None:  # noqa: ANN001
    trace = "Traceback (most recent call last):\n" + "A" * 2500
    body = {"task_id": "build", "score": 0.2, "mistakes": [trace], "summary": "crashed"}
    done = cli("record-episode", stdin=json.dumps(body), now=T0)
    assert done.code == 0, done.err
    stored = cli("--json", "record-episode", stdin=json.dumps(body), now=T0)
    assert stored.code == 0, stored.err
    # The episode keeps every character the agent sent.
    (episode,) = stored.json()
    assert episode["mistakes"] == [trace.strip()]
    (rule,) = _rules(db, "build")
    assert len(rule) == RULE_CAP and rule.endswith("…")
    assert rule.startswith("[AVOID] Traceback (most recent call last):")


def test_a_long_success_is_recorded_and_its_rule_is_cut(cli, db: Path) -> None:  # noqa: ANN001
    body = {"task_id": "ship", "score": 0.9, "successes": ["B" * 3000]}
    done = cli("record-episode", stdin=json.dumps(body), now=T0)
    assert done.code == 0, done.err
    (rule,) = _rules(db, "ship")
    assert rule == "[WORKS] " + "B" * (RULE_CAP - len("[WORKS] ") - 1) + "…"
    context = cli("context", "--task", "ship", "--budget", "100000", now=T0)
    assert rule in context.out


def test_a_batch_with_a_long_text_in_the_middle_loses_nothing(cli, db: Path) -> None:  # noqa: ANN001
    items = [
        {"task_id": "t", "score": 0.9, "summary": "first"},
        {"task_id": "t", "score": 0.1, "mistakes": ["C" * 5000], "summary": "S" * 20000},
        {"task_id": "t", "score": 0.95, "successes": ["D" * 4000]},
    ]
    done = cli("record-episode", stdin=json.dumps(items), now=T0)
    assert done.code == 0, done.err
    assert len(done.out.split()) == 3


def test_long_card_fields_are_cut_with_an_ellipsis(cli, db: Path) -> None:  # noqa: ANN001
    card = {"mistake_type": "trace", "evidence": "E" * 5000, "lesson": "L" * 301}
    body = {"task_id": "t", "score": 0.2, "mistake_cards": [card]}
    assert cli("record-episode", stdin=json.dumps(body), now=T0).code == 0
    store = Store(db)
    with store.reading():
        (stored,) = cards.all_cards(store)
    assert stored["evidence"] == "E" * (CARD_CAP - 1) + "…"
    assert stored["lesson"] == "L" * (CARD_CAP - 1) + "…"


def test_a_text_of_exactly_the_limit_is_not_cut(cli, db: Path) -> None:  # noqa: ANN001
    mistake = "M" * (RULE_CAP - len("[AVOID] "))
    body = {"task_id": "t", "score": 0.2, "mistakes": [mistake]}
    assert cli("record-episode", stdin=json.dumps(body), now=T0).code == 0
    assert _rules(db, "t") == ["[AVOID] " + mistake]


def test_a_text_over_the_limit_is_refused_naming_item_and_field(cli, db: Path) -> None:  # noqa: ANN001
    cli("record-episode", stdin='{"score": 0.5}', now=T0)
    before = folder_digest(db)
    items = [
        {"task_id": "t", "score": 0.2, "mistakes": ["fine"]},
        {"task_id": "t", "score": 0.2, "mistakes": ["ok", "X" * (TEXT_MAX + 1)]},
    ]
    done = cli("record-episode", stdin=json.dumps(items), now=T0)
    assert done.code == 2 and done.out == ""
    assert done.err.startswith("memwork: item 2: mistakes.1: ")
    assert f"at most {TEXT_MAX} characters" in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert folder_digest(db) == before


def test_an_error_entry_field_over_the_limit_names_it(cli, db: Path) -> None:  # noqa: ANN001
    bad = {"score": 0.1, "errors": [{"error_type": "E", "message": "x" * (TEXT_MAX + 1)}]}
    done = cli("record-episode", stdin=json.dumps([{"score": 0.9}, {"score": 0.9}, bad]))
    assert done.code == 2
    assert done.err.startswith("memwork: item 3: errors.0.message: ")


# -- property: the length of a text field is never a reason to refuse --------------------
FIELDS = (
    "summary",
    "mistakes",
    "successes",
    "error_type",
    "message",
    "resolution",
    "bad_decision",
    "correct_decision",
    "evidence",
    "lesson",
    "mistake_type",
)


def _episode(field: str, text: str, score: float) -> dict:
    item: dict = {"task_id": "prop", "score": score}
    if field in ("summary",):
        item[field] = text
    elif field in ("mistakes", "successes"):
        item[field] = [text]
    elif field in ("error_type", "message", "resolution"):
        item["errors"] = [{"error_type": "E", field: text}]
    else:
        item["mistake_cards"] = [{field: text}]
    return item


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    field=st.sampled_from(FIELDS),
    length=st.one_of(
        st.integers(min_value=1, max_value=TEXT_MAX),
        st.sampled_from([299, 300, 301, 1999, 2000, 2001, 2008, 2009, TEXT_MAX]),
    ),
    char=st.sampled_from(["a", "é", "字", "\U0001f600", " x"]),
    score=st.sampled_from([0.0, 0.2, 0.49, 0.5, 0.85, 0.9, 1.0]),
)
def test_recording_never_refuses_for_the_length_of_a_text_field(
    field: str, length: int, char: str, score: float
) -> None:
    text = (char * length)[:length]
    if not text.strip():
        text = "z" + text[1:]
    store = Store.in_memory()
    (doc,) = episodes.record_episodes(store, [_episode(field, text, score)], now=NOW, actor="test")
    stored = episodes.get_episode(store, doc["id"])
    with store.reading():
        kept_rules = rules.in_scope(store, "task:prop")
        kept_cards = cards.all_cards(store)
    assert all(len(r["text"]) <= RULE_CAP for r in kept_rules)
    assert all(len(c["evidence"]) <= CARD_CAP and len(c["lesson"]) <= CARD_CAP for c in kept_cards)
    # The episode keeps the text (scrubbing and trimming aside); a card's evidence
    # and lesson are the card's own, cut at 300.
    flat = json.dumps(stored, ensure_ascii=False)
    kept = CARD_CAP - 1 if field in ("evidence", "lesson") else len(text)
    assert json.dumps(text.strip()[:kept], ensure_ascii=False)[1:-1] in flat


def test_a_cut_card_shows_its_ellipsis_but_the_episodic_layout_cuts_plainly(cli) -> None:  # noqa: ANN001
    lesson = "Check the lock before writing. " * 20
    card = {"mistake_type": "race", "lesson": lesson, "evidence": "short"}
    body = {"task_id": "t", "score": 0.2, "mistake_cards": [card]}
    assert cli("record-episode", stdin=json.dumps(body), now=T0).code == 0
    default = cli("context", "--budget", "100000", now=T0).out
    assert f"- [race, seen 1x] {lesson[:299]}… Evidence: short" in default
    episodic = cli("context", "--style", "episodic", now=T0).out
    assert f"  - [race, seen 1x] {lesson[:300]} Evidence: short" in episodic
