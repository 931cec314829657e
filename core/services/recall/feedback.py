"""Feedback: the words of the best records found fill a search the query's words leave short.

A question often shares one word with what answers it, or none: "What hobbies does he
have?" reaches the few turns that say *hobby*, not the ones about his pottery class. When
the query's words find fewer records than the caller asked for, the records they found
best are read for the words they use most that the rest of the store uses least (each
word's share of a record, times its rarity, summed over the records read), and those
words are searched for. What they find fills the rest, in their order, each record below
every record the query's own words found. Records the words found keep their places and
scores: a search whose words find enough never runs this.

This is pseudo-relevance feedback, a classic of text retrieval, used here as a fill only,
where it cannot move a word match. It needs no model, works on every kind of record, and
costs one more search, over ten words, on searches that found little.
"""

from __future__ import annotations

import math

from .engine import RecallIndex
from .fields import counts_of
from .query import FILL_SHARE, Filter, Scored

#: How many of the best records found are read for their words.
SEEDS = 5
#: How many of their words are searched for.
TERMS = 10
#: A word held by more than one record in ``COMMON`` (and by more than ``COMMON_FLOOR``
#: records) is not read: it says little of what the best records are about, and its
#: long postings would cost the fill the most (at 100k records, ten such words stay
#: under the postings a CLI search scores without numpy).
COMMON = 10
COMMON_FLOOR = 1_000
#: The lightest field read, in tenths: a record's text, label and tags, not its ids, its
#: scope or the note before it (words every lesson or a whole session shares).
FIELD_FLOOR = 5


def feedback_terms(
    index: RecallIndex, found: list[Scored], own: set[str]
) -> list[tuple[str, float]]:
    """The ``TERMS`` words that best stand for the best ``SEEDS`` records of ``found``,
    weighted from 1 down (the query's ``own`` terms left out: every record holding one
    was found already)."""
    n = index.live
    most = max(n // COMMON, COMMON_FLOOR)
    weights: dict[str, float] = {}
    for hit in found[:SEEDS]:
        counts = counts_of(index.fields[hit.slot], FIELD_FLOOR)
        total = sum(counts.values())
        if not total:
            continue
        for term, count in counts.items():
            if term in own:
                continue
            df = index.post.df(term)
            if df < 2 or df > most:  # reaches nothing new, or says little
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            weights[term] = weights.get(term, 0.0) + count / total * idf
    if not weights:
        return []
    ranked = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:TERMS]
    top = ranked[0][1]
    return [(term, weight / top) for term, weight in ranked]


def fill(
    index: RecallIndex,
    query: str,
    found: list[Scored],
    limit: int,
    where: Filter,
    small: int,
) -> list[Scored]:
    """``found`` (the query's word matches, best first), with records the feedback words
    find added after them up to ``limit``."""
    if not found or len(found) >= limit:
        return found
    own = {term for term, _ in index.query_terms(query)}
    terms = feedback_terms(index, found, own)
    if not terms:
        return found
    have = {s.slot for s in found}
    more = index.search(query, limit + len(have), where, small, terms=terms)
    more = [s for s in more if s.slot not in have]
    if not more:
        return found
    below = found[-1].score * FILL_SHARE
    best = more[0].score
    out = list(found)
    for s in more[: limit - len(found)]:
        out.append(s._replace(score=below * max(s.score / best, 1e-6), filled=True))
    return out
