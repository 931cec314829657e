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
has them all, one that has any of them is. The corpus is read straight from
the store's tables; in a long-lived process (the MCP server, :class:`Memory`)
a :class:`Corpus` keeps each episode shard's prepared text until that shard
changes, so a repeated search re-reads only what moved.
"""

from __future__ import annotations

import gc
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rapidfuzz.utils import default_process

from core import search_docs, shards
from core.errors import InvalidInput
from core.search_index import SearchDoc, SearchIndex, _edit_budget, _near_prefix_words, normalize
from core.storage.store import Store

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
_SHARDS_PER_LOCK = 16  # episode shards read under one lock (~30 ms at 500 episodes each)


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


class _Entry:
    """A searchable record: its normalised text, and how to make its SearchDoc."""

    __slots__ = ("kind", "ref", "text", "_doc", "_raw")

    def __init__(self, kind: str, ref: str, text: str, doc: SearchDoc | None, raw: Any) -> None:
        self.kind = kind
        self.ref = ref
        self.text = text  # " " + normalised title and body + " "
        self._doc = doc
        self._raw = raw

    def search_doc(self) -> SearchDoc:
        if self._doc is None:
            self._doc = search_docs.episode_doc(self._raw)
        return self._doc


def _padded(text: str) -> str:
    return f" {default_process(text)} "


def _from_doc(doc: SearchDoc) -> _Entry:
    return _Entry(doc.kind, doc.ref, _padded(f"{doc.title} {doc.text}"), doc, None)


def _episode_entries(docs: Iterable[dict[str, Any]]) -> list[_Entry]:
    # The SearchDoc (its clipped title) is built only for the few episodes that
    # get ranked; matching needs just the words.
    entries = []
    join = " ".join
    for doc in docs:
        text = f"{doc['index']} {doc['task_id']} {doc.get('summary', '')}"
        mistakes, successes, errors = doc.get("mistakes"), doc.get("successes"), doc.get("errors")
        if mistakes:
            text = f"{text} {join(mistakes)}"
        if successes:
            text = f"{text} {join(successes)}"
        if errors:
            text = f"{text} {join(e.get('message', '') for e in errors)}"
        entries.append(_Entry("episode", doc["id"], f" {default_process(text)} ", None, doc))
    return entries


class Corpus:
    """The searchable records of a store; keeps prepared episode shards between searches."""

    def __init__(self) -> None:
        self._shards: dict[str, tuple[object, list[_Entry]]] = {}

    def entries(self, store: Store, now: datetime, kinds: set[str] | None) -> list[_Entry]:
        """Every record of the wanted kinds, episodes newest first (each shard read once)."""
        found: list[_Entry] = []
        with store.reading():
            if kinds is None or kinds - {"episode", "wm"}:
                found.extend(
                    _from_doc(d)
                    for d in search_docs.small_table_docs(store)
                    if kinds is None or d.kind in kinds
                )
            if kinds is None or "wm" in kinds:
                found.extend(_from_doc(d) for d in search_docs.working_memory_docs(store, now))
            names = shards.shard_names(store, "episodes") if _wants(kinds, "episode") else []
        live = set(names)
        for gone in [n for n in self._shards if n not in live]:
            del self._shards[gone]
        names.reverse()
        # Loading ~100k documents allocates millions of objects that all stay alive:
        # the cyclic collector would walk them again and again (2x the load time).
        paused = gc.isenabled()
        gc.disable()
        try:
            for start in range(0, len(names), _SHARDS_PER_LOCK):
                # A few shards per lock, so writers never wait for a whole scan.
                with store.reading():
                    for name in names[start : start + _SHARDS_PER_LOCK]:
                        docs = store.docs(name)
                        cached = self._shards.get(name)
                        if cached is None or cached[0] is not docs:
                            cached = (docs, _episode_entries(docs.values()))
                            self._shards[name] = cached
                        found.extend(cached[1])
        finally:
            if paused:
                gc.enable()
        return found


def _wants(kinds: set[str] | None, kind: str) -> bool:
    return kinds is None or kind in kinds


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
    if limit < 1:
        raise InvalidInput("limit", f"must be >= 1 (got {limit})")
    terms = list(dict.fromkeys(normalize(query).split()))
    if not terms:
        return []
    entries = (corpus or Corpus()).entries(store, now, kinds)
    if not entries:
        return []
    texts = [e.text for e in entries]
    per_term = [_term_matches(term, texts) for term in terms]
    sets = [matched for _, matched in per_term]
    candidates = set.intersection(*sets) if sets else set()
    if not candidates:
        candidates = set().union(*sets)
    if not candidates:
        return []

    # BM25 over the candidates, with corpus-wide document frequencies.
    total = len(entries)
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
    closeness: dict[int, int] = {}
    for i in candidates:
        text = texts[i]
        if not all_exact or not all(_needles(t)[1] in text for t in terms):
            closeness[i] = 0
        else:
            closeness[i] = 2 if phrase.search(text) else 1

    by_lexical = sorted(
        candidates, key=lambda i: (-closeness[i], -lexical[i], entries[i].kind, entries[i].ref)
    )
    lexical_rank = {i: r for r, i in enumerate(by_lexical, start=1)}
    pool = by_lexical[: max(_RERANK, 4 * limit)]
    index = SearchIndex(entries[i].search_doc() for i in pool)
    position = {entries[i].ref: i for i in pool}
    fuzzy_rank = {
        position[hit.doc.ref]: r for r, hit in enumerate(index.search(query, limit=len(pool)), 1)
    }

    def fused(i: int) -> float:
        value = 1 / (_RRF_K + lexical_rank[i])
        if i in fuzzy_rank:
            value += 1 / (_RRF_K + fuzzy_rank[i])
        return value

    best = 2 / (_RRF_K + 1)
    scored = [(closeness[i] + fused(i) / best, i) for i in pool]
    scored.sort(key=lambda pair: (-pair[0], entries[pair[1]].kind, entries[pair[1]].ref))
    return [
        Hit(entries[i].kind, entries[i].ref, entries[i].search_doc().title, round(score, 4))
        for score, i in scored[:limit]
    ]
