"""The embedder's own reading of WordLlama's files gives WordLlama's vectors."""

from __future__ import annotations

import os

import pytest

np = pytest.importorskip("numpy")
wordllama = pytest.importorskip("wordllama")


def test_the_vectors_are_wordllamas_own() -> None:
    from safetensors import safe_open
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    from memwork.core.services.recall.wordllama_model import WordLlamaModel

    root = os.path.dirname(wordllama.__file__)
    with safe_open(
        os.path.join(root, "weights", "l2_supercat_256.safetensors"), framework="np"
    ) as weights:
        matrix = weights.get_tensor("embedding.weight")
    tokenizer = Tokenizer.from_file(
        os.path.join(root, "tokenizers", "l2_supercat_tokenizer_config.json")
    )
    theirs = WordLlamaInference(matrix, tokenizer)
    texts = [
        "Buy a new automobile battery before winter",
        "car",
        "the canary for billing-api went green " * 20,  # longer than the others: padding
    ] * 30  # more than one batch
    ours = WordLlamaModel().embed(texts)
    assert ours.shape == (len(texts), 256) and ours.dtype == np.float32
    assert np.abs(ours - theirs.embed(texts, norm=True)).max() < 1e-6
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_a_text_without_tokens_has_a_zero_vector() -> None:
    from memwork.core.services.recall.wordllama_model import WordLlamaModel

    vectors = WordLlamaModel().embed(["", "car"])
    assert not np.isnan(vectors).any()
    assert not vectors[0].any() and vectors[1].any()
