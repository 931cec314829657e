"""In-memory fuzzy search over every kind of memory record, fast enough per keystroke.

The workbench's global search box asks this index for the best hits on every
keystroke, over up to ~100,000 records, within a few milliseconds. Scoring every
record with rapidfuzz costs ~0.5 s at that size, so the index first collects
candidates from an inverted word index and only scores those.

How a query is answered
-----------------------
Text is normalised with :func:`rapidfuzz.utils.default_process` (lower case,
every non-alphanumeric character becomes a space) and split into words. A
*term* of the query matches a document

* **exactly** when it occurs in the document's normalised text: as the start of
  a word for terms of one or two characters, anywhere inside a word for longer
  terms ("deplo" finds "deploy", "base" finds "database");
* **fuzzily** when it is at least :data:`FUZZY_MIN_LEN` characters long and some
  word of the document starts with a string within a small edit distance of it
  (one edit, two from :data:`FUZZY_WIDE_LEN` characters; transpositions count as
  one edit; the first letter must be right), so "rollbak" and "rolback" find
  "rollback".

A document is a hit when *every* term matches it. Hits fall into four bands, and
a hit in a higher band always outranks one in a lower band:

====  ============================================================
band  meaning
====  ============================================================
3     every term matches exactly, all of them in the title
2     every term matches exactly (some only in the body)
1     some term only matches fuzzily; every term matches the title
0     some term only matches fuzzily
====  ============================================================

Within a band, hits are ordered by a rapidfuzz score blended half and half with
how well each term sits on word boundaries (whole word > word start > inside a
word > fuzzy). The rapidfuzz score is :func:`rapidfuzz.fuzz.ratio` of the query
against the title in bands 3 and 1 (titles closest to the query first), and
:func:`rapidfuzz.fuzz.partial_ratio` against the text around the first hit in
bands 2 and 0 (words side by side, in order, first), where a multi-word query
also gains for each word found in the title. ``score`` is in
``[0, 100]``, rounded to two decimals; equal scores are ordered by
``(kind, ref)``.

Bands are collected best first and collection stops as soon as ``limit`` hits
are known, since lower bands can no longer reach the result list; the band that
crosses the line is capped at ``max_candidates`` documents, keeping the most
recently added ones. A very common word therefore costs a few set operations
plus rapidfuzz over at most ``max_candidates`` strings.

The index is pure Python plus rapidfuzz and never imports textual or pydantic.
It is not thread-safe: build it anywhere, but do not search it while another
thread adds or removes documents.
"""

from __future__ import annotations

import bisect
import heapq
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA
from rapidfuzz.utils import default_process

from .scripts import spaceless

__all__ = [
    "FUZZY_MIN_LEN",
    "FUZZY_WIDE_LEN",
    "INFIX_MIN_LEN",
    "SearchDoc",
    "SearchHit",
    "SearchIndex",
    "normalize",
]

#: Terms at least this long tolerate one typo.
FUZZY_MIN_LEN = 4
#: Terms at least this long tolerate two typos.
FUZZY_WIDE_LEN = 8
#: Terms at least this long match inside words; shorter ones only at a word start
#: (but for Chinese, Japanese, Thai and the like, written without spaces, where
#: "北京" stands inside the "word" 我昨天去了北京).
INFIX_MIN_LEN = 3

_TITLE = 0  # field: the title only
_ALL = 1  # field: title and body
_EXACT = 0  # mode: exact matches only
_LOOSE = 1  # mode: exact or fuzzy matches
# (band, field, mode), best band first.
_BANDS = ((3, _TITLE, _EXACT), (2, _ALL, _EXACT), (1, _TITLE, _LOOSE), (0, _ALL, _LOOSE))

_Ids = set[int] | frozenset[int]

# Per-term word-position weights blended into the in-band score.
_WHOLE_WORD, _WORD_START, _INSIDE_WORD, _FUZZY = 100.0, 85.0, 60.0, 40.0
_BAND_WIDTH = 25.0
_FINE_SCALE = 0.24  # fine score 0..100 -> 0..24, so bands never overlap
# Words a typo'd term stands for that the body scorer looks for, per term.
_MAX_ANCHOR_WORDS = 8

# Filter a candidate set by string tests instead of building a term's posting
# union when the union would be this many times larger than the candidate set.
_FILTER_RATIO = 8
# Filtering by a fuzzy term tests each fuzzy word; beyond this many, build instead.
_FILTER_MAX_FUZZY_WORDS = 16
# Term caches: word lists per term, and doc-id sets (bounded by total size).
_TERM_CACHE_SIZE = 256
_SET_CACHE_BUDGET = 600_000
# Renumber documents once removed ids outnumber live ones (and at least this many).
_COMPACT_MIN_HOLES = 1024


def normalize(text: str) -> str:
    """Lower-case ``text`` and turn every non-alphanumeric run into one space."""
    return " ".join(default_process(text).split())


@dataclass(frozen=True)
class SearchDoc:
    """One searchable record.

    ``kind`` is the record type ("episode", "lesson", ...), ``ref`` the record id
    the UI jumps to (unique across the index), ``title`` what the result list
    shows and ``text`` the searchable body (the title is searchable too).
    """

    kind: str
    ref: str
    title: str
    text: str


@dataclass(frozen=True)
class SearchHit:
    """A search result: the document and its score in ``[0, 100]`` (higher is better)."""

    doc: SearchDoc
    score: float


@dataclass
class _TermInfo:
    """What a query term matches in the vocabulary (cached per vocabulary version)."""

    term: str
    exact_words: list[str]  # words containing the term (starting with it, if short)
    # Computed on first use (only the fuzzy bands need them):
    near_words: list[str] | None = None  # words starting within the edit budget
    fuzzy_words: list[str] | None = None  # near words not already in exact_words
    estimates: dict[tuple[int, int], int] = field(default_factory=dict)  # summed postings


class SearchIndex:
    """An inverted word index over :class:`SearchDoc` records with fuzzy ranking.

    Build it from an iterable of documents, keep it current with :meth:`add` /
    :meth:`remove` (or :meth:`replace_all`), and call :meth:`search` per keystroke.
    ``max_candidates`` bounds how many documents rapidfuzz scores per query.
    """

    def __init__(self, docs: Iterable[SearchDoc] = (), *, max_candidates: int = 2000) -> None:
        if max_candidates < 1:
            raise ValueError("max_candidates must be positive")
        self.max_candidates = max_candidates
        self._reset()
        self._bulk_load(docs)

    # ------------------------------------------------------------------ state

    def _reset(self) -> None:
        # Per document id (ints increase with insertion; removed ids hold None).
        self._docs: list[SearchDoc | None] = []
        self._title_pad: list[str] = []  # " normalised title "
        self._full_pad: list[str] = []  # " normalised title normalised body "
        self._by_ref: dict[str, int] = {}
        self._by_kind: dict[str, set[int]] = {}
        self._live = 0
        # word -> ascending doc ids, for the title alone and for title + body.
        self._postings: tuple[dict[str, list[int]], dict[str, list[int]]] = ({}, {})
        self._vocab: list[str] = []  # sorted keys of self._postings[_ALL]
        self._vocab_dirty = False
        self._vocab_version = 0
        self._blob = "\n"  # "\n" + "\n".join(self._vocab) + "\n", rebuilt lazily
        self._blob_version = -1
        self._terms: OrderedDict[str, tuple[int, _TermInfo]] = OrderedDict()
        self._sets: OrderedDict[tuple[str, int, int], frozenset[int]] = OrderedDict()
        self._sets_size = 0

    def _bulk_load(self, docs: Iterable[SearchDoc]) -> None:
        self._vocab_dirty = True  # sort the vocabulary once, at the end
        for doc in docs:
            old = self._by_ref.get(doc.ref)
            if old is not None:
                self._unindex(old)
            self._index(doc)
        self._ensure_vocab()
        self._changed(vocab=True)

    def _index(self, doc: SearchDoc) -> None:
        doc_id = len(self._docs)
        title = normalize(doc.title)
        body = normalize(doc.text)
        self._docs.append(doc)
        self._title_pad.append(f" {title} ")
        self._full_pad.append(f" {title} {body} ")
        self._by_ref[doc.ref] = doc_id
        self._by_kind.setdefault(doc.kind, set()).add(doc_id)
        self._live += 1
        title_words = set(title.split())
        all_words = title_words.union(body.split())
        title_post, all_post = self._postings
        for word in title_words:
            title_post.setdefault(word, []).append(doc_id)
        new_words = []
        for word in all_words:
            ids = all_post.get(word)
            if ids is None:
                all_post[word] = [doc_id]
                new_words.append(word)
            else:
                ids.append(doc_id)
        if new_words and not self._vocab_dirty:
            for word in new_words:
                bisect.insort(self._vocab, word)

    def _unindex(self, doc_id: int) -> None:
        doc = self._docs[doc_id]
        assert doc is not None
        title_words = set(self._title_pad[doc_id].split())
        all_words = set(self._full_pad[doc_id].split())
        for post, words in zip(self._postings, (title_words, all_words), strict=True):
            for word in words:
                ids = post[word]
                del ids[bisect.bisect_left(ids, doc_id)]
                if not ids:
                    del post[word]
                    if post is self._postings[_ALL] and not self._vocab_dirty:
                        del self._vocab[bisect.bisect_left(self._vocab, word)]
        self._docs[doc_id] = None
        self._title_pad[doc_id] = self._full_pad[doc_id] = ""
        del self._by_ref[doc.ref]
        kind_ids = self._by_kind[doc.kind]
        kind_ids.discard(doc_id)
        if not kind_ids:
            del self._by_kind[doc.kind]
        self._live -= 1

    def _changed(self, *, vocab: bool) -> None:
        self._sets.clear()
        self._sets_size = 0
        if vocab:
            self._vocab_version += 1
            self._terms.clear()
        else:
            for _version, info in self._terms.values():
                info.estimates.clear()

    def _maybe_compact(self) -> None:
        holes = len(self._docs) - self._live
        if holes >= _COMPACT_MIN_HOLES and holes > self._live:
            live = [doc for doc in self._docs if doc is not None]
            self._reset()
            self._bulk_load(live)

    # ------------------------------------------------------------- public API

    def __len__(self) -> int:
        """How many documents the index holds."""
        return self._live

    def __contains__(self, ref: object) -> bool:
        """Whether a document with this ``ref`` is indexed."""
        return ref in self._by_ref

    def get(self, ref: str) -> SearchDoc | None:
        """The indexed document with this ``ref``, if any."""
        doc_id = self._by_ref.get(ref)
        return None if doc_id is None else self._docs[doc_id]

    def add(self, doc: SearchDoc) -> None:
        """Index ``doc``, replacing any document with the same ``ref``."""
        old = self._by_ref.get(doc.ref)
        if old is not None:
            self._unindex(old)
        words_before = len(self._postings[_ALL])
        self._index(doc)
        # Adding only ever creates words; a replaced document may also have dropped some.
        self._changed(vocab=old is not None or len(self._postings[_ALL]) != words_before)
        self._maybe_compact()

    def remove(self, ref: str) -> bool:
        """Drop the document with this ``ref``; return whether there was one."""
        doc_id = self._by_ref.get(ref)
        if doc_id is None:
            return False
        words_before = len(self._postings[_ALL])
        self._unindex(doc_id)
        self._changed(vocab=len(self._postings[_ALL]) != words_before)
        self._maybe_compact()
        return True

    def clear_caches(self) -> None:
        """Forget cached per-term results (benchmarks use this to measure cold queries)."""
        self._changed(vocab=True)

    def warm_up(self) -> None:
        """Pay the first query's one-off costs now, in the thread that built the index.

        The first large union of postings grows a set through fresh memory (page
        faults; ~40 ms at 100k records on a VM, against ~7 ms for the same query
        once the allocator has that memory): a throwaway query for every letter
        moves that cost off the user's first keystroke.
        """
        for letter in "etaoinsrhldcumfpgwybvkxjqz":
            self.search(letter)
        self.clear_caches()

    def replace_all(self, docs: Iterable[SearchDoc]) -> None:
        """Rebuild the index from scratch with ``docs``."""
        self._reset()
        self._bulk_load(docs)

    def search(self, query: str, limit: int = 20, kinds: set[str] | None = None) -> list[SearchHit]:
        """The best ``limit`` documents for ``query``, best first.

        Every word of the query must match (see the module docstring); ``kinds``
        restricts the hits to those record kinds (``None`` means all kinds, an
        empty set means none). An empty or punctuation-only query returns ``[]``.
        """
        terms = list(dict.fromkeys(normalize(query).split()))
        if not terms or limit <= 0 or not self._live:
            return []
        allowed = self._allowed(kinds)
        if allowed is not None and not allowed:
            return []
        self._ensure_vocab()
        infos = [self._term_info(term) for term in terms]
        can_fuzz: bool | None = None  # whether any term has fuzzy words; asked lazily
        cap = max(self.max_candidates, limit)
        bands: list[tuple[int, _Ids]] = []
        seen: set[int] = set()  # members of the bands above (fewer than ``limit``)
        total = 0
        for band, where, mode in _BANDS:
            if mode == _LOOSE:
                if can_fuzz is None:
                    can_fuzz = any(self._fuzzy(info) for info in infos)
                if not can_fuzz:
                    break
            found = self._match(terms, infos, where, mode, allowed)
            if seen:
                found = found - seen
            if not found:
                continue
            bands.append((band, self._newest(found, cap - total)))
            total += len(bands[-1][1])
            if total >= limit:
                break  # lower bands can no longer reach the result list
            seen.update(found)
        return self._rank(terms, infos, bands, limit)

    # ---------------------------------------------------------------- matching

    def _allowed(self, kinds: set[str] | None) -> set[int] | None:
        if kinds is None:
            return None
        present = [self._by_kind[kind] for kind in kinds if kind in self._by_kind]
        if len(present) == len(self._by_kind):
            return None  # every kind there is: no filter needed
        if len(present) == 1:
            return present[0]
        return set().union(*present)

    def _ensure_vocab(self) -> None:
        if self._vocab_dirty:
            self._vocab = sorted(self._postings[_ALL])
            self._vocab_dirty = False

    def _prefix_range(self, prefix: str) -> list[str]:
        lo = bisect.bisect_left(self._vocab, prefix)
        hi = bisect.bisect_right(self._vocab, prefix + "\U0010ffff", lo)
        return self._vocab[lo:hi]

    def _infix_words(self, term: str) -> list[str]:
        """Vocabulary words containing ``term``, in vocabulary order."""
        if self._blob_version != self._vocab_version:
            # One newline-separated string: str.find scans it at C speed, so only
            # the words that do contain the term cost Python work.
            self._blob = "\n" + "\n".join(self._vocab) + "\n"
            self._blob_version = self._vocab_version
        blob = self._blob
        words = []
        at = blob.find(term)
        while at >= 0:
            start = blob.rfind("\n", 0, at) + 1
            end = blob.find("\n", at)
            words.append(blob[start:end])
            at = blob.find(term, end)
        return words

    def _cached_term(self, term: str) -> _TermInfo | None:
        hit = self._terms.get(term)
        if hit is None or hit[0] != self._vocab_version:
            return None
        self._terms.move_to_end(term)
        return hit[1]

    def _term_info(self, term: str) -> _TermInfo:
        info = self._cached_term(term)
        if info is not None:
            return info
        # Typing extends a term one character at a time, and every word matching
        # the longer term also matches the shorter one: reuse the shorter result.
        shorter = self._cached_term(term[:-1]) if len(term) > INFIX_MIN_LEN else None
        if len(term) < INFIX_MIN_LEN and not spaceless(term):
            exact = self._prefix_range(term)
        elif shorter is not None:
            exact = [word for word in shorter.exact_words if term in word]
        else:
            exact = self._infix_words(term)
        info = _TermInfo(term, exact)
        self._terms[term] = (self._vocab_version, info)
        if len(self._terms) > _TERM_CACHE_SIZE:
            self._terms.popitem(last=False)
        return info

    def _fuzzy(self, info: _TermInfo) -> list[str]:
        """The words ``info.term`` matches only fuzzily (computed once per term)."""
        if info.fuzzy_words is not None:
            return info.fuzzy_words
        term = info.term
        if len(term) < FUZZY_MIN_LEN:
            info.fuzzy_words = []
            return info.fuzzy_words
        budget = _edit_budget(term)
        # A word near the longer term is near the shorter one too (same budget).
        shorter = self._cached_term(term[:-1])
        if (
            shorter is not None
            and shorter.near_words is not None
            and _edit_budget(term[:-1]) == budget
        ):
            base = shorter.near_words
        else:
            base = self._prefix_range(term[0])
        info.near_words = _near_prefix_words(term, base, budget)
        exact = set(info.exact_words)
        info.fuzzy_words = [word for word in info.near_words if word not in exact]
        return info.fuzzy_words

    def _words(self, info: _TermInfo, mode: int) -> list[str]:
        if mode == _LOOSE:
            return info.exact_words + self._fuzzy(info)
        return info.exact_words

    def _estimate(self, info: _TermInfo, where: int, mode: int) -> int:
        key = (where, mode)
        est = info.estimates.get(key)
        if est is None:
            post = self._postings[where]
            est = sum(len(post[w]) for w in self._words(info, mode) if w in post)
            info.estimates[key] = est
        return est

    def _term_set(self, term: str, info: _TermInfo, where: int, mode: int) -> frozenset[int]:
        key = (term, where, mode)
        cached = self._sets.get(key)
        if cached is not None:
            self._sets.move_to_end(key)
            return cached
        post = self._postings[where]
        ids: set[int] = set()
        for word in self._words(info, mode):
            word_ids = post.get(word)
            if word_ids:
                ids.update(word_ids)
        result = frozenset(ids)
        self._sets[key] = result
        self._sets_size += len(result)
        while self._sets_size > _SET_CACHE_BUDGET and len(self._sets) > 1:
            _, dropped = self._sets.popitem(last=False)
            self._sets_size -= len(dropped)
        return result

    def _filter(self, ids: _Ids, term: str, info: _TermInfo, where: int, mode: int) -> set[int]:
        texts = self._title_pad if where == _TITLE else self._full_pad
        needle = term if len(term) >= INFIX_MIN_LEN else f" {term}"
        fuzzy = self._fuzzy(info) if mode == _LOOSE else []
        if not fuzzy:
            return {i for i in ids if needle in texts[i]}
        words = [f" {w} " for w in fuzzy]
        return {i for i in ids if needle in texts[i] or any(word in texts[i] for word in words)}

    def _match(
        self,
        terms: list[str],
        infos: list[_TermInfo],
        where: int,
        mode: int,
        allowed: set[int] | None,
    ) -> _Ids:
        """Documents where every term matches ``where`` in ``mode`` (do not mutate).

        Terms are applied rarest first; once the candidates are few, a common
        term is checked against their text instead of unioning its postings.
        """
        order = sorted(
            range(len(terms)), key=lambda k: (self._estimate(infos[k], where, mode), terms[k])
        )
        current: _Ids | None = allowed
        for k in order:
            term, info = terms[k], infos[k]
            est = self._estimate(info, where, mode)
            if current is None:
                current = self._term_set(term, info, where, mode)
            elif est > _FILTER_RATIO * len(current) and (
                mode == _EXACT or len(self._fuzzy(info)) <= _FILTER_MAX_FUZZY_WORDS
            ):
                current = self._filter(current, term, info, where, mode)
            else:
                current = current & self._term_set(term, info, where, mode)
            if not current:
                return frozenset()
        return current if current is not None else frozenset()

    def _newest(self, ids: _Ids, count: int) -> _Ids:
        """The ``count`` most recently added documents of ``ids``."""
        if len(ids) <= count:
            return ids
        if count <= 0:
            return set()
        span = len(self._docs)
        if span * count <= 4 * len(ids) * len(ids):  # dense: walk ids downwards
            return set(islice(filter(ids.__contains__, range(span - 1, -1, -1)), count))
        return set(sorted(ids)[-count:])

    # ----------------------------------------------------------------- ranking

    def _rank(
        self,
        terms: list[str],
        infos: list[_TermInfo],
        bands: list[tuple[int, _Ids]],
        limit: int,
    ) -> list[SearchHit]:
        """Score the collected candidates and return the best ``limit`` of them."""
        query = " ".join(terms)
        checks = [(f" {t} ", f" {t}", t if len(t) >= INFIX_MIN_LEN else None) for t in terms]
        n_terms = len(terms)
        # Where the body scorer looks: around the first hit of the longest term, or
        # of a word a typo'd term stands for. Scoring a window instead of the whole
        # text keeps partial_ratio cheap on long bodies.
        anchors = sorted(terms, key=len, reverse=True) + [
            f" {word}" for info in infos for word in (info.fuzzy_words or [])[:_MAX_ANCHOR_WORDS]
        ]
        reach = len(query) + 1
        needles = [t if len(t) >= INFIX_MIN_LEN else f" {t}" for t in terms]
        scores: list[float] = []
        doc_ids: list[int] = []
        for band, ids in bands:
            in_title = band in (3, 1)
            texts = self._title_pad if in_title else self._full_pad
            offset = band * _BAND_WIDTH
            for doc_id in ids:
                text = texts[doc_id]
                if in_title:
                    rf = fuzz.ratio(query, text)
                elif n_terms == 1 and band == 2:
                    rf = 100.0  # the term is in the text: any partial score is 100
                else:
                    rf = fuzz.partial_ratio(query, _window(text, anchors, reach))
                    if n_terms > 1:  # words found in the title count too
                        title = self._title_pad[doc_id]
                        share = sum(needle in title for needle in needles) / n_terms
                        rf = 0.6 * rf + 40.0 * share
                position = 0.0
                for whole, start, inside in checks:
                    if whole in text:
                        position += _WHOLE_WORD
                    elif start in text:
                        position += _WORD_START
                    elif inside is not None and inside in text:
                        position += _INSIDE_WORD
                    else:
                        position += _FUZZY
                scores.append(offset + _FINE_SCALE * (0.5 * rf + 0.5 * position / n_terms))
                doc_ids.append(doc_id)
        # Scores are reported rounded to 2 decimals and ties go by (kind, ref), so
        # keep everything that could round to at least the limit-th best score.
        if len(scores) > limit:
            cut = round(heapq.nlargest(limit, scores)[-1], 2) - 0.01
            picked = [(s, i) for s, i in zip(scores, doc_ids, strict=True) if s >= cut]
        else:
            picked = list(zip(scores, doc_ids, strict=True))
        ranked = []
        for score, doc_id in picked:
            doc = self._docs[doc_id]
            assert doc is not None
            ranked.append((-round(score, 2), doc.kind, doc.ref, doc))
        ranked.sort(key=lambda row: row[:3])
        return [SearchHit(doc, -neg) for neg, _kind, _ref, doc in ranked[:limit]]


def _window(text: str, anchors: list[str], reach: int) -> str:
    """The part of ``text`` around the first anchor found (all of it if none is)."""
    for anchor in anchors:
        at = text.find(anchor)
        if at >= 0:
            return text[max(0, at - reach) : at + len(anchor) + reach]
    return text


def _edit_budget(term: str) -> int:
    """How many typos a term tolerates."""
    if len(term) >= FUZZY_WIDE_LEN:
        return 2
    return 1 if len(term) >= FUZZY_MIN_LEN else 0


def _near_prefix_words(term: str, words: list[str], budget: int) -> list[str]:
    """Words in ``words`` that start with a string within ``budget`` edits of ``term``.

    Tries every prefix length that could be within budget (``len(term) ± budget``)
    and keeps a word when any of its prefixes is close enough (optimal string
    alignment distance, so a swap of neighbours is one edit).
    """
    if not words:
        return []
    keep: set[int] = set()
    n = len(term)
    for length in range(max(1, n - budget), n + budget + 1):
        prefixes = [word[:length] for word in words]
        for _choice, _dist, index in process.extract(
            term, prefixes, scorer=OSA.distance, score_cutoff=budget, limit=None
        ):
            keep.add(index)
    return [words[i] for i in sorted(keep)]
