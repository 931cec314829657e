"""Sections, lines with drop priorities, rendering and the token budget.

Tokens are an estimate: ceil(characters / 4). When the rendered context is
over budget, whole lines go, lowest priority first and, within a priority,
from the bottom up; a section whose lines are all gone loses its heading. Lines
that share a ``group`` (a slot: its ``### label`` heading and its text) are kept
or dropped together, so the context never ends with a heading and no body.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

#: The token budget of a context when the caller gives none (every door's default).
DEFAULT_BUDGET = 2000


def estimate_tokens(text: str) -> int:
    """The token estimate used everywhere: ceil(chars / 4)."""
    return math.ceil(len(text) / 4)


# Plain classes rather than dataclasses: importing dataclasses (inspect, ast,
# tokenize...) costs ~8 ms, paid on every `memwork context` call.
class Line:
    """One line of the context, how early it is dropped (lower goes first) and the
    records it came from (``core.sources`` references).

    Lines with the same ``group`` (within a section) are dropped together.
    """

    __slots__ = ("text", "priority", "sources", "group")

    def __init__(
        self,
        text: str,
        priority: float,
        sources: list[dict[str, Any]] | None = None,
        group: str | None = None,
    ) -> None:
        self.text = text
        self.priority = priority
        self.sources = sources if sources is not None else []
        self.group = group


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

    __slots__ = ("section", "text", "sources")

    def __init__(
        self, section: str, text: str, sources: list[dict[str, Any]] | None = None
    ) -> None:
        self.section = section
        self.text = text
        self.sources = sources if sources is not None else []


def fit(
    sections: list[Section], budget: int, render: Renderer
) -> tuple[list[Section], list[Dropped]]:
    """Drop lines until the rendered text fits ``budget`` tokens (a group goes whole,
    its lines listed in the order they appear)."""
    live = [Section(s.name, s.heading, list(s.lines)) for s in sections if s.lines]
    dropped: list[Dropped] = []
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
                dropped.extend(
                    Dropped(section.name, section.lines[i].text, section.lines[i].sources)
                    for i in going
                )
                section.lines = [x for i, x in enumerate(section.lines) if i not in going]
                break
        live = [s for s in live if s.lines]
    return live, dropped
