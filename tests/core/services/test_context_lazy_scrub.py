"""The context scrubs only the lines its budget may show.

A store with thousands of lessons shows a few dozen of them; the rest are dropped
without being scrubbed, and scrubbed only if they are ever shown (the JSON's
``dropped`` list). What is shown, dropped and cut must be exactly what scrubbing every
line first gives, whatever the lines hold (a redaction can lengthen a line or a
private span shorten it, which moves the budget's cut).
"""

from __future__ import annotations

import json
from datetime import datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwork.core.domain import lessons
from memwork.core.privacy import scrub
from memwork.core.services.context import default_style
from memwork.core.services.context.budget import Line, Section, fit
from memwork.core.services.context.build import _scrubbed, build_context
from memwork.core.storage.store import Store

SECRET = "hunter2xyz"
TEXTS = [
    "- read the logs first",
    "- back up before every migration, then check the replica lag twice",
    f"- deploy with password={SECRET} now",  # longer once redacted
    "- a <private>this whole long aside about the on-call rota</private> b",  # shorter
    "- mail bob@example.com about the canary",  # personal: kept in slots only
    "### creds",
    "x",
]


def _shown(kept: list[Section]) -> list[tuple[str, str | None, list[str]]]:
    return [(s.name, s.heading, [line.text for line in s.lines]) for s in kept]


@st.composite
def _sections(draw: st.DrawFn) -> list[Section]:
    out = []
    for name in draw(st.lists(st.sampled_from(["slots", "global", "task", "profile"]), max_size=4)):
        heading = draw(st.sampled_from([None, "## Heading", f"## mail bob@example.com {name}"]))
        lines = [
            Line(
                draw(st.sampled_from(TEXTS)),
                draw(st.sampled_from([10.0, 20.0, 30.0])),
                [{"kind": "lesson", "id": f"les_{n}"}],
                draw(st.sampled_from([None, None, "g1", "g2"])),
            )
            for n in range(draw(st.integers(0, 12)))
        ]
        out.append(Section(name, heading, lines))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sections=_sections(), budget=st.integers(0, 120))
def test_what_the_budget_keeps_drops_and_cuts_is_as_when_every_line_is_scrubbed_first(
    sections: list[Section], budget: int
) -> None:
    render = default_style.render
    eager = [s for s in _scrubbed(sections, None) if s.lines]
    lazy = [s for s in _scrubbed(sections, budget) if s.lines]
    kept, dropped, cut = fit(eager, budget, render)
    kept2, dropped2, cut2 = fit(lazy, budget, render)
    assert _shown(kept2) == _shown(kept)
    assert [(d.section, d.text, d.sources) for d in dropped2] == [
        (d.section, d.text, d.sources) for d in dropped
    ]
    assert [(d.section, d.text) for d in cut2] == [(d.section, d.text) for d in cut]
    # Nothing kept, dropped or cut ever reads as stored when scrubbing changes it.
    for text in [line for _, _, lines in _shown(kept2) for line in lines]:
        assert SECRET not in text and "<private>" not in text
    for d in [*dropped2, *cut2]:
        assert SECRET not in d.text and "<private>" not in d.text


def _planted(store: Store, now: datetime, count: int) -> str:
    """``count`` lessons, the least confident holding a password never scrubbed (a table
    file edited by hand); returns its id."""
    for n in range(count):
        lessons.add_lesson(
            store,
            f"When step {n} of the rollout stalls, check the canary dashboard first",
            now=now,
            actor="test",
            confidence=0.9,
        )
    added = lessons.add_lesson(
        store, "a placeholder to overwrite", now=now, actor="test", confidence=0.3
    ).lesson
    with store.transaction():
        content = f"deploy with password={SECRET} on the staging box"
        store.put("lessons", added["id"], {**added, "content": content})
    return str(added["id"])


def test_a_secret_in_a_line_the_budget_drops_never_shows(store: Store, now: datetime) -> None:
    planted = _planted(store, now, 300)
    result = build_context(store, now=now, budget_tokens=200)
    assert result.dropped, "the budget must drop most lessons"
    assert SECRET not in result.text
    # The JSON lists every dropped line, scrubbed like every line it shows.
    document = json.dumps(result.to_json())
    assert SECRET not in document
    (line,) = [d for d in result.to_json()["dropped"] if d["sources"][0]["id"] == planted]
    assert line["line"] == scrub(f"- deploy with password={SECRET} on the staging box")
    assert "[redacted:password]" in line["line"]


def test_the_budget_the_drop_note_names_keeps_every_line(store: Store, now: datetime) -> None:
    for n in range(300):
        lessons.add_lesson(
            store, f"When step {n} of the rollout stalls, check the canary", now=now, actor="t"
        )
    result = build_context(store, now=now, budget_tokens=200)
    note = result.drop_note()
    assert note is not None
    assert f"dropped {len(result.dropped)} lines" in note
    assert f"(--budget {result.tokens_needed} keeps every line)" in note
    every = build_context(store, now=now, budget_tokens=result.tokens_needed)
    assert not every.dropped and not every.cut
    # One token less drops a line: the figure is the least that keeps them all.
    assert build_context(store, now=now, budget_tokens=result.tokens_needed - 1).dropped
