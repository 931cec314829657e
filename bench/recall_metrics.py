"""Recall metrics for bench/bench_recall.py: R@k and MRR over ranked ids, per level.

A question has a set of answer ids (evidence turns, or evidence sessions). For a
ranked list of ids:

* ``recall_at(ranked, answers, k)``: the share of the answers among the first k;
* ``reciprocal_rank(ranked, answers)``: 1 / the rank of the first answer, 0 when
  none is within ``DEPTH``.

The session level ranks sessions by their best turn: ``session_ranking`` keeps the
session of each ranked turn the first time it appears, so a session is found at
rank r when its first turn in the turn ranking makes it the r-th distinct session.

A :class:`Tally` sums these over questions; :class:`Board` keeps one tally per
(system, level, category) and turns them into rows. ``paired_gap`` says how far two
systems' means on the same questions can be trusted apart: a paired bootstrap of the
per-question differences (a fixed seed, so a run repeats to the digit).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field

KS = (1, 5, 10, 20)
DEPTH = 20  # MRR counts the first answer up to this rank
ALL = "all"  # the category every question also counts in


def recall_at(ranked: Sequence[Hashable], answers: set[Hashable], k: int) -> float:
    """The share of ``answers`` among the first ``k`` of ``ranked`` (0 when there are none)."""
    if not answers:
        return 0.0
    return len(answers.intersection(ranked[:k])) / len(answers)


def reciprocal_rank(
    ranked: Sequence[Hashable], answers: set[Hashable], depth: int = DEPTH
) -> float:
    """1 / the rank of the first answer in ``ranked``, 0 past ``depth``."""
    return next((1 / r for r, x in enumerate(ranked[:depth], 1) if x in answers), 0.0)


def session_ranking(
    ranked_turns: Iterable[Hashable], session_of: Callable[[Hashable], Hashable]
) -> list[Hashable]:
    """The sessions of ``ranked_turns`` in the order their best turn ranks."""
    return list(dict.fromkeys(session_of(t) for t in ranked_turns))


@dataclass
class Tally:
    """Sums of R@k and reciprocal ranks over the questions added."""

    hits: dict[int, float] = field(default_factory=lambda: {k: 0.0 for k in KS})
    rr: float = 0.0
    n: int = 0
    #: Each question's (R@10, reciprocal rank), in the order they were added.
    each: list[tuple[float, float]] = field(default_factory=list)

    def add(self, ranked: Sequence[Hashable], answers: set[Hashable]) -> None:
        """Count one question (its answers must not be empty)."""
        for k in KS:
            self.hits[k] += recall_at(ranked, answers, k)
        rr = reciprocal_rank(ranked, answers)
        self.rr += rr
        self.n += 1
        self.each.append((recall_at(ranked, answers, 10), rr))

    def row(self) -> list[float]:
        """R@1, R@5, R@10, R@20 and MRR, averaged over the questions."""
        n = self.n or 1
        return [self.hits[k] / n for k in KS] + [self.rr / n]


@dataclass
class Board:
    """Tallies by (level, category, system), each question also counted under ``ALL``."""

    tallies: dict[tuple[str, str, str], Tally] = field(default_factory=dict)

    def add(
        self,
        level: str,
        category: str,
        system: str,
        ranked: Sequence[Hashable],
        answers: set[Hashable],
    ) -> None:
        """Count one question's ranking for ``system`` at ``level``."""
        if not answers:
            return
        for cat in dict.fromkeys((ALL, category)):
            self.tallies.setdefault((level, cat, system), Tally()).add(ranked, answers)

    def levels(self) -> list[str]:
        return list(dict.fromkeys(level for level, _, _ in self.tallies))

    def categories(self, level: str) -> list[str]:
        """``ALL`` first, then the level's categories in a stable order."""
        cats = {c for lv, c, _ in self.tallies if lv == level and c != ALL}
        return [ALL, *sorted(cats)] if cats else [ALL]

    def systems(self) -> list[str]:
        return list(dict.fromkeys(system for _, _, system in self.tallies))

    def get(self, level: str, category: str, system: str) -> Tally | None:
        return self.tallies.get((level, category, system))


def paired_gap(
    a: Tally, b: Tally, which: int, rounds: int = 2000, seed: int = 7
) -> tuple[float, float, float]:
    """``a``'s mean minus ``b``'s over the same questions (``which``: 0 for R@10, 1 for
    the reciprocal rank), with the 2.5th and 97.5th percentiles of that gap over
    ``rounds`` resamples of the questions."""
    gaps = [x[which] - y[which] for x, y in zip(a.each, b.each, strict=True)]
    n = len(gaps)
    if not n:
        return 0.0, 0.0, 0.0
    rng = random.Random(seed)
    means = sorted(sum(gaps[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    return sum(gaps) / n, means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]
