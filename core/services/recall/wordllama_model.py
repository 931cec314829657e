"""WordLlama's 256-d model, read straight from the files its wheel ships.

The model is a table of token vectors (32,000 x 256, float16, 16 MB) and a tokenizer:
a text's vector is the mean of its tokens' rows, scaled to unit length. WordLlama's
own loader converts the whole table to float32 and sets up its inference class: ~0.35 s
and ~80 MB in every process that loads it. Here the table is mapped from its file in
place (only the rows of tokens met are read), and the tokenizer is the only other thing
loaded: ~0.1 s and ~22 MB, the same vectors to within float32 rounding.

Only the files are used: ``wordllama`` is located, not imported.
"""

from __future__ import annotations

import importlib.util
import json
import os
import struct
from typing import Any

from ...base.errors import InvalidInput

_TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")
_WEIGHTS = ("weights", "l2_supercat_256.safetensors")
_TENSOR = "embedding.weight"
#: Texts tokenized and pooled together (padded to the longest of them).
_BATCH = 64


def _not_installed() -> InvalidInput:
    return InvalidInput("embedder", "wordllama is not installed (pip install 'memwork[embed]')")


def _package_folder() -> str:
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise _not_installed()
    return str(list(spec.submodule_search_locations)[0])


def _mapped_table(path: str) -> Any:
    """The float16 token table of a safetensors file, mapped read-only in place."""
    import numpy as np

    with open(path, "rb") as file:
        (size,) = struct.unpack("<Q", file.read(8))
        header = json.loads(file.read(size))
    meta = header[_TENSOR]
    if meta["dtype"] != "F16" or len(meta["shape"]) != 2:
        raise InvalidInput("embedder", f"{path}: not the float16 token table memwork reads")
    begin, _ = meta["data_offsets"]
    return np.memmap(
        path, dtype=np.float16, mode="r", offset=8 + size + begin, shape=tuple(meta["shape"])
    )


class WordLlamaModel:
    """The token table and the tokenizer; :meth:`embed` gives unit vectors."""

    def __init__(self) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise _not_installed() from None
        root = _package_folder()
        self.table = _mapped_table(os.path.join(root, *_WEIGHTS))
        self.dim = int(self.table.shape[1])
        tokenizer = Tokenizer.from_file(os.path.join(root, *_TOKENIZER))
        tokenizer.enable_padding()
        tokenizer.no_truncation()
        self._tokenizer = tokenizer

    def embed(self, texts: list[str]) -> Any:
        """One L2-normalised float32 row per text (zeros for a text with no token)."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        last = self.table.shape[0] - 1
        for start in range(0, len(texts), _BATCH):
            encoded = self._tokenizer.encode_batch(
                texts[start : start + _BATCH], add_special_tokens=False
            )
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
            np.clip(ids, 0, last, out=ids)
            rows = self.table[ids].astype(np.float32)  # (texts, tokens, dim)
            sums = (rows * mask[:, :, None]).sum(axis=1)
            counts = mask.sum(axis=1, keepdims=True)
            pooled = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[start : start + len(encoded)] = np.divide(
                pooled, norms, out=np.zeros_like(pooled), where=norms > 0
            )
        return out
