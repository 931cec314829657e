"""Semantic recall: an optional embedder that fills a search the words leave short.

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
the rest, nearest first, each below every record the words found. A query whose
words match enough records never loads the embedder, and its answer is exactly the
answer without it. (Fusing the two scores for every query, as it once did, moved
turn-level R@10 by -0.8 to +1.8 points across the public sets; filling never moves a
word match, and finds what shares no word with the query.)
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
        stale = np.flatnonzero(live & (self.fps[:n] != fps))
        self.computed += len(stale)
        for start in range(0, len(stale), 512):
            batch = [int(s) for s in stale[start : start + 512]]
            texts = [_text(index, s) for s in batch]
            self.matrix[batch] = self.model.embed(texts)
            self.fps[batch] = [index.fps[s] for s in batch]
        self.matrix[:n][~live] = 0.0
        return self.matrix[:n]

    def to_bytes(self) -> bytes:
        """The vectors of the index's slots, as the cache folder keeps them."""
        return self.snapshot()()

    def snapshot(self) -> Callable[[], bytes]:
        """:meth:`to_bytes` of the vectors as they are now, to run later (a background
        save encodes them outside the follower's lock)."""
        import numpy as np

        n = len(self.index.kinds)
        matrix, fps, name = self.matrix[:n].copy(), self.fps[:n].copy(), self.model.name

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
            if str(saved["name"]) != self.model.name or saved["matrix"].shape[1] != self.model.dim:
                return
            n = min(len(saved["fps"]), self._sized())
            self.matrix[:n] = saved["matrix"][:n]
            self.fps[:n] = saved["fps"][:n]


def _text(index: RecallIndex, slot: int) -> str:
    # The stored terms stand for the record's words (stems read well enough for a
    # word-embedding model, and the store need not be read again).
    return " ".join(" ".join(found) for _, found in decode_fields(index.fields[slot]))


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
