"""Semantic recall: an optional embedder that fills a search the words leave short,
and puts a passage's best records in order by meaning too.

With it off (the default), the words of the best records found fill such a search
instead (:mod:`core.services.recall.feedback`).

One setting chooses it: ``memwork config set embedder wordllama`` (kept in the
store) or ``MEMWORK_EMBEDDER`` (which wins; ``off`` turns it off). It is off by
default: it costs a 19 MB optional package, ~22 MB of memory and ~0.1 s to load in
each process that uses it, and ~1 KB and ~35 µs per record for the records' vectors
(docs/RECALL.md).

An :class:`Embedder` turns texts into unit vectors. The one shipped is
WordLlama's 256-dimensional model, loaded from the files its wheel carries
(nothing is ever downloaded): ``pip install 'memwork[embed]'``. Vectors are
kept per index slot, computed for new records when a query needs them, and
saved beside the index on a folder store (checked against each record's
fingerprint, so a stale vector is never used).

How it is used: the words rank first, as without it. Only when they find fewer
records than the caller asked for do the records nearest the query's meaning fill
the rest, nearest first, each below every record the words found. A question whose
words match enough records never loads the embedder, and its answer is exactly the
answer without it. (Fusing the two scores for every query, as it once did, moved
turn-level R@10 by -0.8 to +1.8 points across the public sets; filling never moves a
word match, and finds what shares no word with the query.)

One kind of query is read for its meaning too: a passage (a stretch of conversation
asked as a query, more than 20 distinct words) written mostly in Latin letters, the
script the model reads well. Its words' best :data:`REORDER_DEPTH` records are put in
a new order by their rank by the words and their rank by meaning together
(:func:`reorder`); nothing the words did not find comes in that way. A passage's
words are mostly chatter, and what it is about is its meaning: on MADial-Bench's
English tuning half R@10 / MRR go 0.662 / 0.634 -> 0.739 / 0.682. For Chinese,
which the model reads poorly, the same costs 10 to 15 points, hence the script.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ...base.errors import InvalidInput
from ...ledger import config
from .engine import RecallIndex
from .fields import decode_fields
from .query import FILL_SHARE, Filter, Scored

if TYPE_CHECKING:
    from ...storage.store import Store

ENV = "MEMWORK_EMBEDDER"
CHOICES = ("off", "wordllama")
#: How a record's vector is made (saved vectors of another form are made again): 2 is
#: its title and its kept terms; 1 was the terms alone, which cost WordLlama 11 points
#: of R@10 on MADial-Bench's short memories against their whole texts.
TEXT_FORM = 2
#: A passage's best records by its words that :func:`reorder` puts in a new order.
REORDER_DEPTH = 100
#: The weight of a record's rank by meaning beside its rank by the words (1) in
#: :func:`reorder`, and the rank offset of reciprocal rank fusion.
MEANING_WEIGHT = 0.75
FUSION_K = 60
#: The share of a passage's letters that must be Latin for it to be read for meaning.
LATIN_SHARE = 0.5


class Embedder(Protocol):
    """Turns texts into unit-length vectors (a numpy array, one row per text)."""

    name: str
    dim: int

    def embed(self, texts: list[str]) -> Any:
        """One L2-normalised row per text."""
        ...


class WordLlamaEmbedder:
    """WordLlama 256-d, read from the files its wheel ships
    (:mod:`core.services.recall.wordllama_model`)."""

    name = "wordllama"
    dim = 256

    def __init__(self) -> None:
        from .wordllama_model import WordLlamaModel

        self._model = WordLlamaModel()

    def embed(self, texts: list[str]) -> Any:
        return self._model.embed(texts)


_LOADED: dict[str, Embedder] = {}


def chosen(store: Store) -> str:
    """The embedder in force: ``MEMWORK_EMBEDDER``, else the store's setting."""
    from_env = os.environ.get(ENV)
    if from_env is not None:
        name = from_env.strip().lower() or "off"
        if name not in CHOICES:
            raise InvalidInput(ENV, f"must be one of {', '.join(CHOICES)} (got {from_env!r})")
        return name
    with store.reading():
        return config.value(store, "embedder")


def embedder(name: str) -> Embedder:
    """The embedder called ``name`` (loaded once per process)."""
    found = _LOADED.get(name)
    if found is None:
        if name != "wordllama":
            raise InvalidInput("embedder", f"must be one of {', '.join(CHOICES)} (got {name!r})")
        found = _LOADED[name] = WordLlamaEmbedder()
    return found


class Vectors:
    """One vector per index slot, kept in step with the index (see the module docstring)."""

    def __init__(self, model: Embedder, index: RecallIndex) -> None:
        import numpy as np

        self.model = model
        self.tag = f"{model.name}/{TEXT_FORM}"  # what a saved file must say it holds
        self.index = index
        self.matrix = np.zeros((max(1024, len(index.kinds)), model.dim), dtype=np.float32)
        self.fps = np.full(len(self.matrix), -1, dtype=np.int64)  # fingerprint per row
        self.computed = 0  # vectors computed since the last save
        index.listeners.append(self._changed)

    def _changed(self, slot: int, unit: object) -> None:
        if slot < len(self.fps):
            self.fps[slot] = -1

    def _sized(self) -> int:
        """Grow the rows to the index's slots; their number."""
        import numpy as np

        n = len(self.index.kinds)
        if n > len(self.matrix):
            grow = max(n, 2 * len(self.matrix))
            matrix = np.zeros((grow, self.model.dim), dtype=np.float32)
            matrix[: len(self.matrix)] = self.matrix
            fps = np.full(grow, -1, dtype=np.int64)
            fps[: len(self.fps)] = self.fps
            self.matrix, self.fps = matrix, fps
        return n

    def current(self) -> Any:
        """The matrix, with every live slot's vector computed."""
        import numpy as np

        index = self.index
        n = self._sized()
        live = np.frombuffer(index.column("kinds"), dtype=np.int8)[:n] >= 0
        fps = np.frombuffer(index.column("fps"), dtype=np.int64)
        self._compute([int(s) for s in np.flatnonzero(live & (self.fps[:n] != fps))])
        self.matrix[:n][~live] = 0.0
        return self.matrix[:n]

    def rows(self, slots: list[int]) -> Any:
        """The vectors of live ``slots``, in their order, computing only theirs (a
        passage's reorder needs a hundred, not the whole store's)."""
        self._sized()
        fps = self.index.fps
        self._compute([s for s in slots if self.fps[s] != fps[s]])
        return self.matrix[slots]

    def _compute(self, stale: list[int]) -> None:
        index = self.index
        self.computed += len(stale)
        for start in range(0, len(stale), 512):
            batch = stale[start : start + 512]
            self.matrix[batch] = self.model.embed([_text(index, s) for s in batch])
            self.fps[batch] = [index.fps[s] for s in batch]

    def to_bytes(self) -> bytes:
        """The vectors of the index's slots, as the cache folder keeps them."""
        return self.snapshot()()

    def snapshot(self) -> Callable[[], bytes]:
        """:meth:`to_bytes` of the vectors as they are now, to run later (a background
        save encodes them outside the follower's lock)."""
        import numpy as np

        n = len(self.index.kinds)
        matrix, fps, name = self.matrix[:n].copy(), self.fps[:n].copy(), self.tag

        def encode() -> bytes:
            import io

            out = io.BytesIO()
            np.savez(out, matrix=matrix, fps=fps, name=np.array(name))
            return out.getvalue()

        return encode

    def load(self, data: bytes) -> None:
        import io

        import numpy as np

        with contextlib.suppress(Exception):  # a damaged cache is only a cache
            saved = np.load(io.BytesIO(data), allow_pickle=False)
            if str(saved["name"]) != self.tag or saved["matrix"].shape[1] != self.model.dim:
                return
            n = min(len(saved["fps"]), self._sized())
            self.matrix[:n] = saved["matrix"][:n]
            self.fps[:n] = saved["fps"][:n]


def _text(index: RecallIndex, slot: int) -> str:
    # The title's words as written, then the kept terms for the rest of the record
    # (the store need not be read again): stems alone read poorly for a word model.
    title = index.titles[slot]
    _, colon, words = title.partition(": ")
    terms = " ".join(" ".join(found) for _, found in decode_fields(index.fields[slot]))
    return f"{words if colon else title} {terms}"


def fill(
    vectors: Vectors,
    index: RecallIndex,
    query: str,
    found: list[Scored],
    limit: int,
    where: Filter,
) -> list[Scored]:
    """``found`` (what the query's words found, fewer than ``limit``) filled up to
    ``limit`` with the records nearest the query's meaning that ``where`` lets
    through, nearest first, each below every word match and marked ``filled``."""
    import numpy as np

    matrix = vectors.current()
    if not len(matrix):
        return found
    sims = matrix @ vectors.model.embed([query])[0]
    ok = index.allowed(where)
    have = {s.slot for s in found}
    # Below every word match, nearest first: a share of the last one's score, scaled
    # by the similarity (from -1 to 1) into (0, FILL_SHARE].
    below = (found[-1].score if found else 1.0) * FILL_SHARE
    kinds = index.kinds
    want = 2 * (limit + len(have))
    while True:
        for slot in _nearest(np, sims, want):
            if slot in have or kinds[slot] < 0 or (ok is not None and not ok(slot)):
                continue
            closeness = (1.0 + max(-1.0, min(1.0, float(sims[slot])))) / 2
            found.append(index.scored(slot, below * max(closeness, 1e-6))._replace(filled=True))
            have.add(slot)
            if len(found) >= limit:
                return found
        if want >= len(sims):
            return found
        want *= 4  # the filters left too few of these: look further


def _nearest(np: Any, sims: Any, k: int) -> list[int]:
    """The ``k`` slots of highest similarity (and any tied with the last), nearest first,
    ties by slot: the start of a stable sort of every slot, without sorting them all
    (13 ms at 100k slots, against under 1 ms for a partition)."""
    if k >= len(sims):
        chosen = np.arange(len(sims))
    else:
        cut = np.partition(sims, len(sims) - k)[len(sims) - k]
        chosen = np.flatnonzero(sims >= cut)
    order: list[int] = chosen[np.lexsort((chosen, -sims[chosen]))].tolist()
    return order


def reads_well(query: str) -> bool:
    """Whether ``query`` is written mostly in Latin letters, the script the shipped model
    reads well (at least :data:`LATIN_SHARE` of its letters)."""
    if query.isascii():  # most passages: no need to look at each letter
        return any(ch.isalpha() for ch in query)
    letters = latin = 0
    for ch in query:
        if ch.isalpha():
            letters += 1
            latin += ch < "\u0250"  # Basic Latin to Latin Extended-B
    return letters > 0 and latin >= LATIN_SHARE * letters


def reorder(vectors: Vectors, query: str, found: list[Scored]) -> list[Scored]:
    """``found`` (a passage's best records by its words, best first) in a new order:
    by the reciprocal ranks of each record by the words and by its nearness to the
    query's meaning, weighed :data:`MEANING_WEIGHT`. The words' scores are handed out
    in the new order, best first (a score is comparable within one query; a context's
    cut at a share of the best lists as many records as the words alone would)."""
    import numpy as np

    if len(found) < 2:
        return found
    rows = vectors.rows([s.slot for s in found])
    sims = rows @ vectors.model.embed([query])[0]
    # Nearest first; equal nearness keeps the words' order.
    by_meaning = np.argsort(-sims, kind="stable")
    fused = [1.0 / (FUSION_K + n) for n in range(1, len(found) + 1)]
    for n, i in enumerate(by_meaning.tolist(), 1):
        fused[i] += MEANING_WEIGHT / (FUSION_K + n)
    order = sorted(range(len(found)), key=lambda i: (-fused[i], i))
    return [found[i]._replace(score=at.score) for i, at in zip(order, found, strict=True)]
