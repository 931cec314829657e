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

import bisect
import contextlib
import gc
import hashlib
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from rapidfuzz.utils import default_process

from core import search_docs, shards
from core.errors import InvalidInput
from core.kinds import KINDS as RECORD_KINDS
from core.search_index import SearchDoc, SearchIndex, _edit_budget, _near_prefix_words, normalize
from core.storage.store import Store
from core.text import clip

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
_TABLES_PER_LOCK = 16  # big tables read under one lock (~30 ms for 16 episode shards)


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


class _Chunk:
    """Records of one kind from one table, as parallel lists; SearchDocs made on demand.

    Matching needs only ``texts`` (each ``" " + normalised title and body + " "``);
    titles and SearchDocs are needed only for the few records that get ranked.
    Episodes and observations rank with their prepared text as the body, whether
    it was just prepared or came from the disk cache, so a search ranks the same
    either way.
    """

    __slots__ = ("kind", "refs", "texts", "titles", "raws", "docs")

    def __init__(
        self,
        kind: str,
        refs: list[str],
        texts: list[str],
        *,
        titles: list[str] | None = None,
        raws: list[dict[str, Any]] | None = None,
        docs: list[SearchDoc] | None = None,
    ) -> None:
        self.kind = kind
        self.refs = refs
        self.texts = texts
        self.titles = titles
        self.raws = raws
        self.docs = docs

    def search_doc(self, j: int) -> SearchDoc:
        if self.docs is not None:
            return self.docs[j]
        if self.kind == "episode":  # titles hold title sources: cut only when shown
            title = clip(self._title(j), search_docs.TITLE_WIDTH)
        else:
            assert self.titles is not None
            title = self.titles[j]
        return SearchDoc(self.kind, self.refs[j], title, self.texts[j])

    def _title(self, j: int) -> str:
        if self.titles is not None:
            return self.titles[j]
        assert self.raws is not None
        return _episode_title_source(self.raws[j])

    def all_titles(self) -> list[str]:
        if self.titles is not None:
            return self.titles
        if self.kind == "episode":
            return [self._title(j) for j in range(len(self.refs))]
        return [self.search_doc(j).title for j in range(len(self.refs))]


def _episode_title_source(doc: dict[str, Any]) -> str:
    """An episode's title before it is cut: cheap to keep, cut for the few shown.

    Only the start of the summary can reach a title, so only that is kept.
    """
    short = {k: doc.get(k) for k in ("index", "task_id", "score")}
    short["summary"] = doc.get("summary", "")[:300]
    return RECORD_KINDS["episode"].title_of(short).replace("\n", " ")


def _padded(text: str) -> str:
    return f" {default_process(text)} "


def _doc_chunk(kind: str, docs: list[SearchDoc], *, keep_docs: bool = True) -> _Chunk:
    texts = [_padded(f"{d.title} {d.text}") for d in docs]
    refs = [d.ref for d in docs]
    if keep_docs:
        return _Chunk(kind, refs, texts, docs=docs)
    return _Chunk(kind, refs, texts, titles=[d.title for d in docs])


def _episode_chunk(docs: Iterable[dict[str, Any]]) -> _Chunk:
    refs, texts, raws = [], [], []
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
        refs.append(doc["id"])
        texts.append(f" {default_process(text)} ")
        raws.append(doc)
    return _Chunk("episode", refs, texts, raws=raws)


class _DiskCache:
    """Prepared text per episode shard and observations table, in the user cache folder.

    A full shard never changes again unless its episodes are edited, so a search
    in a fresh process (``memwork search``) reads one small text file per table
    instead of parsing its JSON and preparing every record. A file is valid only
    for the table file it was made from (its version, inode, size and mtime; for
    observations, also the sessions table that names them), and it holds only
    what the store already holds, scrubbed. Nothing here is essential: any error
    means "no cache", and ``MEMWORK_SEARCH_CACHE=0`` turns it off.
    """

    _SEP = "\x1e"  # between the key, the refs, the titles and the texts

    def __init__(self, store: Store) -> None:
        self.folder: Path | None = None
        if store.in_memory_only or os.environ.get("MEMWORK_SEARCH_CACHE", "1") == "0":
            return
        from platformdirs import user_cache_dir

        digest = hashlib.sha1(str(store.path).encode("utf-8")).hexdigest()[:16]
        self.folder = Path(user_cache_dir("memwork", appauthor=False)) / "search" / digest

    def key(self, store: Store, name: str, extra: str = "") -> str | None:
        """What the table file is now (call under the store's lock)."""
        if self.folder is None:
            return None
        try:
            st = os.stat(store.table_path(name))
        except OSError:
            return None
        version = store.storage.manifest.tables.get(name)
        return f"{name} {version} {st.st_ino} {st.st_size} {st.st_mtime_ns} {extra}"

    def load(self, kind: str, name: str, key: str) -> _Chunk | None:
        assert self.folder is not None
        try:
            text = (self.folder / f"{name}.txt").read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        parts = text.split(self._SEP)
        if len(parts) != 4 or parts[0] != key:
            return None
        refs, titles, texts = (p.split("\n") if p else [] for p in parts[1:])
        if not len(refs) == len(titles) == len(texts):
            return None
        return _Chunk(kind, refs, texts, titles=titles)

    def save(self, name: str, key: str, chunk: _Chunk) -> None:
        assert self.folder is not None
        titles = [t.replace("\n", " ").replace(self._SEP, " ") for t in chunk.all_titles()]
        body = self._SEP.join(
            [key, "\n".join(chunk.refs), "\n".join(titles), "\n".join(chunk.texts)]
        )
        target = self.folder / f"{name}.txt"
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(body.encode("utf-8"))
            os.replace(tmp, target)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()


class _Pool:
    """Every chunk's records numbered in one sequence; ``texts[i]`` is record ``i``."""

    def __init__(self, chunks: list[_Chunk]) -> None:
        self.chunks = [c for c in chunks if c.refs]
        self.starts: list[int] = []
        self.texts: list[str] = []
        for chunk in self.chunks:
            self.starts.append(len(self.texts))
            self.texts.extend(chunk.texts)

    def __len__(self) -> int:
        return len(self.texts)

    def _at(self, i: int) -> tuple[_Chunk, int]:
        k = bisect.bisect_right(self.starts, i) - 1
        return self.chunks[k], i - self.starts[k]

    def kind(self, i: int) -> str:
        return self._at(i)[0].kind

    def ref(self, i: int) -> str:
        chunk, j = self._at(i)
        return chunk.refs[j]

    def search_doc(self, i: int) -> SearchDoc:
        chunk, j = self._at(i)
        return chunk.search_doc(j)


class Corpus:
    """The searchable records of a store; keeps prepared tables between searches."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[object, _Chunk]] = {}
        self._disk: _DiskCache | None = None

    def pool(self, store: Store, now: datetime, kinds: set[str] | None) -> _Pool:
        """Every record of the wanted kinds (the big tables each read once, a few per lock)."""
        if self._disk is None:
            self._disk = _DiskCache(store)
        chunks: list[_Chunk] = []
        with store.reading():
            if kinds is None or kinds - {"episode", "wm", "observation", "rule"}:
                docs = search_docs.small_table_docs(store, tables=False)
                by_kind: dict[str, list[SearchDoc]] = {}
                for d in docs:
                    if kinds is None or d.kind in kinds:
                        by_kind.setdefault(d.kind, []).append(d)
                chunks.extend(_doc_chunk(kind, found) for kind, found in by_kind.items())
            if _wants(kinds, "wm"):
                chunks.append(_doc_chunk("wm", search_docs.working_memory_docs(store, now)))
            big: list[tuple[str, str]] = []
            titles: dict[str, str] = {}
            if _wants(kinds, "observation"):
                titles = search_docs.session_titles(store)
                names = store.table_names("observations")
                big.extend(("observation", n) for n in names if n != "observations")
            if _wants(kinds, "rule"):
                big.extend(("rule", n) for n in store.table_names("rules"))
            if _wants(kinds, "episode"):
                big.extend(("episode", n) for n in shards.shard_names(store, "episodes"))
            sessions_version = str(store.storage.manifest.tables.get("sessions"))
        live = {name for _, name in big}
        for gone in [n for n in self._kept if n not in live]:
            del self._kept[gone]
        for start in range(0, len(big), _TABLES_PER_LOCK):
            # A few tables per lock, so writers never wait for a whole scan.
            with store.reading():
                for kind, name in big[start : start + _TABLES_PER_LOCK]:
                    extra = sessions_version if kind == "observation" else ""
                    chunks.append(self._table(store, self._disk, kind, name, extra, titles))
        return _Pool(chunks)

    def _table(
        self,
        store: Store,
        disk: _DiskCache,
        kind: str,
        name: str,
        extra: str,
        titles: dict[str, str],
    ) -> _Chunk:
        """One big table's records: kept from an earlier search, else the disk cache, else read.

        Kept chunks are tagged with what they were made from: the loaded table
        (the store swaps a table's mapping whenever it changes) or the disk key.
        """
        kept = self._kept.get(name)
        if kept is not None and store.storage.loaded(name) and kept[0] is store.docs(name):
            if kind != "observation":  # whose titles also depend on the sessions table
                return kept[1]
        key = disk.key(store, name, extra)
        if kept is not None and key is not None and kept[0] == key:
            return kept[1]
        chunk = disk.load(kind, name, key) if key is not None else None
        if chunk is not None:
            self._kept[name] = (key, chunk)
            return chunk
        docs = store.docs(name)
        if kind == "episode":
            chunk = _episode_chunk(docs.values())
        elif kind == "rule":
            chunk = _doc_chunk(kind, list(search_docs.rule_docs(store, name)), keep_docs=False)
        else:
            found = list(search_docs.observation_docs(store, name, titles))
            chunk = _doc_chunk(kind, found, keep_docs=False)
        if key is not None:
            disk.save(name, key, chunk)
        self._kept[name] = (key if key is not None else docs, chunk)
        return chunk


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


def _rank(pool: _Pool, query: str, terms: list[str], limit: int) -> list[Hit]:
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
    return [
        Hit(docs[i].kind, docs[i].ref, docs[i].title, round(score, 4))
        for score, i in scored[:limit]
    ]


def _score_order(pair: tuple[float, int]) -> tuple[float, int]:
    return (-pair[0], -pair[1])
