"""A record's fields as the recall index keeps them: each field's weight (in tenths) and
its terms, in one string per record. Removal reads a record's counts back from it, and
the proximity bonus reads which terms stand side by side."""

from __future__ import annotations

from collections.abc import Iterable

from . import words as wordlib

_FIELD = "\x1e"  # between fields
_WEIGHT = "\x1f"  # between a field's weight and its terms


def tenths(weight: float) -> int:
    return round(weight * 10)


def encode_fields(fields: Iterable[tuple[float, str]]) -> str:
    """A unit's fields as stored: each field's weight and its terms (what removal and
    proximity read back)."""
    parts = []
    for weight, text in fields:
        found = wordlib.terms(text)
        if found:
            parts.append(f"{tenths(weight)}{_WEIGHT}{' '.join(found)}")
    return _FIELD.join(parts)


def decode_fields(stored: str) -> list[tuple[int, list[str]]]:
    """(weight in tenths, terms) per field of a stored unit."""
    out = []
    for part in stored.split(_FIELD) if stored else []:
        weight, _, found = part.partition(_WEIGHT)
        out.append((int(weight), found.split(" ")))
    return out


def pair_bonus(stored: str, pairs: list[tuple[str, str, float]]) -> float:
    """The sum of ``least`` over the fields of ``stored`` (as :func:`encode_fields`
    writes them) and in each over ``pairs``: (" a b ", " b a ", least) adds ``least``
    when a and b stand side by side in the field's terms, half when only the other way
    round."""
    # A record whose terms hold no pair anywhere holds none in any field (most do not).
    if not any(f[1:-1] in stored or b[1:-1] in stored for f, b, _ in pairs):
        return 0.0
    bonus = 0.0
    for part in stored.split(_FIELD):
        # A field's terms joined by spaces: two terms side by side are a substring.
        text = f" {part.partition(_WEIGHT)[2]} "
        for forward, backward, least in pairs:
            if forward in text:
                bonus += least
            elif backward in text:
                bonus += 0.5 * least
    return bonus


def counts_of(stored: str, floor: int = 0) -> dict[str, int]:
    """A unit's own term counts, in tenths (from its fields weighing ``floor`` or more)."""
    counts: dict[str, int] = {}
    for weight, found in decode_fields(stored):
        if weight >= floor:
            for term in found:
                counts[term] = counts.get(term, 0) + weight
    return counts
