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

from datetime import datetime
from typing import Any

from rapidfuzz import fuzz

from ..base.text import normalise
from . import negation
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


def _live(lessons: list[Doc], now: datetime) -> list[Doc]:
    return sorted((x for x in lessons if is_live(x, now)), key=lambda x: (x["created_at"], x["id"]))


def lesson_pairs(lessons: list[Doc], now: datetime) -> list[tuple[Doc, Doc]]:
    """Every pair of live lessons that contradict each other (older lesson first),
    ordered by the older lesson, then the newer.

    Only lessons that share a content word are compared (an index of words), and
    only pairs where one of them negates something: two lessons with no negated
    clause never contradict. So a store of thousands of lessons costs what its
    similar pairs with a negation cost.
    """
    parsed = [_Parsed(x) for x in _live(lessons, now)]
    by_word: dict[str, list[int]] = {}
    negating_by_word: dict[str, list[int]] = {}
    for i, item in enumerate(parsed):
        for word in item.words:
            by_word.setdefault(word, []).append(i)
            if item.negates:
                negating_by_word.setdefault(word, []).append(i)
    pairs: list[tuple[Doc, Doc]] = []
    for i, item in enumerate(parsed):
        index = by_word if item.negates else negating_by_word
        later = sorted({j for w in item.words for j in index.get(w, ()) if j > i})
        for j in later:
            other = parsed[j]
            if scopes_meet(item.doc["scope"], other.doc["scope"]) and _contradict(item, other):
                pairs.append((item.doc, other.doc))
    return pairs


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
