"""Sections, lines with drop priorities, rendering and the token budget.

Tokens are an estimate: ceil(characters / 3), as the agent-memory server
estimates them (a tokenizer is far too slow to load on every agent step). When
the rendered context is over budget, whole lines go, lowest priority first and,
within a priority, from the bottom up; a section whose lines are all gone loses
its heading. Lines that share a ``group`` (a slot: its ``### label`` heading and
its text) are kept or dropped together, so the context never ends with a heading
and no body. A budget too small for any whole line still leaves the first line
(under its headings), cut to fit with an ellipsis: a store with memory never
reads as an empty one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ...base.env_settings import DEFAULT_TOKEN_BUDGET

#: Characters per estimated token. Three, not four: English prose averages about four
#: characters a token, but code, ids and punctuation-heavy lines run shorter, and a
#: budget must not let through more text than it promises.
CHARS_PER_TOKEN = 3
#: The default style's token budget when the caller gives none (said in base, which the
#: environment's settings read too).
DEFAULT_BUDGET = DEFAULT_TOKEN_BUDGET


def estimate_tokens(text: str) -> int:
    """The token estimate used everywhere: ceil(chars / 3)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


# Plain classes rather than dataclasses: importing dataclasses (inspect, ast,
# tokenize...) costs ~8 ms, paid on every `memwork context` call.
class Line:
    """One line of the context, how early it is dropped (lower goes first) and the
    records it came from (``core.services.context.sources`` references).

    Lines with the same ``group`` (within a section) are dropped together.
    """

    __slots__ = ("text", "priority", "sources", "group", "scrub_as")

    def __init__(
        self,
        text: str,
        priority: float,
        sources: list[dict[str, Any]] | None = None,
        group: str | None = None,
        scrub_as: bool | None = None,
    ) -> None:
        self.text = text
        self.priority = priority
        self.sources = sources if sources is not None else []
        self.group = group
        #: None: ``text`` is as shown. Else ``text`` is as stored, not yet scrubbed (a line
        #: the budget surely drops is never shown), and is scrubbed with
        #: ``personal=scrub_as`` if it ever is (:class:`Dropped` does that).
        self.scrub_as = scrub_as


class Section:
    """A heading (optional) and its lines."""

    __slots__ = ("name", "heading", "lines")

    def __init__(self, name: str, heading: str | None, lines: list[Line] | None = None) -> None:
        self.name = name
        self.heading = heading
        self.lines: list[Line] = lines if lines is not None else []


Renderer = Callable[[list[Section]], str]


class Dropped:
    """A line the budget removed (and the records it came from)."""

    __slots__ = ("section", "_text", "sources", "_scrub_as")

    def __init__(
        self,
        section: str,
        text: str,
        sources: list[dict[str, Any]] | None = None,
        scrub_as: bool | None = None,
    ) -> None:
        self.section = section
        self._text = text
        self.sources = sources if sources is not None else []
        self._scrub_as = scrub_as

    @classmethod
    def of(cls, section: str, line: Line) -> Dropped:
        """``line`` of ``section``, dropped."""
        return cls(section, line.text, line.sources, line.scrub_as)

    @property
    def text(self) -> str:
        """The line as it would have been shown (scrubbed when first asked for, if the
        budget dropped it before it was)."""
        if self._scrub_as is not None:
            from ...privacy import scrub

            self._text, self._scrub_as = scrub(self._text, personal=self._scrub_as), None
        return self._text


def fit(
    sections: list[Section], budget: int, render: Renderer
) -> tuple[list[Section], list[Dropped], list[Dropped]]:
    """Drop lines until the rendered text fits ``budget`` tokens (a group goes whole,
    its lines listed in the order they appear).

    Returns the sections kept, the lines dropped and the lines shown cut: when not
    one whole line fits, the first line (with its section's heading, and a slot's
    ``### label`` line before it) is kept, cut with an ellipsis to fit.
    """
    live = [Section(s.name, s.heading, list(s.lines)) for s in sections if s.lines]
    if not live:
        return [], [], []
    first = Section(live[0].name, live[0].heading, list(live[0].lines))
    dropped = _sure_to_go(live, budget)
    live = [s for s in live if s.lines]
    while live and estimate_tokens(render(live)) > max(0, budget):
        # The lowest priority present; among its lines, the one furthest down.
        low = min(line.priority for s in live for line in s.lines)
        for section in reversed(live):
            hits = [i for i, line in enumerate(section.lines) if line.priority == low]
            if hits:
                group = section.lines[hits[-1]].group
                if group is None:
                    going = [hits[-1]]
                else:
                    going = [i for i, x in enumerate(section.lines) if x.group == group]
                dropped.extend(Dropped.of(section.name, section.lines[i]) for i in going)
                section.lines = [x for i, x in enumerate(section.lines) if i not in going]
                break
        live = [s for s in live if s.lines]
    if live:
        return live, dropped, []
    return _first_line_cut(first, dropped, budget, render)


def _sure_to_go(live: list[Section], budget: int) -> list[Dropped]:
    """Take out, in place, the lines the loop in :func:`fit` would surely drop, and
    return them in the order it would have dropped them.

    Lines of one priority go from the bottom up, so a line can stay only if every line
    of its priority above it stays: once those lines alone (with their newlines) are
    over the budget, the line and every one below it of that priority must go, and
    before them every line of a lower priority. Taking them out at once keeps a store
    with thousands of lessons from re-rendering the context once per dropped line.
    """
    room = max(0, budget) * CHARS_PER_TOKEN
    used: dict[float, int] = {}
    over: dict[float, int] = {}  # priority -> position (document order) of its first line over
    at = 0
    for section in live:
        for line in section.lines:
            total = used.get(line.priority, -1) + len(line.text) + 1
            used[line.priority] = total
            if total > room and line.priority not in over:
                over[line.priority] = at
            at += 1
    if not over:
        return []
    top = max(over)
    start = over[top]
    at = 0
    going: list[tuple[int, int, float, str | None]] = []  # (section, index, priority, group)
    for n, section in enumerate(live):
        for i, line in enumerate(section.lines):
            if line.priority < top or (line.priority == top and at >= start):
                going.append((n, i, line.priority, line.group))
            at += 1
    # Whole groups: a group with any line going goes whole.
    groups = {(n, g) for n, _, _, g in going if g is not None}
    marked = {(n, i) for n, i, _, _ in going}
    for n, section in enumerate(live):
        for i, line in enumerate(section.lines):
            if line.group is not None and (n, line.group) in groups:
                marked.add((n, i))
    out: list[Dropped] = []
    for priority in sorted({live[n].lines[i].priority for n, i in marked}):
        done: set[tuple[int, str]] = set()
        for n in reversed(range(len(live))):
            section = live[n]
            for i in reversed(range(len(section.lines))):
                line = section.lines[i]
                if (n, i) not in marked or line.priority != priority:
                    continue
                if line.group is None:
                    out.append(Dropped.of(section.name, line))
                elif (n, line.group) not in done:
                    done.add((n, line.group))
                    out.extend(
                        Dropped.of(section.name, x) for x in section.lines if x.group == line.group
                    )
    for n, section in enumerate(live):
        section.lines = [x for i, x in enumerate(section.lines) if (n, i) not in marked]
    return out


def could_stay(sections: list[Section], budget: int, shown: Callable[[int, int], str]) -> None:
    """Ask ``shown(section, line)`` for the text of every line :func:`fit` might keep
    within ``budget``, and of no other (the others are surely dropped, so a caller need
    not scrub them): the rule of :func:`_sure_to_go`, walked from the highest priority
    down. Each line's shown length is added to its priority's; the first priority to
    pass the budget is the last that keeps any line, and its lines from that point go
    with every lower priority. The first section's first lines are asked for too: a
    budget too small for any whole line shows the first one cut."""
    room = max(0, budget) * CHARS_PER_TOKEN
    by_priority: dict[float, list[tuple[int, int]]] = {}
    for n, s in enumerate(sections):
        for i, line in enumerate(s.lines):
            by_priority.setdefault(line.priority, []).append((n, i))
    first = next((n for n, s in enumerate(sections) if s.lines), None)
    if first is not None:
        for i in range(min(2, len(sections[first].lines))):
            shown(first, i)
    for priority in sorted(by_priority, reverse=True):
        used = -1
        for n, i in by_priority[priority]:
            used += len(shown(n, i)) + 1
            if used > room:
                return


def _first_line_cut(
    section: Section, dropped: list[Dropped], budget: int, render: Renderer
) -> tuple[list[Section], list[Dropped], list[Dropped]]:
    """The first line of ``section`` (after a slot's heading line), cut to fit."""
    lines = section.lines
    group = lines[0].group
    two = group is not None and len(lines) > 1 and lines[1].group == group
    kept = lines[:2] if two else lines[:1]
    shown_texts = [Dropped.of(section.name, x).text for x in kept]  # scrubbed, if not yet
    shown = [
        Line(t, x.priority, x.sources, x.group) for t, x in zip(shown_texts, kept, strict=True)
    ]
    cut_to = Section(section.name, section.heading, shown)
    original = shown[-1].text
    shown[-1].text = ""
    room = max(0, budget) * CHARS_PER_TOKEN - len(render([cut_to]))
    shown[-1].text = original if len(original) <= room else original[: max(0, room - 1)] + "…"
    texts = {(section.name, t) for t in shown_texts}
    rest = [line for line in dropped if (line.section, line.text) not in texts]
    last = kept[-1]
    return [cut_to], rest, [Dropped(section.name, original, last.sources)]
