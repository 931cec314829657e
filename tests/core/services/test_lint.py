"""Memory lint: over-limit and stale slots, duplicates, contradictions, unmerged
near-duplicates and [AVOID] rules a lesson contradicts. Described in core/services/lint.py."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path

from memwork.core.domain import lessons, rules, slots
from memwork.core.domain.slots import put_imported_slot
from memwork.core.services import lint
from memwork.core.storage.store import Store
from tests.conftest import folder_digest

ACTOR = "tui"
DEMO = Path(__file__).resolve().parents[3] / "data" / "demo"


def _kinds(found: list[dict]) -> list[str]:
    return [f["kind"] for f in found]


def test_a_clean_store_has_no_findings(store: Store, now: datetime) -> None:
    slots.set_slot(store, "persona", "You are terse.", now=now, actor=ACTOR)
    lessons.add_lesson(store, "Pin the image digest", now=now, actor=ACTOR)
    rules.add_rule(store, "[AVOID] Skipped the canary stage", now=now, actor=ACTOR)
    assert lint.lint(store, now) == []


def test_each_kind_on_a_small_store(store: Store, now: datetime) -> None:
    old = now - timedelta(days=31)
    over = put_imported_slot(
        store, {"label": "imported", "content": "x" * 12, "limit": 10}, now=now, actor=ACTOR
    )
    stale = slots.set_slot(
        store, "goals", "Ship v2\n- Never page before 08:00", now=old, actor=ACTOR
    )
    slots.set_slot(store, "fresh", "Recently edited", now=now - timedelta(days=29), actor=ACTOR)
    copy = lessons.add_lesson(store, "never page before 08:00", now=now, actor=ACTOR).lesson
    always = lessons.add_lesson(store, "Always squash before merging", now=now, actor=ACTOR)
    never = lessons.add_lesson(store, "Never squash before merging", now=now, actor=ACTOR)
    near = [
        lessons.add_lesson(store, text, on_duplicate="keep-both", now=now, actor=ACTOR).lesson
        for text in ("Link the runbook in every incident", "Link the runbook in the incident")
    ]
    rule, _ = rules.add_rule(
        store,
        "[AVOID] Promoted before the error budget recovered",
        scope="task:deploy",
        now=now,
        actor=ACTOR,
    )
    promote = lessons.add_lesson(
        store,
        "Promote hotfixes before the error budget recovers",
        scope="task:deploy",
        now=now,
        actor=ACTOR,
    ).lesson
    found = lint.lint(store, now)
    assert [(f["kind"], f["records"]) for f in found] == [
        ("over_limit", [over["id"]]),
        ("stale_slot", [stale["id"]]),
        ("duplicate", [stale["id"], copy["id"]]),
        ("contradiction", [always.lesson["id"], never.lesson["id"]]),
        ("near_duplicates", [near[0]["id"], near[1]["id"]]),
        ("avoid_contradicts_lesson", [rule["id"], promote["id"]]),
    ]
    messages = [f["message"] for f in found]
    assert messages[0] == "slot imported is over its limit: 12/10 characters"
    assert messages[1] == "slot goals untouched for 31 days (since 2026-10-01)"
    assert messages[2] == (
        f"same content in slot goals, lesson {copy['id']}: “Never page before 08:00”"
    )
    # Findings by record, for each record's detail.
    index = lint.by_record(found)
    assert _kinds(index[stale["id"]]) == ["stale_slot", "duplicate"]
    assert _kinds(index[never.lesson["id"]]) == ["contradiction"]


def test_identical_lessons_are_one_duplicate_not_also_near_duplicates(
    store: Store, now: datetime
) -> None:
    first = lessons.add_lesson(store, "Pin the image digest", now=now, actor=ACTOR).lesson
    second = lessons.add_lesson(
        store, "Pin the image digest", scope="task:deploy", now=now, actor=ACTOR
    ).lesson
    assert [(f["kind"], f["records"]) for f in lint.lint(store, now)] == [
        ("duplicate", [first["id"], second["id"]])
    ]
    # Forgotten, it is no longer in any context: no finding.
    lessons.forget(store, second["id"], now=now, actor=ACTOR)
    assert lint.lint(store, now) == []


def test_lint_on_the_demo_store_finds_every_kind(cli, tmp_path: Path) -> None:  # noqa: ANN001
    copy = tmp_path / "demo"
    shutil.copytree(DEMO, copy)
    before = folder_digest(copy)
    done = cli("--db", str(copy), "lint", "--json", now="2026-11-20T12:00:00Z")
    assert done.code == 0
    found = done.json()
    # Every kind but stale_rule: the demo's consolidated rules all come from its recent
    # episodes (tests/core/services/test_context_consolidated.py makes a stale one).
    assert sorted(set(_kinds(found))) == sorted(set(lint.KINDS) - {"stale_rule"})
    for finding in found:
        assert set(finding) == {"kind", "records", "message"}
        assert finding["records"] and finding["message"]
    by_kind = {f["kind"]: f["message"] for f in found}
    assert "corrections/support-mistakes is over its limit" in by_kind["over_limit"]
    assert "Do not page the database team before 08:00 UTC." in by_kind["duplicate"]
    assert "Pause reindex jobs during peak traffic" in by_kind["contradiction"]
    assert (
        "[AVOID] Promoted before the error budget recovered" in by_kind["avoid_contradicts_lesson"]
    )
    text = cli("--db", str(copy), "lint", now="2026-11-20T12:00:00Z")
    assert text.code == 0 and text.err == f"{len(found)} findings\n"
    assert text.out.splitlines()[0].startswith("over_limit: slot corrections/support-mistakes")
    assert folder_digest(copy) == before  # lint only reads
