"""The engines bench/bench_recall.py measures memwork against, on the same texts.

Each is built from a list of texts and answers ``search(query, k)`` with the
indices of the best texts, best first:

* ``Bm25s``: bm25s 0.3 (k1 1.5, b 0.75, Lucene scoring), bm25s's English stop
  words, Snowball stems (PyStemmer): a plain BM25.
* ``Fts5``: SQLite FTS5 from the standard library, the ``porter`` tokenizer,
  ranked by ``bm25()``.
* ``Tantivy``: tantivy (Rust, in-memory index), the ``en_stem`` tokenizer, BM25.
* ``WordLlama``: WordLlama 256-d (the weights its wheel ships, loaded as memwork's
  ``semantic.py`` does), cosine similarity of whole texts.
* ``Fusion``: reciprocal rank fusion of ``Bm25s`` and ``WordLlama``: each text
  scores the sum of ``1 / (60 + rank)`` over the two rankings (each taken to
  ``FUSION_DEPTH``), the constant of Cormack, Clarke and Büttcher (SIGIR 2009).

FTS5 and tantivy are asked the same query words as bm25s: the query's words
(two letters or more, lower case) less bm25s's English stop words, joined by OR,
so the engines differ in their scoring and stemming, not in what they are asked.

``need(*modules)`` installs missing packages into the running environment (the
pins of the ``bench`` extra in pyproject.toml).
"""

from __future__ import annotations

import importlib.util
import logging
import re
import sqlite3
import subprocess
import sys
from typing import Any, Protocol

PINS = {
    "bm25s": "bm25s==0.3.16",
    "Stemmer": "PyStemmer==3.1.0",
    "tantivy": "tantivy==0.27.0",
    "wordllama": "wordllama==0.4.0.post1",
}
FUSION_K = 60
FUSION_DEPTH = 100
_WORD = re.compile(r"(?u)\b\w\w+\b")


def need(*modules: str) -> None:
    """Install the packages behind ``modules`` that are missing (pip, pinned)."""
    missing = [PINS[m] for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        print(f"installing {', '.join(missing)} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *missing], check=True)


class Engine(Protocol):
    def search(self, query: str, k: int) -> list[int]:
        """Indices of the best ``k`` texts for ``query``, best first."""
        ...


def query_words(query: str) -> list[str]:
    """The words FTS5 and tantivy are asked: bm25s's tokens less its English stop words."""
    from bm25s.stopwords import STOPWORDS_EN

    stop = set(STOPWORDS_EN)
    return list(dict.fromkeys(w for w in _WORD.findall(query.lower()) if w not in stop))


class Bm25s:
    """bm25s with PyStemmer, English stop words: a plain BM25."""

    def __init__(self, texts: list[str]) -> None:
        import bm25s
        import Stemmer

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # else a line per index built
        self.bm25s, self.stemmer = bm25s, Stemmer.Stemmer("english")
        self.model = bm25s.BM25()
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False)
        self.model.index(tokens, show_progress=False)
        self.n = len(texts)

    def search(self, query: str, k: int) -> list[int]:
        q = self.bm25s.tokenize(
            query, stopwords="en", stemmer=self.stemmer, return_ids=False, show_progress=False
        )
        words = [t for t in q[0] if t in self.model.vocab_dict]
        if not words or not self.n:
            return []
        ids, scores = self.model.retrieve(
            [words], k=min(k, self.n), show_progress=False, n_threads=1
        )
        return [int(i) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]


class Fts5:
    """SQLite FTS5 in memory, ``porter`` stems over ``unicode61`` words, ``bm25()``."""

    def __init__(self, texts: list[str]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
        self.db.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", enumerate(texts))

    def search(self, query: str, k: int) -> list[int]:
        words = query_words(query)
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        rows = self.db.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (match, k)
        )
        return [int(r[0]) for r in rows]


class Tantivy:
    """tantivy, an in-memory index, ``en_stem`` words, BM25."""

    def __init__(self, texts: list[str]) -> None:
        import tantivy

        schema = tantivy.SchemaBuilder()
        schema.add_text_field("body", stored=False, tokenizer_name="en_stem")
        schema.add_integer_field("id", stored=True, indexed=False)
        self.index = tantivy.Index(schema.build())
        writer = self.index.writer(heap_size=100_000_000, num_threads=1)
        for i, text in enumerate(texts):
            writer.add_document(tantivy.Document(id=i, body=text))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def search(self, query: str, k: int) -> list[int]:
        return [i for i, _ in self.scored(query, k)]

    def scored(self, query: str, k: int) -> list[tuple[int, float]]:
        """(index, BM25 score) of the best ``k`` texts for ``query``, best first."""
        words = query_words(query)
        if not words:
            return []
        try:
            parsed = self.index.parse_query(" ".join(words), ["body"])
        except ValueError:  # e.g. a run of Chinese its English tokenizer reads as nothing
            return []
        hits = self.searcher.search(parsed, k).hits
        return [(int(self.searcher.doc(address)["id"][0]), score) for score, address in hits]


def wordllama_model() -> Any:
    """WordLlama 256-d as memwork loads it (the wheel's own files, nothing downloaded)."""
    from memwork.core.services.recall import semantic

    return semantic.embedder("wordllama")


#: Vectors already computed in this process, by text: longmemeval-wide's haystacks
#: share their filler sessions, and a text's vector does not depend on its batch.
_VECTORS: dict[str, Any] = {}
_VECTORS_MOST = 400_000  # ~400 MB of float32 at 256-d; emptied past it


class WordLlama:
    """Cosine similarity of WordLlama 256-d vectors of the whole texts."""

    def __init__(self, texts: list[str]) -> None:
        import numpy as np

        self.model = wordllama_model()
        if not texts:
            self.matrix = None
            return
        new = list(dict.fromkeys(t for t in texts if t not in _VECTORS))
        if len(_VECTORS) + len(new) > _VECTORS_MOST:
            _VECTORS.clear()
            new = list(dict.fromkeys(texts))
        if new:
            _VECTORS.update(zip(new, self.model.embed(new), strict=True))
        self.matrix = np.stack([_VECTORS[t] for t in texts])

    def search(self, query: str, k: int) -> list[int]:
        import numpy as np

        if self.matrix is None:
            return []
        sims = self.matrix @ self.model.embed([query])[0]
        top = np.argsort(-sims, kind="stable")[:k]
        return [int(i) for i in top]


class Fusion:
    """Reciprocal rank fusion of two engines' rankings."""

    def __init__(self, *engines: Engine) -> None:
        self.engines = engines

    def search(self, query: str, k: int) -> list[int]:
        score: dict[int, float] = {}
        for engine in self.engines:
            for rank, i in enumerate(engine.search(query, FUSION_DEPTH), 1):
                score[i] = score.get(i, 0.0) + 1 / (FUSION_K + rank)
        return sorted(score, key=lambda i: (-score[i], i))[:k]
