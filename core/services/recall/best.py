"""The best records of a query's scores: scores kept in one array of floats, and the
k-th best score found without sorting them all."""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import compress
from typing import Any


class DenseScores:
    """Scores by slot in one array of floats, read like the dict of touched slots it
    stands for: ``get``, ``items``, ``values`` and ``len`` see only the slots scoring
    above 0 (every share of a score is positive, so those are the touched ones)."""

    __slots__ = ("scores",)

    def __init__(self, slots: int) -> None:
        self.scores = array("d", bytes(8 * slots))

    def get(self, slot: int, default: float = 0.0) -> float:
        found = self.scores[slot] if 0 <= slot < len(self.scores) else 0.0
        return found if found > 0 else default

    def items(self) -> Iterator[tuple[int, float]]:
        return ((d, v) for d, v in enumerate(self.scores) if v > 0)

    def values(self) -> Iterator[float]:
        return (v for v in self.scores if v > 0)

    def __len__(self) -> int:
        return len(self.scores) - self.scores.count(0.0)

    def at_least(self, theta: float) -> list[tuple[int, float]]:
        """(slot, score) of every slot scoring at least ``theta`` and above 0, in slot
        order; picked out at C speed (a loop over 100,000 slots in Python took ~5 ms)."""
        scores = self.scores
        keep: Iterable[Any] = map(theta.__le__, scores) if theta > 0 else scores
        return [(d, scores[d]) for d in compress(range(len(scores)), keep)]

    def nlargest(self, k: int, ages: Sequence[int]) -> list[tuple[int, float]]:
        """The ``k`` best (slot, score), by score, then age (``ages`` by slot), then
        slot, as ``heapq.nlargest`` of :meth:`items` keyed so gives them."""
        best = heapq.nlargest(k, self.scores)
        found = self.at_least(best[-1] if best else 0.0)
        found.sort(key=lambda item: (item[1], ages[item[0]], item[0]), reverse=True)
        return found[:k]


def get_score(acc: dict[int, float] | DenseScores) -> Callable[[int], float]:
    """A slot's score in ``acc`` (0 when it has none)."""

    def score_of(slot: int) -> float:
        return acc.get(slot, 0.0)

    return score_of


#: Past this many slots, the k-th best score is bounded from below by a sample first.
_SAMPLED = 32_768
#: The sample holds about this many slots per place sought.
_PER_PLACE = 64
#: Up to this many values, the k-th is found by a sort: numpy's partition slows down
#: badly on many equal values (short records often score alike), a sort does not.
_SORTED = 4096


def kth_best(acc: Any, k: int, np: Any) -> float | None:
    """The ``k``-th best positive score in ``acc`` (None: fewer than ``k`` are positive).

    Exact, without partitioning every score: the ``k``-th best of every ``step``-th
    slot (a subset) cannot be above the ``k``-th best of all, so only the scores at or
    above it (a few thousand of 100,000) are searched for it."""
    return best_slots(acc, k, np)[0]


def best_slots(acc: Any, k: int, np: Any) -> tuple[float | None, Any]:
    """:func:`kth_best`, and the slots scoring at least that (ties kept; None: every
    slot scoring above 0), found in the same pass over the scores."""
    size = len(acc)
    if size >= _SAMPLED and k * _PER_PLACE * 4 <= size:
        sample = acc[:: size // (k * _PER_PLACE)]
        positive = sample[sample > 0]
        if len(positive) >= k:
            near = np.flatnonzero(acc >= _kth(positive, k, np))
            scores = acc.take(near)
            theta = _kth(scores, k, np)
            return theta, near[scores >= theta]
    slots = np.flatnonzero(acc > 0)
    if len(slots) < k:
        return None, slots
    scores = acc.take(slots)
    theta = _kth(scores, k, np)
    return theta, slots[scores >= theta]


def _kth(values: Any, k: int, np: Any) -> float:
    """The ``k``-th largest of ``values`` (which hold at least ``k``)."""
    cut = len(values) - k
    if len(values) <= _SORTED:
        return float(np.sort(values)[cut])
    return float(np.partition(values, cut)[cut])
