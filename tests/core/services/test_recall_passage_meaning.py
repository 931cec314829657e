"""With the embedder on, a passage asked as a query (a stretch of conversation) has its
words' best records put in a new order by their meaning too; a question, a passage in
a script the model reads poorly, and every search with the embedder off are answered
by the words alone."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memwork import Memory
from memwork.core.services.recall import search, semantic
from memwork.core.services.recall.query import Scored
from tests.conftest import NOW

BEACH = "Went to the beach with my sister and we built a huge sandcastle by the sea"
NOTES = [
    BEACH,
    "Painted the water towers of the old factory for the art club",
    "Baked chocolate chip cookies with grandma for the school bake sale",
    "Adopted a kitten from the animal shelter and named her Pepper",
]
# Mostly chatter; what it is about (a day at the coast) shares almost no word with the
# note that remembers one.
COAST = """User: Guess where we spent the whole afternoon!
Assistant: I have no idea, tell me!
User: At the coast! The waves were enormous and I swam until my fingers got wrinkly.
Assistant: That sounds amazing. Was the water cold?
User: Freezing! Afterwards we dug in the sand and made towers with a moat around them."""


def remembering(path: Path, notes: list[str]) -> Memory:
    memory = Memory(path, clock=lambda: NOW)
    sid = memory.start_session(title="days")["id"]
    for note in notes:
        memory.observe(sid, note)
    return memory


def place(found: list[dict[str, Any]], text: str) -> int:
    return next(n for n, hit in enumerate(found) if text in hit["title"])


def test_a_passage_is_read_for_its_meaning_with_the_embedder_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("wordllama")
    memory = remembering(tmp_path / "s", NOTES)
    words = memory.search(COAST, limit=4)
    monkeypatch.setenv("MEMWORK_EMBEDDER", "wordllama")
    meant = memory.search(COAST, limit=4)
    # The beach comes up past a note that only shares the passage's chatter.
    assert place(meant, "beach") < place(words, "beach")
    # A new order of what the words found, nothing brought in, none marked filled;
    # the words' scores handed out best first, so a context's cut lists as many.
    assert sorted(h["id"] for h in meant) == sorted(h["id"] for h in words)
    assert not any(h.get("filled") for h in meant)
    assert [h["score"] for h in meant] == [h["score"] for h in words]
    memory.close()


def test_a_passage_read_for_meaning_lists_only_what_the_agent_may_see(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("wordllama")
    from tests.core.services.test_recall_index import isolated_agents

    coder, tester = isolated_agents(tmp_path / "s", NOTES[1], BEACH)
    monkeypatch.setenv("MEMWORK_EMBEDDER", "wordllama")
    found = coder.search(COAST, limit=5)
    assert found and not any("beach" in h["title"] for h in found)
    assert "beach" in tester.search(COAST, limit=1)[0]["title"]
    coder.close()
    tester.close()


def test_a_passage_in_a_script_the_model_reads_poorly_is_not_reordered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = remembering(
        tmp_path / "s",
        ["周末和妹妹去海边堆了一个很大的沙堡", "给学校义卖和奶奶一起烤了巧克力饼干"],
    )
    passage = (
        "用户：你猜我们整个下午去了哪里？助手：我不知道，告诉我吧！用户：去海边了！"
        "浪特别大，我一直游到手指都皱了。助手：听起来太棒了，水冷吗？用户：冷极了！"
        "后来我们在沙滩上挖沙子，还堆了带护城河的塔。"
    )
    before = memory.search(passage, limit=2)
    assert before
    monkeypatch.setenv("MEMWORK_EMBEDDER", "wordllama")

    def refused(name: str) -> None:
        raise AssertionError("the embedder was loaded")

    monkeypatch.setattr(semantic, "embedder", refused)
    assert memory.search(passage, limit=2) == before
    memory.close()


class _Model:
    """An embedder whose vectors are chosen by the test: texts holding ``near`` point
    one way (with the query), every other text another."""

    name = "fake"
    dim = 2

    def __init__(self, near: str) -> None:
        self.near = near
        self.embedded: list[str] = []

    def embed(self, texts: list[str]) -> Any:
        self.embedded.extend(texts)
        return np.array([[1.0, 0.0] if self.near in t else [0.0, 1.0] for t in texts], "f4")


def _found(n: int) -> list[Scored]:
    return [
        Scored(slot, f"r{slot}", "observation", f"note {slot}", None, 100.0 - slot, "t")
        for slot in range(n)
    ]


class _Vectors:
    def __init__(self, model: _Model, texts: list[str]) -> None:
        self.model = model
        self.texts = texts

    def rows(self, slots: list[int]) -> Any:
        return self.model.embed([self.texts[s] for s in slots])


def test_reorder_weighs_the_rank_by_meaning_beside_the_rank_by_words() -> None:
    found = _found(100)
    model = _Model(near="tide")
    texts = ["chatter"] * 100
    texts[49] = "tide"
    vectors: Any = _Vectors(model, texts)
    out = semantic.reorder(vectors, "tide", found)
    slots = [s.slot for s in out]
    # Fiftieth by its words, first by its meaning: it climbs to about the twenty-second
    # place (1/(60 + 50) + 0.75/61 against 1.75/(60 + r)); the words keep the first.
    assert slots[0] == 0
    assert 15 < slots.index(49) < 25
    assert [s for s in slots if s != 49] == [s for s in range(100) if s != 49]
    assert [s.score for s in out] == [s.score for s in found]
    assert semantic.reorder(vectors, "tide", found[:1]) == found[:1]


@pytest.mark.parametrize(
    ("query", "reads"),
    [
        ("we went to the coast and swam", True),
        ("Nous sommes allés à la plage, l'été dernier, près de Bézier", True),
        ("周末和妹妹去海边堆了一个很大的沙堡", False),
        ("周末和妹妹去海边堆了沙堡 sandcastle", False),
        ("12345 !!! 678", False),
    ],
)
def test_a_query_reads_well_when_mostly_in_latin_letters(query: str, reads: bool) -> None:
    assert semantic.reads_well(query) is reads


def test_vectors_saved_in_an_older_form_are_made_again(tmp_path: Path) -> None:
    memory = remembering(tmp_path / "s", NOTES)
    memory.search("beach")
    _, recall = search.kept_recall(memory.store)
    index = recall.index
    assert index is not None
    model: Any = _Model(near="beach")
    vectors = semantic.Vectors(model, index)
    vectors.current()
    saved = vectors.to_bytes()
    # The same vectors said to be of the form before titles were read: not taken.
    old = io.BytesIO()
    stored = np.load(io.BytesIO(saved))
    np.savez(old, matrix=stored["matrix"], fps=stored["fps"], name=np.array("fake"))
    again = semantic.Vectors(model, index)
    again.load(old.getvalue())
    assert (again.fps == -1).all()
    again.load(saved)
    assert (again.fps[: len(index.kinds)] == vectors.fps[: len(index.kinds)]).all()
    # A record's vector reads its title's words as written, then its kept terms.
    slot = next(s for s in range(len(index.kinds)) if "beach" in index.titles[s])
    text = semantic._text(index, slot)
    assert text.startswith(BEACH[:40]) and "sandcastl" in text.split(BEACH[-10:], 1)[1]
    memory.close()
