"""Rules: derivation thresholds, the active window, reactivation, manual rules.

Described in docs/MEMORY.md, Rules.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from memwork.core.base.errors import InvalidInput
from memwork.core.domain import episodes, rules
from memwork.core.ledger import audit
from memwork.core.storage.store import Store
from tests.conftest import folder_digest

ACTOR = "test"


def _record(store: Store, now: datetime, *items: dict) -> list[dict]:
    return episodes.record_episodes(store, list(items), now=now, actor=ACTOR)


def _texts(store: Store, scope: str, *, active_only: bool = True) -> list[str]:
    with store.reading():
        return [r["text"] for r in rules.in_scope(store, scope, active_only=active_only)]


def _inactive(store: Store, scope: str) -> list[str]:
    with store.reading():
        return [
            r["text"] for r in rules.in_scope(store, scope, active_only=False) if not r["active"]
        ]


# -- derivation --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (1.0, ["[WORKS] s1", "[WORKS] s2"]),
        (0.85, ["[WORKS] s1", "[WORKS] s2"]),
        (0.849, []),
        (0.5, []),
        (0.4999, ["[AVOID] m1", "[AVOID] m2"]),
        (0.0, ["[AVOID] m1", "[AVOID] m2"]),
    ],
)
def test_derivation_thresholds(store: Store, now: datetime, score: float, expected: list) -> None:
    _record(
        store,
        now,
        {"task_id": "t", "score": score, "successes": ["s1", "s2"], "mistakes": ["m1", "m2"]},
    )
    assert _texts(store, "task:t") == expected
    assert _texts(store, "global") == []


def test_derived_rule_fields(store: Store, now: datetime) -> None:
    _record(store, now, {"task_id": "deploy", "score": 0.9, "successes": ["ran the canary"]})
    _record(store, now, {"task_id": "deploy", "score": 0.1, "mistakes": ["skipped tests"]})
    with store.reading():
        works, avoid = rules.in_scope(store, "task:deploy")
    assert (works["text"], works["polarity"], works["source"]) == (
        "[WORKS] ran the canary",
        "works",
        "derived",
    )
    assert (avoid["text"], avoid["polarity"], avoid["source"]) == (
        "[AVOID] skipped tests",
        "avoid",
        "derived",
    )
    assert works["scope"] == avoid["scope"] == "task:deploy"
    assert works["active"] and avoid["active"]
    assert works["seq"] < avoid["seq"]


def test_rules_are_per_task(store: Store, now: datetime) -> None:
    _record(
        store,
        now,
        {"task_id": "a", "score": 0.9, "successes": ["x"]},
        {"task_id": "b", "score": 0.9, "successes": ["y"]},
    )
    assert _texts(store, "task:a") == ["[WORKS] x"]
    assert _texts(store, "task:b") == ["[WORKS] y"]


def test_newest_ten_per_task_are_active(store: Store, now: datetime) -> None:
    for n in range(13):
        _record(store, now, {"task_id": "t", "score": 0.1, "mistakes": [f"m{n}"]})
    assert _texts(store, "task:t") == [f"[AVOID] m{n}" for n in range(3, 13)]
    assert _inactive(store, "task:t") == ["[AVOID] m0", "[AVOID] m1", "[AVOID] m2"]
    # The window of one task does not touch another's.
    _record(store, now, {"task_id": "u", "score": 0.1, "mistakes": ["only"]})
    assert _texts(store, "task:u") == ["[AVOID] only"]
    assert len(_texts(store, "task:t")) == 10


def test_many_rules_from_one_episode_keep_the_last_ten(store: Store, now: datetime) -> None:
    _record(store, now, {"task_id": "t", "score": 0.9, "successes": [f"s{n}" for n in range(12)]})
    assert _texts(store, "task:t") == [f"[WORKS] s{n}" for n in range(2, 12)]


def test_an_active_rule_is_not_added_again(store: Store, now: datetime) -> None:
    _record(store, now, {"task_id": "t", "score": 0.1, "mistakes": ["a", "b", "a"]})
    _record(store, now, {"task_id": "t", "score": 0.1, "mistakes": ["c"]})
    _record(store, now, {"task_id": "t", "score": 0.1, "mistakes": ["a"]})
    # "a" keeps its place (it is not moved to the end) and exists once.
    assert _texts(store, "task:t") == ["[AVOID] a", "[AVOID] b", "[AVOID] c"]
    assert len(_texts(store, "task:t", active_only=False)) == 3


def test_an_inactive_rule_comes_back_as_the_newest(store: Store, now: datetime) -> None:
    for n in range(11):
        _record(store, now, {"task_id": "t", "score": 0.1, "mistakes": [f"m{n}"]})
    assert _inactive(store, "task:t") == ["[AVOID] m0"]
    with store.reading():
        old = next(r for r in rules.in_scope(store, "task:t", active_only=False) if not r["active"])
    _record(store, now + timedelta(minutes=5), {"task_id": "t", "score": 0.1, "mistakes": ["m0"]})
    assert _texts(store, "task:t") == [f"[AVOID] m{n}" for n in (*range(2, 11), 0)]
    assert _inactive(store, "task:t") == ["[AVOID] m1"]
    with store.reading():
        all_rules = rules.in_scope(store, "task:t", active_only=False)
    again = [r for r in all_rules if r["text"] == "[AVOID] m0"]
    # The same record, not a copy.
    assert len(again) == 1 and again[0]["id"] == old["id"]
    assert again[0]["updated_at"] == "2026-11-01T12:05:00.000000Z"


def test_derived_rules_come_from_scrubbed_text(store: Store, now: datetime) -> None:
    _record(store, now, {"task_id": "t", "score": 0.1, "mistakes": ["mailed eve@example.com"]})
    assert _texts(store, "task:t") == ["[AVOID] mailed [redacted:email]"]


# -- manual rules (API) -----------------------------------------------------------------
def test_add_rule_polarity_follows_the_prefix(store: Store, now: datetime) -> None:
    works, outcome = rules.add_rule(store, "[WORKS] small commits", now=now, actor=ACTOR)
    assert outcome == "added"
    assert (works["polarity"], works["source"], works["scope"]) == ("works", "manual", "global")
    avoid, _ = rules.add_rule(store, "[AVOID] force push", now=now, actor=ACTOR, scope="task:git")
    assert avoid["polarity"] == "avoid" and avoid["scope"] == "task:git"
    note, _ = rules.add_rule(store, "  Prefer\n  rg over grep ", now=now, actor=ACTOR)
    assert (note["text"], note["polarity"]) == ("Prefer rg over grep", "note")


def test_add_rule_twice_is_unchanged(store: Store, now: datetime) -> None:
    first, _ = rules.add_rule(store, "be brief", now=now, actor=ACTOR)
    again, outcome = rules.add_rule(store, "be brief", now=now, actor=ACTOR)
    assert outcome == "unchanged" and again["id"] == first["id"]
    assert _texts(store, "global") == ["be brief"]
    with store.reading():
        actions = [e["action"] for e in audit.entries(store, newest_first=False)]
    assert actions == ["add"]


@pytest.mark.parametrize(
    ("text", "scope", "field"),
    [("   ", "global", "text"), ("x", "project:p", "scope"), ("x", "task:", "scope")],
)
def test_add_rule_refusals(store: Store, now: datetime, text: str, scope: str, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        rules.add_rule(store, text, now=now, actor=ACTOR, scope=scope)
    assert caught.value.field == field
    with store.reading():
        assert rules.all_rules(store) == []


def test_global_window_is_twenty(store: Store, now: datetime) -> None:
    for n in range(23):
        rules.add_rule(store, f"g{n}", now=now, actor=ACTOR)
    assert _texts(store, "global") == [f"g{n}" for n in range(3, 23)]
    assert _inactive(store, "global") == ["g0", "g1", "g2"]
    _, outcome = rules.add_rule(store, "g1", now=now, actor=ACTOR)
    assert outcome == "reactivated"
    assert _texts(store, "global") == [*(f"g{n}" for n in range(4, 23)), "g1"]


def test_manual_task_rules_share_the_window_of_ten(store: Store, now: datetime) -> None:
    for n in range(9):
        _record(store, now, {"task_id": "t", "score": 0.9, "successes": [f"s{n}"]})
    rules.add_rule(store, "manual one", now=now, actor=ACTOR, scope="task:t")
    rules.add_rule(store, "manual two", now=now, actor=ACTOR, scope="task:t")
    assert len(_texts(store, "task:t")) == 10
    assert _texts(store, "task:t")[-2:] == ["manual one", "manual two"]
    assert _inactive(store, "task:t") == ["[WORKS] s0"]


def test_set_active_by_hand(store: Store, now: datetime) -> None:
    a, _ = rules.add_rule(store, "a", now=now, actor=ACTOR)
    rules.add_rule(store, "b", now=now, actor=ACTOR)
    rules.set_active(store, a["id"], False, now=now, actor=ACTOR)
    assert _texts(store, "global") == ["b"]
    rules.set_active(store, a["id"], True, now=now, actor=ACTOR)
    assert _texts(store, "global") == ["b", "a"]


# -- CLI ---------------------------------------------------------------------------------
def test_cli_rule_add_and_list(cli) -> None:  # noqa: ANN001
    done = cli("rule", "add", "[AVOID] rm -rf /")
    assert done.code == 0 and done.out.startswith("rule_") and done.err == ""
    rid = done.out.strip()
    assert cli("rule", "add", "check the CI", "--scope", "task:ship").code == 0
    listed = cli("rule", "list", "--json").json()
    assert [(r["scope"], r["text"]) for r in listed] == [
        ("global", "[AVOID] rm -rf /"),
        ("task:ship", "check the CI"),
    ]
    assert listed[0]["id"] == rid and listed[0]["polarity"] == "avoid"
    text = cli("rule", "list").out.splitlines()
    assert len(text) == 2 and text[0].startswith(rid) and "[AVOID] rm -rf /" in text[0]
    only = cli("rule", "list", "--scope", "task:ship", "--json").json()
    assert [r["text"] for r in only] == ["check the CI"]


def test_cli_rule_add_again_says_so(cli) -> None:  # noqa: ANN001
    first = cli("rule", "add", "x").out
    again = cli("rule", "add", "x")
    assert again.code == 0 and again.out == first
    assert again.err == f"already active: {first.strip()}\n"
    assert cli("rule", "add", "x", "--json").json()["outcome"] == "unchanged"


def test_cli_rule_list_all_includes_inactive(cli) -> None:  # noqa: ANN001
    for n in range(21):
        cli("rule", "add", f"rule {n}")
    active = cli("rule", "list", "--json").json()
    everything = cli("rule", "list", "--all", "--json").json()
    assert len(active) == 20 and len(everything) == 21
    assert [r["text"] for r in everything if not r["active"]] == ["rule 0"]
    text = cli("rule", "list", "--all").out.splitlines()
    assert [line for line in text if line.endswith("(inactive)")][0].split()[-3:] == [
        "rule",
        "0",
        "(inactive)",
    ]
    done = cli("rule", "add", "rule 0")
    assert "reactivated" in done.err
    assert [r["text"] for r in cli("rule", "list", "--json").json()][-1] == "rule 0"


def test_cli_rule_add_refusal_is_exit_2_and_writes_nothing(cli, db: Path) -> None:  # noqa: ANN001
    cli("rule", "add", "seed")
    before = folder_digest(db)
    done = cli("rule", "add", "x", "--scope", "nowhere")
    assert done.code == 2 and done.out == ""
    assert done.err.startswith("memwork: scope: must be 'global' or 'task:<task_id>'")
    assert done.err.count("\n") == 1
    assert folder_digest(db) == before


def test_cli_derived_rules_show_in_the_list(cli) -> None:  # noqa: ANN001
    cli("record-episode", stdin='{"task_id": "t", "score": 0.2, "mistakes": ["no backup"]}')
    listed = cli("rule", "list", "--json").json()
    assert [(r["scope"], r["text"], r["source"]) for r in listed] == [
        ("task:t", "[AVOID] no backup", "derived")
    ]


def test_inactive_rules_move_to_an_archive_and_come_back_when_reactivated(
    store: Store, now: datetime
) -> None:
    """The active table (what the context reads) stays at the window size."""
    from memwork.core.storage.tables import rule_table

    for n in range(30):
        rules.add_rule(store, f"[AVOID] mistake {n}", scope="task:t", now=now, actor="cli")
    with store.reading():
        assert len(store.docs(rule_table("task:t"))) == rules.ACTIVE_PER_TASK
        archived = [
            r for name in store.table_names("rules.archive") for r in store.docs(name).values()
        ]
        assert len(archived) == 20 and not any(r["active"] for r in archived)
    doc, outcome = rules.add_rule(store, "[AVOID] mistake 0", scope="task:t", now=now, actor="cli")
    assert outcome == "reactivated"
    with store.reading():
        active = rules.in_scope(store, "task:t")
        assert active[-1]["id"] == doc["id"] and len(active) == rules.ACTIVE_PER_TASK
        assert len(rules.in_scope(store, "task:t", active_only=False)) == 30


def test_rules_archived_earlier_in_the_same_batch_come_back(store: Store, now: datetime) -> None:
    """Several rules leave the window into one archive chunk inside one transaction;
    proposing them again reactivates each (same id), never adds a second copy."""
    scope = "task:batch"
    same_bucket = [f"[WORKS] step {n}" for n in range(3)]
    fillers = [f"[WORKS] filler {n}" for n in range(rules.ACTIVE_PER_TASK)]
    with store.transaction():
        first_ids = {}
        for text in same_bucket:
            doc, _ = rules.upsert(store, text, scope, polarity="works", source="derived", now=now)
            first_ids[text] = doc["id"]
        for text in fillers:  # pushes the three out of the window, one after another
            rules.upsert(store, text, scope, polarity="works", source="derived", now=now)
            rules.enforce_window(store, scope, now)
        for text in same_bucket:
            doc, outcome = rules.upsert(
                store, text, scope, polarity="works", source="derived", now=now
            )
            assert outcome == "reactivated" and doc["id"] == first_ids[text]
            rules.enforce_window(store, scope, now)
    everything = rules.in_scope(store, scope, active_only=False)
    assert len(everything) == len(same_bucket) + len(fillers)
    assert len({r["text"] for r in everything}) == len(everything)
