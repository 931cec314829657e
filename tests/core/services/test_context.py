"""Context export, default style: golden sections, budget, JSON, privacy.

Described in docs/MEMORY.md, Failure memory and The context.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwork.core.base.clock import iso
from memwork.core.domain import aggregates, cards, episodes, lessons, rules, slots
from memwork.core.privacy import scrub
from memwork.core.services.context.budget import estimate_tokens
from memwork.core.services.context.build import build_context
from memwork.core.storage.store import Store
from tests.conftest import NOW

ACTOR = "test"


def _record(store: Store, now: datetime, *items: dict) -> list[dict]:
    return episodes.record_episodes(store, list(items), now=now, actor=ACTOR)


def _text(store: Store, now: datetime, task: str | None = None, budget: int = 2000) -> str:
    return build_context(store, now=now, task_id=task, budget_tokens=budget).text


def _full_store(store: Store, now: datetime) -> None:
    """One of everything, for the budget tests."""
    slots.set_slot(store, "persona", "I am terse.\nI cite files.", now=now, actor=ACTOR)
    rules.add_rule(store, "Prefer small diffs", now=now, actor=ACTOR)
    rules.add_rule(store, "Check CI first", now=now, actor=ACTOR, scope="task:deploy")
    lessons.add_lesson(store, "Read the logs first", now=now, actor=ACTOR, confidence=0.8)
    lessons.add_lesson(store, "Backups before migrations", now=now, actor=ACTOR, confidence=0.6)
    _record(
        store,
        now - timedelta(hours=1),
        {
            "task_id": "deploy",
            "score": 0.2,
            "steps": 3,
            "summary": "rolled back",
            "mistake_cards": [
                {"mistake_type": "skip_canary", "lesson": "Run a canary.", "evidence": "5m outage"}
            ],
            "errors": [{"error_type": "HealthCheck", "message": "503 from /ready"}],
        },
        {"task_id": "deploy", "score": 0.9, "steps": 7, "summary": "clean deploy"},
    )


FULL = """\
## Pinned memory
### persona
I am terse.
I cite files.

## Rules for deploy
- Check CI first

## General rules and lessons
- Prefer small diffs
- Read the logs first
- Backups before migrations

## Mistakes to avoid
- [skip_canary, seen 1x] Run a canary. Evidence: 5m outage

## Past failures to avoid
- HealthCheck: 503 from /ready

## Recent deploy episodes
- Score 0.90 in 7 steps: clean deploy
- Score 0.20 in 3 steps: rolled back

Your mean score on deploy: 0.55 (over 2 episodes)"""


# -- golden sections -------------------------------------------------------------------
def test_empty_store_gives_an_empty_string(store: Store, now: datetime) -> None:
    assert _text(store, now) == ""
    assert _text(store, now, "deploy") == ""
    assert build_context(store, now=now, style="episodic").text == ""


def test_empty_store_through_the_cli_prints_nothing(cli) -> None:  # noqa: ANN001
    done = cli("context", "--task", "x")
    assert (done.code, done.out, done.err) == (0, "", "")
    record = cli("context", "--format", "json").json()
    assert record["text"] == "" and record["sections"] == [] and record["dropped"] == []


def test_full_context(store: Store, now: datetime) -> None:
    _full_store(store, now)
    assert _text(store, now, "deploy") == FULL


def test_slots_lead_in_position_order_and_empty_ones_are_skipped(
    store: Store, now: datetime
) -> None:
    slots.set_slot(store, "zeta", "first made", now=now, actor=ACTOR)
    slots.set_slot(store, "empty", "   ", now=now, actor=ACTOR)
    slots.set_slot(store, "corrections/mistakes", "line 1\n\nline 3\n", now=now, actor=ACTOR)
    assert _text(store, now) == (
        "## Pinned memory\n### zeta\nfirst made\n### corrections/mistakes\nline 1\n\nline 3"
    )


def test_task_rules_newest_first_and_only_active(store: Store, now: datetime) -> None:
    for n in range(12):
        rules.add_rule(store, f"r{n}", now=now, actor=ACTOR, scope="task:t")
    rules.add_rule(store, "other task", now=now, actor=ACTOR, scope="task:u")
    expected = "## Rules for t\n" + "\n".join(f"- r{n}" for n in range(11, 1, -1))
    assert _text(store, now, "t") == expected
    assert _text(store, now) == ""


def test_global_rules_then_lessons_by_effective_confidence_times_scope(
    store: Store, now: datetime
) -> None:
    rules.add_rule(store, "g1", now=now, actor=ACTOR)
    rules.add_rule(store, "g2", now=now, actor=ACTOR)

    def add(text: str, confidence: float, scope: str = "global") -> str:
        return lessons.add_lesson(
            store, text, now=now, actor=ACTOR, confidence=confidence, scope=scope
        ).lesson["id"]

    add("global 0.8", 0.8)
    add("task 0.75", 0.75, "task:t")
    add("project 0.9", 0.9, "project:p")
    add("other task never", 1.0, "task:u")
    gone = add("forgotten one", 1.0)
    lessons.forget(store, gone, now=now, actor=ACTOR)
    add("faded 0.6", 0.6)
    add("decayed away 0.5", 0.5)  # 0.1 after 8 weeks, never reinforced: forgotten
    later = now + timedelta(weeks=8)
    # Effective confidence 8 weeks on (0.05/week) x scope match:
    # task 0.35 x 1, global 0.4 x 0.75, project 0.5 x 0.5, faded 0.2 x 0.75.
    # A task's own lesson is listed under the task, not among the general ones.
    assert _text(store, later, "t") == (
        "## Rules and lessons for t\n- task 0.75\n\n"
        "## General rules and lessons\n- g2\n- g1\n"
        "- global 0.8\n- project 0.9\n- faded 0.6"
    )
    # Now, without a task: task-scoped lessons do not apply; on a tie (0.45) the newer
    # lesson goes first.
    assert _text(store, now) == (
        "## General rules and lessons\n- g2\n- g1\n"
        "- global 0.8\n- faded 0.6\n- project 0.9\n- decayed away 0.5"
    )


def test_lessons_fill_the_budget_by_rank(store: Store, now: datetime) -> None:
    for n in range(12):
        lessons.add_lesson(
            store,
            f"lesson {'x' * n}",
            now=now,
            actor=ACTOR,
            confidence=0.3 + n / 40,
            on_duplicate="keep-both",
        )
    every = [f"- lesson {'x' * n}".strip() for n in range(11, -1, -1)]
    assert _text(store, now).splitlines()[1:] == every
    # A smaller budget keeps the best ranked and names every lesson it left out.
    result = build_context(store, now=now, budget_tokens=40)
    kept = result.text.splitlines()[1:]
    assert 2 < len(kept) < 12 and kept == every[: len(kept)]
    assert [(d.section, d.text) for d in result.dropped] == [
        ("global", text) for text in reversed(every[len(kept) :])
    ]


def test_top_three_mistake_cards(store: Store, now: datetime) -> None:
    def ep(*types: str) -> dict:
        return {"task_id": "t", "score": 0.5, "mistake_cards": [{"mistake_type": x} for x in types]}

    _record(store, now, ep("a"), ep("b", "c"), ep("a", "d"), ep("b"), ep("e"))
    (card,) = [c for c in _cards(store) if c["mistake_type"] == "e"]
    cards.edit_card(store, card["id"], now=now, actor=ACTOR, lesson="Multi\nline", evidence="E")
    assert _text(store, now) == (
        "## Mistakes to avoid\n"
        "- [b, seen 2x] Avoid repeating this failure. Evidence: \n"
        "- [a, seen 2x] Avoid repeating this failure. Evidence: \n"
        "- [e, seen 1x] Multi line Evidence: E"
    )


def test_cards_keep_the_global_ranking_with_a_task(store: Store, now: datetime) -> None:
    """docs/MEMORY.md, Records: cards are ranked by seen_count, then last_seen_episode."""
    _record(
        store,
        now,
        *[{"task_id": "other", "score": 0.5, "mistake_cards": [{"mistake_type": "big"}]}] * 3,
        {"task_id": "t", "score": 0.5, "mistake_cards": [{"mistake_type": "mine"}]},
    )
    lines = _text(store, now, "t").split("## Mistakes to avoid\n")[1].splitlines()[:2]
    assert lines == [
        "- [big, seen 3x] Avoid repeating this failure. Evidence: ",
        "- [mine, seen 1x] Avoid repeating this failure. Evidence: ",
    ]


def _cards(store: Store) -> list[dict]:
    with store.reading():
        return cards.all_cards(store)


def test_recent_episodes_and_mean(store: Store, now: datetime) -> None:
    long = "s" * 150
    _record(
        store,
        now,
        {"task_id": "t", "score": 0.5, "steps": 1, "summary": "one"},
        {"task_id": "t", "score": 0.75, "steps": 2, "summary": "two"},
        {"task_id": "u", "score": 1.0, "steps": 9, "summary": "other task"},
        {"task_id": "t", "score": 0.625, "steps": 3, "summary": "three\nlines"},
        {"task_id": "t", "score": 0.5, "steps": 4, "summary": long},
    )
    assert _text(store, now, "t") == (
        "## Recent t episodes\n"
        f"- Score 0.50 in 4 steps: {'s' * 100}\n"
        "- Score 0.62 in 3 steps: three lines\n"
        "- Score 0.75 in 2 steps: two\n"
        "\n"
        "Your mean score on t: 0.59 (over 4 episodes)"
    )
    assert _text(store, now, "nobody") == ""


# -- the failure block ----------------------------------------------------------------
def _failure(task: str, at: datetime, error_type: str = "E", message: str = "m") -> dict:
    return {
        "task_id": task,
        "score": 0.1,
        "recorded_at": iso(at),
        "errors": [{"error_type": error_type, "message": message}],
    }


def test_failures_newest_first_by_recorded_time_at_most_three(store: Store, now: datetime) -> None:
    _record(
        store,
        now,
        _failure("a", now - timedelta(hours=2), "Two"),
        _failure("b", now - timedelta(hours=30), "Old"),
        _failure("c", now - timedelta(minutes=10), "Newest"),
        _failure("d", now - timedelta(hours=23, minutes=59), "Edge"),
        _failure("e", now - timedelta(hours=1), "One"),
    )
    assert _text(store, now) == ("## Past failures to avoid\n- Newest: m\n- One: m\n- Two: m")


def test_failure_window_is_24_hours(store: Store, now: datetime) -> None:
    _record(
        store,
        now,
        _failure("a", now - timedelta(hours=24), "Inside"),
        _failure("b", now - timedelta(hours=24, seconds=1), "Outside"),
    )
    assert _text(store, now) == "## Past failures to avoid\n- Inside: m"
    assert _text(store, now + timedelta(seconds=2)) == ""


def test_failure_lines_are_cut_to_80_and_160(store: Store, now: datetime) -> None:
    _record(store, now, _failure("t", now, "T" * 100, "M" * 100 + "\n" + "N" * 100))
    line = _text(store, now).splitlines()[1]
    assert line == f"- {'T' * 80}: {'M' * 100} {'N' * 59}"


def test_synthesised_failures_show_in_the_block(store: Store, now: datetime) -> None:
    _record(store, now, {"score": 0.0, "phase": "build", "exit_code": 2})
    assert _text(store, now) == "## Past failures to avoid\n- IterationError: phase=build; exit=2"


def test_failure_block_through_the_cli_out_of_order(cli) -> None:  # noqa: ANN001
    stamps = ["2026-11-01T09:00:00Z", "2026-11-01T11:00:00Z", "2026-11-01T10:00:00Z"]
    for n, stamp in enumerate(stamps):
        # Recorded in the order 09, 11, 10 (MEMWORK_NOW gives each its timestamp).
        body = json.dumps({"score": 0.1, "errors": [{"error_type": f"E{n}", "message": stamp}]})
        assert cli("record-episode", stdin=body, now=stamp).code == 0
    done = cli("context", now="2026-11-01T12:00:00Z")
    assert done.out == (
        "## Past failures to avoid\n"
        "- E1: 2026-11-01T11:00:00Z\n"
        "- E2: 2026-11-01T10:00:00Z\n"
        "- E0: 2026-11-01T09:00:00Z\n"
    )
    assert cli("context", now="2026-11-02T09:30:00Z").out == (
        "## Past failures to avoid\n- E1: 2026-11-01T11:00:00Z\n- E2: 2026-11-01T10:00:00Z\n"
    )


def test_failure_memory_off_hides_the_block(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    _record(store, now, _failure("t", now, "Given"))
    assert "Past failures" in _text(store, now)
    monkeypatch.setenv("MEMWORK_FAILURE_MEMORY", "0")
    assert _text(store, now) == ""


# -- tokens and budget -----------------------------------------------------------------
def test_token_estimate_is_characters_over_three(store: Store, now: datetime) -> None:
    assert [estimate_tokens("x" * n) for n in (0, 1, 3, 4, 6, 7)] == [0, 1, 1, 2, 2, 3]
    _full_store(store, now)
    result = build_context(store, now=now, task_id="deploy")
    assert result.tokens == estimate_tokens(FULL) == -(-len(FULL) // 3)
    record = result.to_json()
    assert record["estimated_tokens"] == result.tokens
    assert "estimate" in record["token_estimate"]


def _dropped(store: Store, now: datetime, budget: int) -> list[tuple[str, str]]:
    result = build_context(store, now=now, task_id="deploy", budget_tokens=budget)
    assert result.tokens <= max(budget, 1)
    return [(d["section"], d["line"]) for d in result.to_json()["dropped"]]


def test_budget_drops_whole_lines_lowest_priority_first(store: Store, now: datetime) -> None:
    _full_store(store, now)
    full = estimate_tokens(FULL)
    assert _dropped(store, now, full) == []
    assert _dropped(store, now, full - 1) == [("episodes", "- Score 0.20 in 3 steps: rolled back")]
    order = [
        ("episodes", "- Score 0.20 in 3 steps: rolled back"),
        ("episodes", "- Score 0.90 in 7 steps: clean deploy"),
        ("mean_score", "Your mean score on deploy: 0.55 (over 2 episodes)"),
        ("global", "- Backups before migrations"),
        ("global", "- Read the logs first"),
        ("mistake_cards", "- [skip_canary, seen 1x] Run a canary. Evidence: 5m outage"),
        ("global", "- Prefer small diffs"),
        ("task_rules", "- Check CI first"),
        ("failures", "- HealthCheck: 503 from /ready"),
        # A slot goes whole, its heading with it, listed as it reads.
        ("slots", "### persona"),
        ("slots", "I am terse."),
        ("slots", "I cite files."),
    ]
    # Not one whole line fits: the first line stays (after its slot's heading), cut to fit.
    assert _dropped(store, now, 0) == [*order[:-3], order[-1]]
    tiny = build_context(store, now=now, task_id="deploy", budget_tokens=12)
    assert tiny.text == "## Pinned memory\n### persona\nI am t…" and len(tiny.text) == 36
    assert [(c.section, c.text) for c in tiny.cut] == [("slots", "I am terse.")]
    assert _text(store, now, "deploy", budget=0) == "…"
    # Every budget in between drops a prefix of that order, and nothing more than needed.
    for budget in range(0, full + 1, 7):
        dropped = _dropped(store, now, budget)
        if build_context(store, now=now, task_id="deploy", budget_tokens=budget).cut:
            assert dropped == [*order[:-3], order[-1]]
            continue
        assert dropped == order[: len(dropped)]
        if dropped:
            fewer = build_context(store, now=now, task_id="deploy", budget_tokens=budget)
            assert fewer.tokens <= max(budget, 1)


def test_budget_keeps_headings_of_sections_with_lines_left(store: Store, now: datetime) -> None:
    _full_store(store, now)
    text = _text(store, now, "deploy", budget=estimate_tokens(FULL) - 40)
    assert text == FULL.split("\n\n## Recent deploy episodes")[0]


def test_a_slot_is_kept_or_dropped_whole_heading_included(store: Store, now: datetime) -> None:
    slots.set_slot(store, "persona", "I am terse.", now=now, actor=ACTOR)
    body = "\n".join(f"Step {n}: roll out to one zone, then watch it." for n in range(1, 9))
    slots.set_slot(store, "runbooks/deploy", body, now=now, actor=ACTOR)
    full = build_context(store, now=now, budget_tokens=10**6)
    assert full.text.endswith("Step 8: roll out to one zone, then watch it.")
    # Any budget short of the whole text used to cut the last slot's body line by line,
    # down to a bare "### runbooks/deploy"; now the slot leaves as one piece.
    for budget in range(0, full.tokens):
        result = build_context(store, now=now, budget_tokens=budget)
        assert result.tokens <= max(budget, 1)
        assert not result.text.rstrip().endswith("### runbooks/deploy")
        kept = [line.text for s in result.sections for line in s.lines]
        assert ("### runbooks/deploy" in kept) == (
            "Step 1: roll out to one zone, then watch it." in kept
        )
        if "### runbooks/deploy" not in kept and not result.cut:
            assert result.text == "## Pinned memory\n### persona\nI am terse."
            assert [d.text for d in result.dropped][:2] == [
                "### runbooks/deploy",
                "Step 1: roll out to one zone, then watch it.",
            ]


def test_cli_context_over_budget_drops_a_slot_with_its_heading(cli) -> None:  # noqa: ANN001
    assert cli("slot", "set", "persona", "I am terse.").code == 0
    steps = "\n".join(f"Step {n}: check the canary." for n in range(80))
    assert cli("slot", "set", "runbooks/deploy", steps, "--limit", "5000").code == 0
    out = cli("context", "--budget", "300").out
    assert out.strip() == "## Pinned memory\n### persona\nI am terse."


def test_json_lists_sections_with_estimates_and_the_dropped_lines(cli) -> None:  # noqa: ANN001
    cli("slot", "set", "persona", "terse")
    cli("rule", "add", "global rule")
    cli(
        "record-episode",
        stdin=json.dumps({"task_id": "t", "score": 0.6, "steps": 2, "summary": "fine"}),
    )
    kept = "## Pinned memory\n### persona\nterse\n\n## General rules and lessons\n- global rule"
    budget = estimate_tokens(kept)
    record = cli("context", "--task", "t", "--format", "json", "--budget", str(budget)).json()
    assert record["budget_tokens"] == budget and record["task"] == "t"
    assert record["style"] == "default"
    # Each line's sources are checked in tests/core/services/test_context_sources.py.
    record["dropped"] = [_without_sources(d) for d in record["dropped"]]
    record["sections"] = [_without_sources(s) for s in record["sections"]]
    assert record["dropped"] == [
        {"section": "episodes", "line": "- Score 0.60 in 2 steps: fine"},
        {"section": "mean_score", "line": "Your mean score on t: 0.60 (over 1 episode)"},
    ]
    assert record["sections"] == [
        {
            "name": "slots",
            "heading": "## Pinned memory",
            "lines": ["### persona", "terse"],
            "estimated_tokens": estimate_tokens("## Pinned memory\n### persona\nterse"),
        },
        {
            "name": "global",
            "heading": "## General rules and lessons",
            "lines": ["- global rule"],
            "estimated_tokens": estimate_tokens("## General rules and lessons\n- global rule"),
        },
    ]
    assert record["text"] == kept
    assert record["estimated_tokens"] == budget
    text = cli("context", "--task", "t", "--budget", str(budget))
    assert text.out == record["text"] + "\n"


def _without_sources(item: dict) -> dict:
    return {k: v for k, v in item.items() if k != "sources"}


def test_negative_budget_and_unknown_style_are_refused(cli) -> None:  # noqa: ANN001
    done = cli("context", "--budget", "-1")
    assert done.code == 2 and done.err == "memwork: budget: must be >= 0 (got -1)\n"
    done = cli("context", "--style", "fancy")
    assert done.code == 2 and "invalid choice" in done.err and done.err.count("\n") == 1


# -- determinism and privacy ----------------------------------------------------------
def test_deterministic_for_a_store_and_a_clock(tmp_path: Path, now: datetime) -> None:
    store = Store(tmp_path / "s")
    _full_store(store, now)
    first = build_context(store, now=now, task_id="deploy").to_json()
    again = build_context(Store(tmp_path / "s"), now=now, task_id="deploy").to_json()
    assert first == again
    later = build_context(store, now=now + timedelta(days=2), task_id="deploy").text
    assert "Past failures" not in later  # the clock, not the wall clock, decides


def test_deterministic_through_the_cli(cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "decaying", now="2026-01-01T00:00:00Z")
    cli("record-episode", stdin='{"score": 0.1}', now="2026-01-01T00:00:00Z")
    first = cli("context", now="2026-01-01T01:00:00Z").out
    assert first == cli("context", now="2026-01-01T01:00:00Z").out
    assert "Past failures" in first
    assert cli("context", now="2026-03-01T00:00:00Z").out == ""


def test_every_exported_character_passes_the_scrubber(store: Store, now: datetime) -> None:
    key = "sk-" + "Q" * 32
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----"
    _record(
        store,
        now,
        {
            "task_id": "t",
            "score": 0.1,
            "summary": "fine",
            "mistake_cards": [{"mistake_type": "m"}],
            "errors": [{"error_type": "E", "message": "m"}],
        },
    )
    # Plant raw secrets where the inbound scrubber never ran (old or imported data).
    with store.transaction():
        slot = {
            "id": "slot_raw",
            "label": "creds",
            "content": f"token {key}\n{pem}\nmail me: amy@example.com",
            "description": "",
            "limit": 5000,
            "read_only": False,
            "position": 0,
            "created_at": iso(now),
            "updated_at": iso(now),
        }
        store.put("slots", slot["id"], slot)
        task = aggregates.read_task(store, "t")
        task["recent"] = [
            {**e, "summary": f"ran from /home/zed with {key}"} for e in task["recent"]
        ]
        aggregates.write_tasks(store, {"t": task})
        glob = aggregates.read_global(store)
        glob["recent_failures"][0]["errors"][0]["message"] = "Bearer abc123def456ghi"
        store.put(aggregates.META, aggregates.EPISODES_DOC, glob)
        (card,) = store.docs("mistake_cards").values()
        store.put("mistake_cards", card["id"], {**card, "evidence": "from 192.168.1.20"})
        rule, _ = rules.upsert(
            store, "ask bob@example.com", "task:t", polarity="note", source="imported", now=now
        )
    result = build_context(store, now=now, task_id="t")
    text = result.text
    for secret in (key, "MIIEow", "/home/zed", "abc123def456", "192.168", "bob@"):
        assert secret not in text
    # Slots are curated: the e-mail address a person put there stays; their secrets do not.
    assert "mail me: amy@example.com" in text
    assert scrub(text, personal=False) == text
    for line in text.splitlines():
        assert scrub(line, personal=False) == line
    assert "[redacted:private_key]" in text and "[redacted:api_key]" in text
    dumped = json.dumps(result.to_json())
    for secret in (key, "MIIEow", "/home/zed", "abc123def456", "192.168", "bob@"):
        assert secret not in dumped
    dropped = json.dumps(build_context(store, now=now, task_id="t", budget_tokens=0).to_json())
    assert key not in dropped and "bob@" not in dropped


# -- property: the budget -------------------------------------------------------------
_words = st.text(alphabet="abcdefgh ", min_size=1, max_size=40).map(lambda s: s.strip() or "w")

_store_plan = st.fixed_dictionaries(
    {
        "slots": st.lists(_words, max_size=2),
        "rules": st.lists(st.tuples(st.booleans(), _words), max_size=4),
        "lessons": st.lists(_words, max_size=4),
        "episodes": st.lists(
            st.tuples(st.floats(0, 1), _words, st.booleans()), min_size=0, max_size=5
        ),
    }
)


def _build(plan: dict) -> Store:
    store = Store.in_memory()
    for n, text in enumerate(plan["slots"]):
        slots.set_slot(store, f"s{n}", f"slot {n} {text}", now=NOW, actor=ACTOR)
    for n, (task, text) in enumerate(plan["rules"]):
        scope = "task:t" if task else "global"
        rules.add_rule(store, f"rule {n} {text}", now=NOW, actor=ACTOR, scope=scope)
    for n, text in enumerate(plan["lessons"]):
        lessons.add_lesson(
            store, f"lesson {n} {text}", now=NOW, actor=ACTOR, on_duplicate="keep-both"
        )
    items = [
        {
            "task_id": "t",
            "score": score,
            "summary": f"episode {n} {text}",
            "mistake_cards": [{"mistake_type": f"type{n}"}] if card else [],
        }
        for n, (score, text, card) in enumerate(plan["episodes"])
    ]
    if items:
        _record(store, NOW, *items)
    return store


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=_store_plan, budget=st.integers(min_value=0, max_value=250))
def test_budget_property(plan: dict, budget: int) -> None:
    store = _build(plan)
    full = build_context(store, now=NOW, task_id="t", budget_tokens=10**6)
    priority = {(s.name, line.text): line.priority for s in full.sections for line in s.lines}
    result = build_context(store, now=NOW, task_id="t", budget_tokens=budget)
    assert result.tokens <= max(budget, 1)
    assert estimate_tokens(result.text) <= max(budget, 1)
    total = sum(len(s.lines) for s in full.sections)
    if result.cut:
        # Not one whole line fits: the first line is shown (after its slot's heading),
        # cut to fit; a store with memory never reads as an empty one.
        assert result.text and full.text
        shown = [line.text for s in result.sections for line in s.lines]
        assert len(shown) + len(result.dropped) == total and len(shown) <= 2
        first = next(line.text for s in full.sections for line in s.lines)
        assert shown[0] == first or shown[0].endswith("…")
        return
    assert bool(result.text) == bool(full.text)
    kept = [priority[(s.name, line.text)] for s in result.sections for line in s.lines]
    dropped = [priority[(d.section, d.text)] for d in result.dropped]
    assert len(kept) + len(dropped) == sum(len(s.lines) for s in full.sections)
    if kept and dropped:
        # A higher-priority line is never dropped while a lower-priority one stays.
        assert max(dropped) <= min(kept)
    if full.tokens <= budget:
        assert result.dropped == [] and result.text == full.text
