"""Every pair of texts as similar as near-duplicates, found without comparing each pair
in Python.

Curation compares lessons two by two: near-duplicates are offered for merging, and a
lesson and its negation are flagged. A store's thousands of lessons make millions of
pairs (3,204 lessons: 5.1 million), at ~1.5 µs each through rapidfuzz's Python entry
point. :func:`near_pairs` asks rapidfuzz for a block of rows at a time in C (with the
GIL released, so a workbench stays responsive while it runs), over the upper triangle
only: the same scores, so the same pairs.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Pairs few enough to compare one by one (~1.5 µs each, ~60 ms for numpy's import).
_FEW = 40_000

#: Rows compared in one call: a block's scores are rows x texts bytes.
_BLOCK = 256


def near_pairs(
    texts: Sequence[str], at: float, others: Sequence[str] | None = None
) -> list[tuple[int, int]]:
    """Every (i, j) with ``fuzz.token_set_ratio(texts[i], texts[j]) >= at``: with i < j
    among ``texts`` alone, or across ``texts`` and ``others`` (j indexes ``others``),
    in row order."""
    found: list[tuple[int, int]] = []
    if not texts or (others is not None and not others):
        return found
    from rapidfuzz import fuzz

    columns = len(others) if others is not None else len(texts) // 2
    if len(texts) * columns <= _FEW:
        # Few pairs: one by one, without numpy (its import alone costs ~60 ms).
        for i, text in enumerate(texts):
            start = 0 if others is not None else i + 1
            for j, other in enumerate((others or texts)[start:], start):
                if fuzz.token_set_ratio(text, other) >= at:
                    found.append((i, j))
        return found
    # Here, not at the top: every CLI call imports this module (through the lessons).
    import numpy as np
    from rapidfuzz import process

    for start in range(0, len(texts), _BLOCK):
        rows = texts[start : start + _BLOCK]
        # Within one list: each row against itself and the texts after it.
        first = 0 if others is not None else start
        against = others if others is not None else texts[first:]
        scores = process.cdist(
            rows,
            against,
            scorer=fuzz.token_set_ratio,
            score_cutoff=at,
            dtype=np.uint8,
            workers=-1,
        )
        ii, jj = np.nonzero(scores)
        for i, j in zip(ii.tolist(), jj.tolist(), strict=True):
            row, column = start + i, first + j
            if others is not None or column > row:
                found.append((row, column))
    return found
