"""Memory lint: what a curator should look at, found by reading the store.

Each finding is ``{"kind", "records", "message"}``: what is wrong, the ids of
the records involved (the workbench shows a finding on each of them) and one
line for a person. Nothing is changed; ``memwork lint`` exits 0 whatever it
finds. The kinds, in the order they are reported:

- ``over_limit``: a slot longer than its limit (only an import can leave one).
- ``stale_slot``: a slot untouched for :data:`STALE_DAYS` days or more.
- ``duplicate``: slots and live lessons with the same content (whitespace and
  case aside; a slot's whole content or one of its lines), which the context
  would carry twice.
- ``contradiction``: two live lessons that negate each other
  (:func:`core.domain.contradictions.lesson_pairs`).
- ``near_duplicates``: a group of live lessons of one scope, >= 90 similar,
  not merged yet (Rules & lessons, ``m``). A group whose members all have the
  same text is a ``duplicate`` instead.
- ``avoid_contradicts_lesson``: an active ``[AVOID]`` rule that a live lesson
  tells the agent to do (:func:`core.domain.contradictions.rule_conflicts`).
- ``duplicate_rule``: an active ``[HIGH SCORE x]`` rule (heuristic consolidation)
  whose summary a newer active one repeats with another score: the default
  context shows the summary once, the episodic style every copy. The fix:
  switch the older copy off (``memwork rule deactivate ID``; ``t`` in the
  workbench's findings).
- ``stale_rule``: an active ``[HIGH SCORE x]`` rule that no episode among the
  recent ones (the window consolidation reads) gives any more: the task has
  moved on, or the rule came with an import. Same fix.
- ``dangling_link``: a link one of whose records is no longer in the store (an
  observation dropped past its session's cap, a record an import did not bring).
  Links memwork keeps itself between rules or cards and their episodes are made
  and moved with their records and are not checked; the absorbed end of a
  ``merged_into`` link is gone by design.

:func:`lint` reads slots, lessons and active rules only (never the episode
history), so the workbench can count findings on every change; the ``lint``
operation (:func:`lint_op`) also reads every link table for dangling links.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, NamedTuple

from ..base.clock import parse_instant
from ..base.text import clip, normalise
from ..domain import (
    aggregates,
    consolidated_rules,
    consolidation,
    contradictions,
    lessons,
    readable,
    rules,
    slots,
)
from ..domain.decay import is_live
from ..storage.store import Store

STALE_DAYS = 30
KINDS = (
    "over_limit",
    "stale_slot",
    "duplicate",
    "contradiction",
    "near_duplicates",
    "avoid_contradicts_lesson",
    "duplicate_rule",
    "stale_rule",
    "dangling_link",
)

Doc = dict[str, Any]


def _finding(kind: str, records: list[str], message: str) -> Doc:
    return {"kind": kind, "records": records, "message": message}


def _quote(text: str, width: int = 60) -> str:
    return f"“{clip(text, width)}”"


class Inputs(NamedTuple):
    """What the findings are made from, read in one consistent read."""

    slots: list[Doc]
    lessons: list[Doc]
    rules: list[Doc]
    recent: list[Doc]

    def findings(self, now: datetime) -> list[Doc]:
        """The findings for these records (no store: run outside any read, as comparing
        thousands of lessons takes seconds and a read holds every writer up)."""
        return findings(self.slots, self.lessons, self.rules, now, self.recent)


def read_inputs(store: Store) -> Inputs:
    """The records lint looks at (call inside a read of the store)."""
    return Inputs(
        [slots.view(dict(d)) for d in readable.docs(store, slots.TABLE).values()],
        lessons.all_lessons(store),
        rules.all_rules(store, active_only=True),
        aggregates.read_global(store).get("recent") or [],
    )


def lint(store: Store, now: datetime) -> list[Doc]:
    """Every finding, in the order of :data:`KINDS` (one consistent read, and the
    findings worked out after it)."""
    with store.reading():
        inputs = read_inputs(store)
    return inputs.findings(now)


def lint_op(store: Store, now: datetime) -> list[Doc]:
    """The ``lint`` operation: :func:`lint` and the dangling links."""
    from ..domain.link_ops import dangling
    from ..ledger.links import kind_of

    found = lint(store, now)
    with store.reading():
        for link in dangling(store):
            said = {"from": "starts from", "to": "points to"}
            ends = " and ".join(
                f"{said[end]} {kind_of(link[end])} {link[end]}" for end in link["missing"]
            )
            found.append(
                _finding(
                    "dangling_link",
                    [link["id"], *(link[e] for e in ("from", "to") if e not in link["missing"])],
                    f"{link['kind']} link {link['from']} -> {link['to']} {ends}, which is no "
                    "longer in the store",
                )
            )
    return found


def findings(
    all_slots: list[Doc],
    all_lessons: list[Doc],
    active_rules: list[Doc],
    now: datetime,
    recent: list[Doc] | None = None,
) -> list[Doc]:
    """The findings for these records (plain data: no store; ``recent``: the global
    aggregate's recent episodes, for consolidated rules; None leaves those out)."""
    out: list[Doc] = []
    ordered = sorted(all_slots, key=lambda s: (s.get("position", 0), s["label"]))
    for slot in ordered:
        if slots.is_over_limit(slot):
            out.append(
                _finding(
                    "over_limit",
                    [slot["id"]],
                    f"slot {slot['label']} is over its limit: "
                    f"{len(slot['content'])}/{slot['limit']} characters",
                )
            )
    stale_before = now - timedelta(days=STALE_DAYS)
    for slot in ordered:
        touched = parse_instant(slot["updated_at"])
        if touched <= stale_before:
            days = (now - touched).days
            out.append(
                _finding(
                    "stale_slot",
                    [slot["id"]],
                    f"slot {slot['label']} untouched for {days} days "
                    f"(since {slot['updated_at'][:10]})",
                )
            )
    live = sorted(
        (x for x in all_lessons if is_live(x, now)), key=lambda x: (x["created_at"], x["id"])
    )
    out += _duplicates(ordered, live)
    for first, second in contradictions.lesson_pairs(live, now):
        out.append(
            _finding(
                "contradiction",
                [first["id"], second["id"]],
                f"lesson {first['id']} {_quote(first['content'], 40)} contradicts "
                f"{second['id']} {_quote(second['content'], 40)}",
            )
        )
    for group in lessons.near_duplicate_clusters(live, now):
        if len({normalise(x["content"]) for x in group}) < 2:
            continue  # all the same text: reported as a duplicate
        out.append(
            _finding(
                "near_duplicates",
                [x["id"] for x in group],
                f"{len(group)} near-duplicate lessons ({group[0]['scope']}) not merged: "
                f"{_quote(group[0]['content'], 50)} …",
            )
        )
    for rule, lesson in contradictions.rule_conflicts(active_rules, live, now):
        out.append(
            _finding(
                "avoid_contradicts_lesson",
                [rule["id"], lesson["id"]],
                f"rule {_quote(rule['text'], 50)} ({rule['scope']}) is contradicted by lesson "
                f"{lesson['id']} {_quote(lesson['content'], 50)}",
            )
        )
    if recent is not None:
        out += _consolidated([r for r in active_rules if r["scope"] == "global"], recent)
    return out


def _consolidated(global_rules: list[Doc], recent: list[Doc]) -> list[Doc]:
    """``duplicate_rule`` and ``stale_rule`` findings, oldest rule first."""
    out = []
    newer = consolidated_rules.repeats(global_rules)
    given = consolidated_rules.tasks_by_summary(
        e for e in recent if float(e.get("score", 0)) >= consolidation.HIGH_SCORE
    )
    for rule in sorted(global_rules, key=lambda r: r["seq"]):
        key = consolidated_rules.key(rule["text"])
        if key is None:
            continue
        fix = f"memwork rule deactivate {rule['id']} switches it off"
        if rule["id"] in newer:
            kept = newer[rule["id"]]
            out.append(
                _finding(
                    "duplicate_rule",
                    [rule["id"], kept["id"]],
                    f"rule {_quote(rule['text'], 60)} repeats the newer {kept['id']} "
                    f"{_quote(kept['text'], 40)}; {fix}",
                )
            )
        elif key not in given:
            out.append(
                _finding(
                    "stale_rule",
                    [rule["id"]],
                    f"rule {_quote(rule['text'], 60)} comes from no recent episode "
                    f"(consolidation would not write it now); {fix}",
                )
            )
    return out


def _duplicates(ordered_slots: list[Doc], live: list[Doc]) -> list[Doc]:
    groups: dict[str, list[tuple[str, str]]] = {}
    shown: dict[str, str] = {}  # normalised text -> as first written
    for slot in ordered_slots:
        # The whole content, and each line of it: a lesson that repeats one line of
        # a slot reaches the context twice as surely as a copied slot does.
        content = slot.get("content", "")
        texts = [content] + [
            line.strip().removeprefix("- ").removeprefix("* ") for line in content.splitlines()
        ]
        keys: dict[str, str] = {}
        for text in texts:
            if normalise(text):
                keys.setdefault(normalise(text), text.strip())
        for key, text in sorted(keys.items()):
            shown.setdefault(key, text)
            groups.setdefault(key, []).append((slot["id"], f"slot {slot['label']}"))
    for lesson in live:
        key = normalise(lesson["content"])
        shown.setdefault(key, lesson["content"])
        groups.setdefault(key, []).append((lesson["id"], f"lesson {lesson['id']}"))
    out = []
    seen: set[frozenset[str]] = set()
    for text, members in groups.items():
        records = frozenset(record for record, _ in members)
        if len(records) < 2 or records in seen:
            continue  # one record, or the same records as a finding already made
        seen.add(records)
        names = ", ".join(name for _, name in members)
        out.append(
            _finding(
                "duplicate",
                [record for record, _ in members],
                f"same content in {names}: {_quote(shown[text])}",
            )
        )
    return out


def by_record(found: list[Doc]) -> dict[str, list[Doc]]:
    """Record id → the findings that name it (for a record's detail)."""
    index: dict[str, list[Doc]] = {}
    for finding in found:
        for record in finding["records"]:
            index.setdefault(record, []).append(finding)
    return index
