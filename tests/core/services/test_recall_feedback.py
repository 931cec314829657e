"""Feedback: when a search's words find fewer records than asked for, the words of the
best records found fill the rest, below every word match."""

from __future__ import annotations

from pathlib import Path

import pytest

from memwork import Memory
from memwork.core.services.recall import feedback
from memwork.core.services.recall.follow import Recall
from memwork.core.services.recall.query import Filter
from tests.conftest import NOW
from tests.core.services.test_recall_index import isolated_agents

BATTERY = "Check the car battery before a long drive"
CHARGER = "Keep a battery charger in the trunk for a long drive"
TOMATOES = "Water the tomatoes every evening"


def garage(path: Path) -> Memory:
    memory = Memory(path, clock=lambda: NOW)
    for text in (BATTERY, CHARGER, TOMATOES):
        memory.add_lesson(text)
    return memory


def test_the_words_of_the_best_record_found_fill_a_short_search(tmp_path: Path) -> None:
    memory = garage(tmp_path / "s")
    alone = memory.search("car", limit=1)
    found = memory.search("car", limit=5)
    # The word match keeps its place and its score; the note sharing its words (but not
    # the query's) comes next, below it; a note sharing nothing with either never comes.
    assert found[0] == alone[0]
    assert [h["title"] for h in found] == [BATTERY, CHARGER]
    assert found[0]["score"] > found[1]["score"] > 0
    # A filled hit says so; a word match reads as it always did.
    assert "filled" not in found[0] and found[1]["filled"] is True
    memory.close()


def test_the_cli_sets_filled_hits_apart(db: Path, cli) -> None:  # noqa: ANN001
    memory = garage(db)
    memory.close()
    out = cli("search", "car").out.splitlines()
    assert len(out) == 3
    assert BATTERY in out[0] and "none of the query's words" in out[1] and CHARGER in out[2]
    words_only = cli("search", "long drive").out
    assert "none of the query's words" not in words_only  # both hold the words
    assert cli("search", "car", "--json").code == 0


def test_a_search_whose_words_find_enough_never_reads_feedback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = garage(tmp_path / "s")

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("feedback ran")

    monkeypatch.setattr(feedback, "feedback_terms", refused)
    assert [h["title"] for h in memory.search("long drive", limit=2)] == [BATTERY, CHARGER]
    assert memory.search("nothing shares this", limit=5) == []  # no word match: no seed
    memory.close()


def test_what_feedback_fills_in_keeps_to_the_kinds_asked_for(tmp_path: Path) -> None:
    memory = garage(tmp_path / "s")
    sid = memory.start_session(title="garage")["id"]
    memory.observe(sid, "Swapped the battery charger for a smaller one before the drive")
    found = memory.search("car", kinds=["lesson"], limit=5)
    assert [h["kind"] for h in found] == ["lesson", "lesson"]
    everything = memory.search("car", limit=5)
    assert "observation" in [h["kind"] for h in everything]
    memory.close()


def test_what_feedback_fills_in_is_only_what_the_agent_may_see(tmp_path: Path) -> None:
    coder, tester = isolated_agents(
        tmp_path / "s",
        "The car battery died on the long drive home",
        "Bought a battery charger for the long drive",
    )
    # The tester's note shares the coder's words: filled in for the tester's own search
    # only (its words reach it for the tester, and feedback would for the coder).
    assert [h["title"] for h in coder.search("car", limit=5)] == [
        h["title"] for h in coder.search("car", limit=1)
    ]
    assert any("charger" in h["title"] for h in tester.search("battery", limit=5))
    coder.close()
    tester.close()


def test_plain_python_and_numpy_fill_alike(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "s", clock=lambda: NOW)
    sid = memory.start_session(title="ops")["id"]
    for n in range(60):
        memory.observe(sid, f"step {n}: the canary for service-{n % 7} went green after a retry")
    memory.observe(sid, "the billing canary failed twice before the retry")
    memory.close()
    recall = Recall()
    from memwork.core.storage.store import Store

    store = Store(tmp_path / "s")
    index = recall.refresh(store)
    words = index.search("billing", 20, Filter(now=NOW.timestamp()))
    plain = feedback.fill(index, "billing", list(words), 20, Filter(now=NOW.timestamp()), 10**9)
    arrays = feedback.fill(index, "billing", list(words), 20, Filter(now=NOW.timestamp()), 0)
    assert len(plain) == 20 and len(words) < 20
    assert [(s.ref, s.score) for s in plain] == [(s.ref, s.score) for s in arrays]
    store.close()


def test_context_lists_only_what_the_query_words_find(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "s", clock=lambda: NOW)
    sid = memory.start_session(title="garage")["id"]
    memory.observe(sid, "The car battery died on the long drive home")
    memory.observe(sid, "Bought a battery charger for the long drive")
    assert len(memory.search("car", limit=5)) == 2  # the search fills
    text = memory.context(query="car")
    relevant = text.split("## Relevant memories", 1)[1]
    assert "car battery died" in relevant and "charger" not in relevant
    memory.close()


@pytest.mark.parametrize("embedder", ["off", "wordllama"])
def test_context_never_fills_what_it_would_not_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: str
) -> None:
    from memwork.core.services.recall import semantic

    memory = Memory(tmp_path / "s", clock=lambda: NOW)
    sid = memory.start_session(title="garage")["id"]
    memory.observe(sid, "The car battery died on the long drive home")
    memory.observe(sid, "Bought a battery charger for the long drive")
    monkeypatch.setenv("MEMWORK_EMBEDDER", embedder)

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("a fill ran for the context")

    monkeypatch.setattr(feedback, "feedback_terms", refused)
    monkeypatch.setattr(semantic, "embedder", refused)
    text = memory.context(query="car")
    assert "car battery died" in text.split("## Relevant memories", 1)[1]
    memory.close()
