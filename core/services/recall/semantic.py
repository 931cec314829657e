"""Semantic recall: an optional embedder whose similarities are fused with BM25.

One setting chooses it: ``memwork config set embedder wordllama`` (kept in the
store) or ``MEMWORK_EMBEDDER`` (which wins; ``off`` turns it off). It is off by
default because the evaluation shows it barely helps (docs/RECALL.md): on
held-out conversations fusing WordLlama's similarities moved R@10 by +1.8
points on one set and -0.8 on the other, while it costs ~6 ms a query at 10k
records, ~250 MB of memory and a 19 MB optional package.

An :class:`Embedder` turns texts into unit vectors. The one shipped is
WordLlama's 256-dimensional model, loaded from the files its wheel carries
(nothing is ever downloaded): ``pip install 'memwork[embed]'``. Vectors are
kept per index slot, computed for new records when a query needs them, and
saved beside the index on a folder store (checked against each record's
fingerprint, so a stale vector is never used).

Fusion (when on): the best lexical candidates and the embedder's nearest
records are scored ``lexical / best lexical + ALPHA * similarity``, the
similarity rescaled so the nearest record's is 1 and the ``NEAREST``-th one's 0.
"""

from __future__ import annotations

import contextlib
import heapq
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ...base.errors import InvalidInput
from .engine import DEPTH, Filter, RecallIndex, Scored, decode_fields

if TYPE_CHECKING:
    from ...storage.store import Store
    from .follow import Recall

ENV = "MEMWORK_EMBEDDER"
CHOICES = ("off", "wordllama")
ALPHA = 0.2
NEAREST = 200  # the embedder's nearest records fused with the lexical candidates


class Embedder(Protocol):
    """Turns texts into unit-length vectors (a numpy array, one row per text)."""

    name: str
    dim: int

    def embed(self, texts: list[str]) -> Any:
        """One L2-normalised row per text."""
        ...


class WordLlamaEmbedder:
    """WordLlama 256-d from the files in its wheel: the weights and the tokenizer
    (its 0.4 loader looks for the tokenizer in ``tokenizer/``, the wheel ships it in
    ``tokenizers/``, so the two files are handed over directly)."""

    name = "wordllama"
    dim = 256

    def __init__(self) -> None:
        try:
            import wordllama
            from safetensors import safe_open
            from tokenizers import Tokenizer
            from wordllama.inference import WordLlamaInference
        except ImportError:
            raise InvalidInput(
                "embedder", "wordllama is not installed (pip install 'memwork[embed]')"
            ) from None
        root = os.path.dirname(wordllama.__file__)
        tokenizer = Tokenizer.from_file(
            os.path.join(root, "tokenizers", "l2_supercat_tokenizer_config.json")
        )
        with safe_open(
            os.path.join(root, "weights", "l2_supercat_256.safetensors"), framework="np"
        ) as weights:
            matrix = weights.get_tensor("embedding.weight")
        self._model = WordLlamaInference(matrix, tokenizer)

    def embed(self, texts: list[str]) -> Any:
        return self._model.embed(texts, norm=True)


_LOADED: dict[str, Embedder] = {}


def chosen(store: Store) -> str:
    """The embedder in force: ``MEMWORK_EMBEDDER``, else the store's setting."""
    from_env = os.environ.get(ENV)
    if from_env is not None:
        name = from_env.strip().lower() or "off"
        if name not in CHOICES:
            raise InvalidInput(ENV, f"must be one of {', '.join(CHOICES)} (got {from_env!r})")
        return name
    from ...ledger import config

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

    def current(self) -> Any:
        """The matrix, with every live slot's vector computed."""
        import numpy as np

        index = self.index
        n = len(index.kinds)
        if n > len(self.matrix):
            grow = max(n, 2 * len(self.matrix))
            matrix = np.zeros((grow, self.model.dim), dtype=np.float32)
            matrix[: len(self.matrix)] = self.matrix
            fps = np.full(grow, -1, dtype=np.int64)
            fps[: len(self.fps)] = self.fps
            self.matrix, self.fps = matrix, fps
        live = np.frombuffer(index.kinds, dtype=np.int8)[:n] >= 0
        stale = np.flatnonzero(live & (self.fps[:n] != np.frombuffer(index.fps, dtype=np.int64)))
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
            n = min(len(saved["fps"]), len(self.index.kinds))
            self.current()  # sized for the index
            self.matrix[:n] = saved["matrix"][:n]
            self.fps[:n] = saved["fps"][:n]


def _text(index: RecallIndex, slot: int) -> str:
    # The stored terms stand for the record's words (stems read well enough for a
    # word-embedding model, and the store need not be read again).
    return " ".join(" ".join(found) for _, found in decode_fields(index.fields[slot]))


def rank(
    store: Store, recall: Recall, index: RecallIndex, query: str, limit: int, where: Filter
) -> list[Scored]:
    """The best ``limit`` records: BM25 alone, or fused with the embedder in force."""
    name = chosen(store)
    if name == "off":
        return index.search(query, limit, where)
    vectors = recall.vectors(embedder(name))
    import numpy as np

    lexical = index.scores(query, where, max(DEPTH, limit))
    matrix = vectors.current()
    if vectors.computed:
        recall.touched()
    sims = matrix @ vectors.model.embed([query])[0]
    ok = index.allowed(where)
    order = np.argsort(-sims)
    nearest = []
    for slot in order:
        s = int(slot)
        if index.kinds[s] >= 0 and (ok is None or ok(s)):
            nearest.append(s)
            if len(nearest) >= NEAREST:
                break
    if not nearest and not lexical:
        return []
    best = max(lexical.values()) if lexical else 1.0
    hi = float(sims[nearest[0]]) if nearest else 0.0
    lo = float(sims[nearest[-1]]) if nearest else 0.0
    span = (hi - lo) or 1.0
    fused = {}
    for slot in set(lexical) | set(nearest):
        dense = max(0.0, (float(sims[slot]) - lo) / span)
        fused[slot] = lexical.get(slot, 0.0) / (best or 1.0) + ALPHA * dense
    top = heapq.nlargest(limit, fused.items(), key=lambda kv: (kv[1], kv[0]))
    return [index.scored(s, score) for s, score in top if score > 0]
