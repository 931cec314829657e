"""Recall: one query over every kind of memory, best first (``memwork search``, MCP, API).

The workbench's search box asks a :class:`~core.search_index.SearchIndex` per
keystroke; an agent asks once and wants the records that matter most, so this
module ranks with two views of relevance and fuses them:

1. **Lexical** — BM25 over words (``k1`` 1.2, ``b`` 0.75, lengths in
   characters). A term counts where a word starts with it, and half where it
   sits inside a word. A term that occurs nowhere is taken to be a typo and
   stands for the vocabulary words within one or two edits of it (the fuzzy
   index's own rule), so "rollbak" still finds "rollback".
2. **Fuzzy** — the workbench's :class:`SearchIndex` over the best lexical
   candidates, which prefers titles close to the query and words on word
   boundaries.

The two rankings are fused by reciprocal rank (``1 / (60 + rank)`` from each).
Above that sits the *closeness* of the match, which always wins: 2 when the
query's words appear side by side in the query's order as whole words, 1 when
they all appear exactly but scattered, 0 when some word only matched with a
typo. So ``worker-25`` ranks "worker-25.log" above "worker-13.log (25 MB)".
A hit's ``score`` is that closeness plus the fused rank scaled to ``(0, 1]``.

A document is a candidate when every query word matches it; when no document
has them all, one that has any of them is. Equal scores go to the most
recently added record. What is searched, and how it is kept between searches
and processes, is :mod:`core.search_corpus`.
"""

from __future__ import annotations

import gc
import math
import re
import threading
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .errors import InvalidInput
from .search_corpus import Corpus, Pool
from .search_index import SearchIndex, _edit_budget, _near_prefix_words, normalize
from .storage.store import Store

#: Every kind a search covers, as ``--kind`` names them.
KINDS = ("lesson", "rule", "card", "episode", "observation", "slot", "wm", "session", "checkpoint")
_ALIASES = {
    "lessons": "lesson",
    "rules": "rule",
    "cards": "card",
    "mistake_card": "card",
    "mistake_cards": "card",
    "mistake-card": "card",
    "mistake-cards": "card",
    "episodes": "episode",
    "observations": "observation",
    "slots": "slot",
    "working_memory": "wm",
    "working-memory": "wm",
    "sessions": "session",
    "checkpoints": "checkpoint",
}
DEFAULT_LIMIT = 10

_K1, _B = 1.2, 0.75
_RRF_K = 60
#: How many lexical candidates the fuzzy matcher re-ranks (at least; more for big limits).
_RERANK = 200
_INSIDE_WORD = 0.5  # a term inside a word counts half


def parse_kinds(values: Iterable[str] | None) -> set[str] | None:
    """``--kind`` values as kind names (plurals and ``working_memory`` accepted); None = all."""
    if not values:
        return None
    kinds = set()
    for value in values:
        name = value.strip().lower()
        name = _ALIASES.get(name, name)
        if name not in KINDS:
            raise InvalidInput("kind", f"must be one of {', '.join(KINDS)} (got {value!r})")
        kinds.add(name)
    return kinds


@dataclass(frozen=True)
class Hit:
    """One search result: what it is, its id, the line that shows it, its score."""

    kind: str
    id: str
    title: str
    score: float

    def to_json(self) -> dict[str, Any]:
        """The record ``memwork search --json`` prints."""
        return {"id": self.id, "kind": self.kind, "score": self.score, "title": self.title}


def _needles(term: str) -> tuple[str, str]:
    """(word-start needle, anywhere needle); short terms only match at a word start."""
    start = f" {term}"
    return start, term if len(term) >= 3 else start


def _near_words(term: str, texts: list[str]) -> list[str]:
    """Vocabulary words within the fuzzy index's edit budget of a term found nowhere."""
    budget = _edit_budget(term)
    if budget == 0:
        return []
    # Only words with the term's first letter can be near it (the fuzzy index's rule):
    # one regex over one big string finds them at C speed.
    first = re.escape(term[0])
    vocab = sorted(set(re.findall(f"(?<= ){first}[^ ]*", "".join(texts))))
    return _near_prefix_words(term, vocab, budget)


def _term_matches(term: str, texts: list[str]) -> tuple[list[str], set[int]]:
    """The words that stand for ``term`` and the texts matching any of them."""
    _, anywhere = _needles(term)
    matched = {i for i, text in enumerate(texts) if anywhere in text}
    if matched:
        return [term], matched
    words = _near_words(term, texts)
    for word in words:
        needle = f" {word} "
        matched.update(i for i, text in enumerate(texts) if needle in text)
    return words, matched


def _term_frequency(text: str, term: str, exact: bool) -> float:
    if not exact:  # a typo'd term: whole-word occurrences of the words it stands for
        return float(text.count(f" {term} "))
    start = text.count(f" {term}")
    inside = text.count(term) - start if len(term) >= 3 else 0
    return start + _INSIDE_WORD * inside


#: Longest query, in characters (every door): a question, not a document. A 10 MB query
#: used to hold an MCP server for half a minute.
QUERY_MAX = 4096


def check_query(query: object) -> str:
    """A query within :data:`QUERY_MAX` characters, else InvalidInput naming ``query``."""
    if not isinstance(query, str):
        raise InvalidInput("query", f"must be text (got {type(query).__name__})")
    if len(query) > QUERY_MAX:
        raise InvalidInput(
            "query", f"must be at most {QUERY_MAX:,} characters (got {len(query):,})"
        )
    return query


def search(
    store: Store,
    query: str,
    *,
    now: datetime,
    kinds: set[str] | None = None,
    limit: int = DEFAULT_LIMIT,
    corpus: Corpus | None = None,
) -> list[Hit]:
    """The best ``limit`` records for ``query``, best first (see the module docstring)."""
    check_query(query)
    if limit < 1:
        raise InvalidInput("limit", f"must be >= 1 (got {limit})")
    terms = list(dict.fromkeys(normalize(query).split()))
    if not terms:
        return []
    # Hundreds of thousands of strings stay alive through a search: the cyclic
    # collector would walk them again and again (about twice the work).
    paused = gc.isenabled()
    gc.disable()
    try:
        pool = (corpus or Corpus()).pool(store, now, kinds)
        return _rank(pool, query, terms, limit)
    finally:
        if paused:
            gc.enable()


def _rank(pool: Pool, query: str, terms: list[str], limit: int) -> list[Hit]:
    texts = pool.texts
    if not texts:
        return []
    per_term = [_term_matches(term, texts) for term in terms]
    sets = [matched for _, matched in per_term]
    candidates = set.intersection(*sets) if sets else set()
    if not candidates:
        candidates = set().union(*sets)
    if not candidates:
        return []

    # BM25 over the candidates, with corpus-wide document frequencies.
    total = len(texts)
    avg_len = sum(map(len, texts)) / total
    weights = []
    for (words, matched), term in zip(per_term, terms, strict=True):
        idf = math.log(1 + (total - len(matched) + 0.5) / (len(matched) + 0.5))
        weights.append((idf, words, words == [term]))
    lexical: dict[int, float] = {}
    for i in candidates:
        text = texts[i]
        norm = _K1 * (1 - _B + _B * len(text) / avg_len)
        score = 0.0
        for idf, words, exact in weights:
            tf = sum(_term_frequency(text, w, exact) for w in words)
            if tf:
                score += idf * tf * (_K1 + 1) / (tf + norm)
        lexical[i] = score

    phrase = re.compile(r"(?<![^\s])" + r"\s+".join(map(re.escape, terms)) + r"(?![^\s])")
    all_exact = all(exact for _, _, exact in weights)
    needles = [_needles(t)[1] for t in terms]
    closeness: dict[int, int] = {}
    for i in candidates:
        text = texts[i]
        if not all_exact or not all(n in text for n in needles):
            closeness[i] = 0
        else:
            closeness[i] = 2 if phrase.search(text) else 1

    # Ties (common with repetitive histories) go to the most recently added record.
    by_lexical = sorted(candidates, key=lambda i: (-closeness[i], -lexical[i], -i))
    lexical_rank = {i: r for r, i in enumerate(by_lexical, start=1)}
    chosen = by_lexical[: max(_RERANK, 4 * limit)]
    docs = {i: pool.search_doc(i) for i in chosen}
    index = SearchIndex(docs.values())
    position = {doc.ref: i for i, doc in docs.items()}
    fuzzy_rank = {
        position[hit.doc.ref]: r for r, hit in enumerate(index.search(query, limit=len(chosen)), 1)
    }

    def fused(i: int) -> float:
        value = 1 / (_RRF_K + lexical_rank[i])
        if i in fuzzy_rank:
            value += 1 / (_RRF_K + fuzzy_rank[i])
        return value

    best = 2 / (_RRF_K + 1)
    scored = sorted(((closeness[i] + fused(i) / best, i) for i in chosen), key=_score_order)
    from .privacy import scrub

    # Titles come from the store or its search cache: a secret planted in either (a file
    # edited by hand) never reaches the output.
    return [
        Hit(docs[i].kind, docs[i].ref, scrub(docs[i].title, personal=False), round(score, 4))
        for score, i in scored[:limit]
    ]


def _score_order(pair: tuple[float, int]) -> tuple[float, int]:
    return (-pair[0], -pair[1])


# One corpus per open store: a long-lived caller (Memory, an MCP or HTTP server) keeps the
# prepared tables between searches, and concurrent searches of one store take turns.
_CORPORA: weakref.WeakKeyDictionary[Store, tuple[threading.Lock, Corpus]] = (
    weakref.WeakKeyDictionary()
)
_CORPORA_LOCK = threading.Lock()


def search_op(
    store: Store,
    query: str,
    *,
    now: datetime,
    kinds: Iterable[str] | None = None,
    limit: int = DEFAULT_LIMIT,
) -> list[dict[str, Any]]:
    """The ``search`` operation: :func:`search` with the store's kept corpus, as JSON."""
    wanted = parse_kinds(list(kinds) if kinds is not None else None)
    with _CORPORA_LOCK:
        kept = _CORPORA.get(store)
        if kept is None:
            kept = _CORPORA[store] = (threading.Lock(), Corpus())
    lock, corpus = kept
    with lock:
        hits = search(store, query, now=now, kinds=wanted, limit=limit, corpus=corpus)
    return [hit.to_json() for hit in hits]
