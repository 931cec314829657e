"""Memory that contradicts itself: lessons that negate each other, and ``[AVOID]``
rules that a live lesson tells the agent to do.

A lesson that says the opposite of a live one ("Always X" / "Never X", "Do not
X" / "X", "Retry on timeout" / "Don't retry on timeout") is never merged with
it (:mod:`core.domain.lessons` keeps such pairs apart); curation flags the pair so a
person decides which one holds. Flags are computed from the records as they
are now, never stored, so they vanish once one side is forgotten, superseded
or edited.

Two lessons are flagged when they are live, their scopes can meet in one
context (see :func:`scopes_meet`) and one negates the other: a clause of each
is about the same subject and exactly one of the two is negated
(:func:`core.domain.negation.opposed`), or, for texts whose words are near-duplicates
(rapidfuzz ``token_set_ratio`` >= 90, the near-duplicate threshold), their
overall polarity differs (:func:`core.domain.negation.contradicts`, the rule that
keeps a lesson apart from its negation when it is added).

An ``[AVOID] <mistake>`` rule says "avoid <mistake>"; a live lesson whose scope
meets the rule's and that says to do that very thing (a clause about the same
subject with the opposite polarity, :func:`core.domain.negation.opposed`) contradicts
it. Its wording may differ from the mistake's ("Skipped the canary stage" /
"Skip the canary stage for hotfixes"), so no similarity threshold applies: the
clauses must share their subject instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

from rapidfuzz import fuzz

from ..base.last_result import LastResult
from ..base.text import normalise
from . import negation, similar
from .decay import is_live

#: The near-duplicate threshold (``core.domain.lessons.NEAR_DUPLICATE_AT``): only lessons this
#: similar are compared for polarity, as when a lesson is added.
SIMILAR_AT = 90.0
AVOID_PREFIX = "[AVOID]"

Doc = dict[str, Any]


def scopes_meet(a: str, b: str) -> bool:
    """Whether lessons (or rules) of scopes ``a`` and ``b`` can reach the same context.

    Global reaches every context; a task's and a project's can meet (``memwork
    context --task T --project P``); two different tasks, or two different
    projects, never do.
    """
    if a == b or a == "global" or b == "global":
        return True
    kind_a, kind_b = a.partition(":")[0], b.partition(":")[0]
    return kind_a != kind_b


class _Parsed:
    """A lesson's text read once: normalised for similarity, split into clauses."""

    __slots__ = ("doc", "text", "norm", "clauses", "words", "negates")

    def __init__(self, doc: Doc) -> None:
        self.doc = doc
        self.text = str(doc["content"])
        self.norm = normalise(self.text)
        self.clauses = negation.clauses(self.text)
        self.words = frozenset(w for c in self.clauses for w in c.core)
        #: Some clause is negated or ordered: without one on either side, two texts
        #: never contradict (both tests in :func:`_contradict` need opposite
        #: polarities or opposite orders).
        self.negates = any(c.negated or c.order is not None for c in self.clauses)


def _contradict(a: _Parsed, b: _Parsed) -> bool:
    # Clauses about the same subject with opposite polarity: "Always pin versions" /
    # "Never pin versions" (whose words are only 87 similar: the markers weigh a lot
    # in a short text). Failing that, texts as similar as near-duplicates whose
    # overall polarity differs, as when a lesson is added.
    if _opposed(a.clauses, b.clauses):
        return True
    return fuzz.token_set_ratio(a.norm, b.norm) >= SIMILAR_AT and negation.contradicts(
        a.text, b.text
    )


def texts_contradict(a: str, b: str) -> bool:
    """Whether two lesson texts contradict each other (the rule every door applies)."""
    return _contradict(_Parsed({"content": a}), _Parsed({"content": b}))


def contradicting(lessons: list[Doc]) -> Callable[[int, int], bool]:
    """:func:`texts_contradict` for lessons ``i`` and ``j`` of ``lessons``, each text
    read once however many pairs it is in."""
    parsed: dict[int, _Parsed] = {}

    def read(i: int) -> _Parsed:
        found = parsed.get(i)
        if found is None:
            found = parsed[i] = _Parsed({"content": lessons[i]["content"]})
        return found

    return lambda i, j: _contradict(read(i), read(j))


def _live(lessons: list[Doc], now: datetime) -> list[Doc]:
    return sorted((x for x in lessons if is_live(x, now)), key=lambda x: (x["created_at"], x["id"]))


def lesson_pairs(lessons: list[Doc], now: datetime) -> list[tuple[Doc, Doc]]:
    """Every pair of live lessons that contradict each other (older lesson first),
    ordered by the older lesson, then the newer.

    Only pairs that could contradict are compared (3,204 lessons make 5.1 million
    pairs): those with a clause of each about the same subject, found by an index of
    the clauses' words, and, for the texts as similar as near-duplicates whose overall
    polarity differs, those rapidfuzz finds similar in C (:mod:`core.domain.similar`).
    Both sides must share a content word and one of them negate something: two lessons
    with no negated clause never contradict.
    """
    live = _live(lessons, now)
    # What the pairs depend on: the same live lessons with the same texts and scopes
    # have the same pairs (the workbench asks from three places at once).
    asked = tuple((x["id"], x["created_at"], x["content"], x["scope"]) for x in live)
    found = _PAIRS.get(asked, lambda: _contradicting([_Parsed(x) for x in live]))
    return [(live[i], live[j]) for i, j in found]


_PAIRS = LastResult()


def _contradicting(parsed: list[_Parsed]) -> list[tuple[int, int]]:
    """(i, j), i < j and in order, for every two of ``parsed`` that contradict."""
    candidates = _same_subject_pairs(parsed) | _similar_across_polarity(parsed)
    pairs: list[tuple[int, int]] = []
    for i, j in sorted(candidates):
        first, second = parsed[i], parsed[j]
        if (
            (first.negates or second.negates)
            and not first.words.isdisjoint(second.words)
            and scopes_meet(first.doc["scope"], second.doc["scope"])
            and _contradict(first, second)
        ):
            pairs.append((i, j))
    return pairs


def _same_subject_pairs(parsed: list[_Parsed]) -> set[tuple[int, int]]:
    """(i, j), i < j, for every two lessons with a clause of each that could oppose the
    other: cores that could be about the same subject
    (:func:`core.domain.negation.same_subject`: sharing at least
    :data:`~core.domain.negation.SAME_SUBJECT` of the smaller core), and either
    exactly one of the two negated or both ordering two things
    (:func:`core.domain.negation.oppose`).

    Two such cores share one of the smaller core's rarest words, as many of them as it
    may miss plus one: each clause is looked up by those only, among the clauses at
    least as large that could oppose it. (Lessons written from one template share
    most of their words: 3,204 of them made 1.6 million pairs by shared words alone.)
    """
    # (negated, ordered) -> word -> (core size, lesson)
    holding: dict[tuple[bool, bool], dict[str, list[tuple[int, int]]]] = {}
    seen: dict[str, int] = {}
    for i, item in enumerate(parsed):
        for clause in item.clauses:
            kept = holding.setdefault((clause.negated, clause.order is not None), {})
            for word in clause.core:
                kept.setdefault(word, []).append((len(clause.core), i))
                seen[word] = seen.get(word, 0) + 1
    found: set[tuple[int, int]] = set()
    for i, item in enumerate(parsed):
        for clause in item.clauses:
            size = len(clause.core)
            if not size:
                continue
            negated, ordered = clause.negated, clause.order is not None
            against = [(not negated, False), (not negated, True)]
            if ordered:
                against.append((negated, True))
            indexes = [holding[key] for key in against if key in holding]
            rarest = sorted(clause.core, key=lambda w: (seen[w], w))
            # (less a hair: a share such as 0.7 of 10 must not round up to 8 words)
            for word in rarest[: size - math.ceil(negation.SAME_SUBJECT * size - 1e-9) + 1]:
                for index in indexes:
                    for other_size, j in index.get(word, ()):
                        if j != i and other_size >= size:
                            found.add((i, j) if i < j else (j, i))
    return found


def _similar_across_polarity(parsed: list[_Parsed]) -> set[tuple[int, int]]:
    """(i, j), i < j, for every two lessons as similar as near-duplicates of which one
    as a whole says not to and the other does not (what :func:`_contradict` flags
    when no clauses pair up)."""
    said_not: list[int] = []
    said: list[int] = []
    for i, item in enumerate(parsed):
        (said_not if negation.says_not(item.clauses) else said).append(i)
    found = similar.near_pairs(
        [parsed[i].norm for i in said_not], SIMILAR_AT, [parsed[j].norm for j in said]
    )
    return {(min(said_not[a], said[b]), max(said_not[a], said[b])) for a, b in found}


def of_lesson(lessons: list[Doc], content: str, scope: str, now: datetime) -> list[Doc]:
    """Live lessons that ``content`` (with ``scope``) contradicts, oldest first.

    For a lesson already stored, pass the other lessons: a text never contradicts
    itself. Also used for proposals, which are not lessons yet.
    """
    mine = _Parsed({"content": content})
    return [
        x
        for x in _live(lessons, now)
        if scopes_meet(scope, x["scope"]) and _contradict(mine, _Parsed(x))
    ]


def avoid_body(rule: Doc) -> str | None:
    """The mistake an ``[AVOID]`` rule warns about, or None for any other rule."""
    text = str(rule.get("text", "")).removeprefix("[CONSOLIDATED]").lstrip()
    if not text.startswith(AVOID_PREFIX):
        return None
    return text[len(AVOID_PREFIX) :].strip() or None


def rule_conflicts(rules: list[Doc], lessons: list[Doc], now: datetime) -> list[tuple[Doc, Doc]]:
    """(rule, lesson) for every active ``[AVOID]`` rule that a live lesson contradicts."""
    avoid = [
        (rule, negation.clauses(f"avoid {body}"))
        for rule in rules
        if rule.get("active", True) and (body := avoid_body(rule)) is not None
    ]
    if not avoid:
        return []
    live = [(x, negation.clauses(x["content"])) for x in lessons if is_live(x, now)]
    found = []
    for rule, rule_clauses in avoid:
        for lesson, lesson_clauses in live:
            if scopes_meet(rule["scope"], lesson["scope"]) and _opposed(
                rule_clauses, lesson_clauses, balanced=True
            ):
                found.append((rule, lesson))
    return found


#: For a rule and a lesson, the share of the larger clause's words the two must share.
BALANCED = 0.5


def _opposed(
    first: list[negation.Clause], second: list[negation.Clause], *, balanced: bool = False
) -> bool:
    """:func:`core.domain.negation.opposed` over clauses parsed once per text.

    ``balanced`` also asks the clauses to share half of the *larger* one's words: a
    mistake's two words ("added a retry") inside a lesson's long clause ("prefer
    fixing the cause over adding retries") are not what that lesson is about.
    """
    return any(
        negation.oppose(x, y)
        and (not balanced or len(x.core & y.core) >= BALANCED * max(len(x.core), len(y.core)))
        for x in first
        for y in second
        if negation.same_subject(x.core, y.core)
    )
