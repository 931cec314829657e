"""The recall index follows its store: other processes' writes, deletes, restarts,
and an index kept incrementally holds exactly what a rebuilt one holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memwork import Memory
from memwork.core.domain import episodes, forgetting, lessons, sessions, slots
from memwork.core.services.recall import saved_file, search
from memwork.core.services.recall.engine import RecallIndex
from memwork.core.services.recall.follow import IndexFile, Recall
from memwork.core.storage.store import Store
from tests.conftest import NOW

ROOT = Path(__file__).resolve().parents[3]


def ep(summary: str, **extra: object) -> dict:
    return {"task_id": "ops", "score": 0.6, "steps": 3, "summary": summary, **extra}


def kept(store: Store) -> Memory:
    return Memory(store.location if store.scheme != "memory" else None, clock=lambda: NOW)


def fill(store: Store, n: int = 0) -> str:
    sid = sessions.start_session(store, title=f"watch {n}", now=NOW, actor="t")["id"]
    for i in range(6):
        sessions.observe(store, sid, f"heron number {i} on pier {n}", now=NOW, actor="t")
    episodes.record_episodes(
        store,
        [ep(f"heron count {n}.{i}", mistakes=["missed a heron"]) for i in range(4)],
        now=NOW,
        actor="t",
    )
    lessons.add_lesson(store, f"Herons feed at dawn {n}", now=NOW, actor="t")
    return sid


def rebuilt_from(store: Store) -> RecallIndex:
    """An index built from the store alone, its saved file left unread."""
    os.environ["MEMWORK_SEARCH_CACHE"] = "0"
    try:
        return Recall().refresh(store)
    finally:
        del os.environ["MEMWORK_SEARCH_CACHE"]


def test_an_index_kept_incrementally_equals_one_rebuilt_from_the_store(store: Store) -> None:
    follower = Recall()
    sid = fill(store)
    follower.refresh(store)
    # Every kind of change, with the follower catching up between them.
    fill(store, 1)
    follower.refresh(store)
    observed = sessions.observe(store, sid, "a grey heron at dusk", now=NOW, actor="t")
    follower.refresh(store)
    lesson = lessons.add_lesson(store, "Herons nest in colonies", now=NOW, actor="t")
    slots.set_slot(store, "birds", "herons and egrets", now=NOW, actor="t")
    follower.refresh(store)
    lessons.forget(store, lesson.lesson["id"], now=NOW, actor="t")
    slots.replace_in_slot(store, "birds", "egrets", "storks", now=NOW, actor="t")
    with store.transaction():  # an observation taken out of the middle of a session
        store.delete(f"observations.{sid}", [observed["id"]])
    follower.refresh(store)
    forgetting.forget_session(store, sid, now=NOW, actor="t")
    follower.refresh(store)
    assert follower.index is not None

    rebuilt = rebuilt_from(store)
    assert follower.index.state() == rebuilt.state()
    assert follower.index.state()["totals"][1] > 0


def test_a_write_by_another_process_is_found_by_the_next_search(tmp_path: Path) -> None:
    db = tmp_path / "s"
    memory = Memory(db, clock=lambda: NOW)
    memory.add_lesson("Canary every deploy")
    assert [h["title"] for h in memory.search("canary")] == ["Canary every deploy"]
    child = subprocess.run(
        [sys.executable, "-m", "memwork", "--db", str(db), "lesson", "add", "Canary the API"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "MEMWORK_NOW": NOW.isoformat()},
        check=False,
    )
    assert child.returncode == 0, child.stderr
    assert sorted(h["title"] for h in memory.search("canary")) == [
        "Canary every deploy",
        "Canary the API",
    ]
    # And a forget in another process takes it out before the next answer.
    lesson_id = next(h["id"] for h in memory.search("canary API"))
    subprocess.run(
        [sys.executable, "-m", "memwork", "--db", str(db), "lesson", "forget", lesson_id],
        capture_output=True,
        cwd=ROOT,
        check=True,
    )
    assert [h["title"] for h in memory.search("canary")] == ["Canary every deploy"]


def test_the_index_survives_a_restart_and_catches_up_with_what_changed(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    fill(store)
    first = Recall()
    before = search.search(store, "heron pier", now=NOW, recall=first)
    assert first.changes > 0
    saved = tmp_path / "s" / "cache" / "recall" / "index.bin"
    assert not saved.exists()  # never inside the search: when the process ends
    first.settle(store)
    assert saved.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "s" / "cache" / "recall").stat().st_mode & 0o777 == 0o700

    again = Recall()  # a new process: the saved index, nothing re-read
    assert search.search(Store(tmp_path / "s"), "heron pier", now=NOW, recall=again) == before
    assert again.changes == 0

    episodes.record_episodes(store, [ep("heron pier census")], now=NOW, actor="t")
    third = Recall()
    hits = search.search(Store(tmp_path / "s"), "heron pier census", now=NOW, recall=third)
    assert hits[0].title.endswith("heron pier census")
    assert third.changes == 1  # only the new episode was read into the index


def test_words_a_search_read_from_the_saved_index_still_take_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "s")
    fill(store)
    first = Recall()
    search.search(store, "heron pier", now=NOW, recall=first)
    first.settle(store)

    again = Recall()  # reads "heron" and "pier" straight from the saved file's bytes
    before = search.search(store, "heron pier", now=NOW, recall=again)
    sid = sessions.start_session(store, title="dusk", now=NOW, actor="t")["id"]
    sessions.observe(store, sid, "heron on the pier, heron under the pier", now=NOW, actor="t")
    after = search.search(store, "heron pier", now=NOW, recall=again)
    assert after != before
    assert any("heron under the pier" in hit.title for hit in after)
    again.settle(store)
    assert search.search(store, "heron pier", now=NOW, recall=Recall()) == after

    monkeypatch.setenv("MEMWORK_SEARCH_CACHE", "0")
    assert again.index is not None
    assert again.index.state() == Recall().refresh(store).state()


def test_a_small_catch_up_is_left_to_the_next_process_and_a_big_one_is_saved(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "s")
    sid = fill(store)
    built_here = Recall()
    search.search(store, "heron", now=NOW, recall=built_here)
    built_here.settle(store)  # the process ends: it saves the index it built
    saved = tmp_path / "s" / "cache" / "recall" / "index.bin"
    built = saved.read_bytes()

    sessions.observe(store, sid, "an egret on pier 0", now=NOW, actor="t")
    one_behind = Recall()
    hits = search.search(Store(tmp_path / "s"), "egret", now=NOW, recall=one_behind)
    assert hits[0].title.endswith("an egret on pier 0")
    one_behind.settle(store)
    assert saved.read_bytes() == built  # one commit behind: not worth rewriting the file

    for n in range(1, 9):  # eight new sessions: eight tables the saved index lacks
        sessions.observe(store, f"run-{n}", f"an egret on pier {n}", now=NOW, actor="t")
    far_behind = Recall()
    hits = search.search(Store(tmp_path / "s"), "egret", now=NOW, limit=20, recall=far_behind)
    assert sum("egret" in h.title for h in hits) == 9
    assert saved.read_bytes() == built  # not inside the search
    far_behind.settle(store)
    assert saved.read_bytes() != built
    again = Recall()
    assert search.search(Store(tmp_path / "s"), "egret", now=NOW, limit=20, recall=again) == hits
    assert again.changes == 0  # the saved index held every egret


def test_the_cache_stays_inside_the_store_and_follows_no_link(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    fill(store)
    bait = tmp_path / "bait"
    bait.mkdir()
    (tmp_path / "s" / "cache").mkdir(mode=0o700)
    (tmp_path / "s" / "cache" / "recall").symlink_to(bait)
    hits = search.search(Store(tmp_path / "s"), "heron count", now=NOW, limit=50)
    assert len(hits) >= 4  # the search still answers, from the store
    assert list(bait.iterdir()) == []  # and wrote nothing through the link
    assert not list((tmp_path / "xdg-cache").rglob("*"))  # nor outside the store


def test_an_unreadable_cache_is_rebuilt_and_the_old_search_cache_is_removed(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "s")
    fill(store)
    old = tmp_path / "s" / "cache" / "search"
    old.mkdir(parents=True, mode=0o700)
    (old / "episodes.000001.txt").write_text("prepared text of an older memwork")
    first = Recall()
    expected = search.search(store, "heron", now=NOW, recall=first)
    first.settle(store)
    (tmp_path / "s" / "cache" / "recall" / IndexFile.NAME).write_bytes(b"\x00garbage")
    again, reopened = Recall(), Store(tmp_path / "s")
    assert search.search(reopened, "heron", now=NOW, recall=again) == expected
    again.settle(reopened)  # rebuilt: saved when the process ends
    assert IndexFile(tmp_path / "s").load() is not None
    assert not old.exists()


def test_folder_and_redis_stores_give_the_same_results(tmp_path: Path, redis_url: str) -> None:
    results = []
    for where in (tmp_path / "s", redis_url):
        store = Store(where)
        fill(store)
        fill(store, 2)
        sid = sessions.start_session(store, title="dusk", now=NOW, actor="t")["id"]
        sessions.observe(store, sid, "when did the herons leave? at dusk", now=NOW, actor="t")
        queries = ["when did the herons leave", "heron count", "dawn", "pier 2", "herron"]
        results.append(
            [
                [(h.kind, h.title, h.score) for h in search.search(store, q, now=NOW, limit=8)]
                for q in queries
            ]
        )
        store.close()
    assert results[0] == results[1]
    assert all(results[0])


def test_a_long_lived_memory_follows_its_own_writes_and_saves_on_close(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "s", clock=lambda: NOW)
    sid = memory.start_session(title="loop")["id"]
    assert memory.search("otter") == []
    memory.observe(sid, "an otter by the weir")
    assert [h["kind"] for h in memory.search("otter", session=sid)] == ["observation"]
    memory.close()
    reloaded = IndexFile(tmp_path / "s").load()
    assert reloaded is not None and reloaded.live >= 2


def test_context_query_adds_relevant_memories_with_their_sources(cli) -> None:  # noqa: ANN001
    sid = cli("session", "start", "--title", "deploy api", now=NOW.isoformat()).out.strip()
    cli("observe", "--session", sid, "the payments canary showed 4% errors", now=NOW.isoformat())
    cli("observe", "--session", sid, "lunch order placed", now=NOW.isoformat())
    episode = {
        "task_id": "deploy",
        "score": 0.2,
        "summary": "Rolled back the payments deploy",
        "mistakes": ["Skipped the canary stage"],
    }
    cli("record-episode", stdin=json.dumps(episode), now=NOW.isoformat())
    cli("lesson", "add", "Canary payments changes for an hour", now=NOW.isoformat())

    plain = cli("context", now=NOW.isoformat())
    assert "Relevant memories" not in plain.out
    assert cli("context", "--query", "", now=NOW.isoformat()).out == plain.out

    asked = cli("context", "--query", "payments canary errors", now=NOW.isoformat())
    assert asked.code == 0
    section = asked.out.split("## Relevant memories\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert section[0].startswith("- [note, deploy api, ") and "4% errors" in section[0]
    assert any(line.startswith("- Episode #1 deploy") for line in section)
    assert not any("lunch" in line for line in section)
    # The lesson is already in the context's lessons: it is not repeated.
    assert not any("Canary payments changes" in line for line in section)

    doc = cli(
        "context", "--query", "payments canary errors", "--format", "json", now=NOW.isoformat()
    )
    relevant = next(s for s in doc.json()["sections"] if s["name"] == "relevant")
    assert relevant["heading"] == "## Relevant memories"
    assert relevant["sources"][0] == [
        {"kind": "observation", "id": relevant["sources"][0][0]["id"], "session": sid}
    ]
    kinds = [src[0]["kind"] for src in relevant["sources"]]
    assert "episode" in kinds and kinds[0] == "observation"

    tight = cli(
        "context",
        "--query",
        "payments canary errors",
        "--budget",
        "40",
        "--format",
        "json",
        now=NOW.isoformat(),
    ).json()
    assert any(d["section"] == "relevant" for d in tight["dropped"])


def test_a_context_listing_more_lessons_than_a_search_returns_still_answers_a_query(
    tmp_path: Path,
) -> None:
    """The lessons a context lists are left out of its query's ranking, not asked for
    as extra hits: with 1,200 of them (past the 1,000 hits a search returns) the query
    once failed, naming a limit the caller never gave."""
    memory = Memory(tmp_path / "s", clock=lambda: NOW)
    sid = memory.start_session(title="deploy api")["id"]
    memory.observe(sid, "the payments canary showed 4% errors")
    with memory.store.transaction():  # one commit for all of them
        for n in range(1_200):
            lessons.add_lesson(
                memory.store, f"Canary payments change {n} for an hour", now=NOW, actor="t"
            )
    text = memory.context(query="payments canary errors", budget=1_000_000)
    section = text.split("## Relevant memories\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert section[0].startswith("- [note, deploy api, ") and "4% errors" in section[0]
    assert not any(line.startswith("- Lesson:") for line in section)  # listed already
    assert text.count("Canary payments change") == 1_200  # each lesson once


def test_what_a_query_finds_outlasts_the_lessons_when_the_budget_is_short(
    tmp_path: Path,
) -> None:
    """Over the budget the relevant memories go after the lessons, before the mistake
    cards: a store of hundreds of lessons once crowded out every line a query found
    (their place in the drop order had fallen below the lessons')."""
    memory = Memory(tmp_path / "s", clock=lambda: NOW)
    sid = memory.start_session(title="deploy api")["id"]
    memory.observe(sid, "the payments canary showed 4% errors")
    with memory.store.transaction():
        for n in range(400):
            lessons.add_lesson(
                memory.store, f"Keep the staging runbook {n} up to date weekly", now=NOW, actor="t"
            )
    text = memory.context(query="payments canary errors")  # the default 2,000 tokens
    assert "## Relevant memories\n- [note, deploy api, " in text and "4% errors" in text
    assert 0 < text.count("Keep the staging runbook") < 400  # lessons were dropped first
    episodic = memory.context(query="payments canary errors", style="episodic", budget=2_000)
    # Laid out as the episodic style lays out its items: indented under the heading.
    listed = episodic.split("Relevant memories:\n", 1)[1].splitlines()
    assert listed[0].startswith("  - [note, deploy api, ") and "4% errors" in listed[0]


def test_memory_and_mcp_take_the_same_query(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "s", clock=lambda: NOW)
    sid = memory.start_session(title="t")["id"]
    memory.observe(sid, "the kiln reached 1200 degrees")
    text = memory.context(query="how hot did the kiln get")
    assert "## Relevant memories\n- [note, t, " in text and "1200 degrees" in text
    assert memory.context() == memory.context(query=None)
    assert "Relevant memories" not in memory.context()


@pytest.mark.parametrize("setting", ["env", "config"])
def test_an_embedder_finds_what_shares_no_word_with_the_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    pytest.importorskip("wordllama")
    memory = Memory(tmp_path / "s", clock=lambda: NOW)
    memory.add_lesson("Buy a new automobile battery before winter")
    memory.add_lesson("Water the tomatoes every evening")
    assert memory.search("car") == []  # no shared word: BM25 alone finds nothing
    if setting == "env":
        monkeypatch.setenv("MEMWORK_EMBEDDER", "wordllama")
    else:
        from memwork.core.ledger import config

        config.set_value(memory.store, "embedder", "wordllama", now=NOW, actor="t")
    found = memory.search("car", limit=1)
    assert found and found[0]["title"] == "Buy a new automobile battery before winter"
    memory.close()
    assert list((tmp_path / "s" / "cache" / "recall").glob("vectors-wordllama.npz"))


def test_the_embedder_fills_below_what_the_words_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("wordllama")
    memory = Memory(tmp_path / "s", clock=lambda: NOW)
    memory.add_lesson("Check the car battery before a long drive")
    memory.add_lesson("Buy a new automobile battery before winter")
    memory.add_lesson("Water the tomatoes every evening")
    words = memory.search("car", limit=1)
    assert [h["title"] for h in words] == ["Check the car battery before a long drive"]
    monkeypatch.setenv("MEMWORK_EMBEDDER", "wordllama")
    filled = memory.search("car", limit=3)
    # The word match keeps its place and its score; the rest come by meaning, below it.
    assert filled[0] == words[0]
    assert [h["title"] for h in filled[1:]] == [
        "Buy a new automobile battery before winter",
        "Water the tomatoes every evening",
    ]
    assert words[0]["score"] > filled[1]["score"] >= filled[2]["score"] > 0
    assert [h.get("filled", False) for h in filled] == [False, True, True]
    assert len(memory.search("car", limit=2)) == 2
    memory.close()


def isolated_agents(path: Path, coder_note: str, tester_note: str) -> tuple[Memory, Memory]:
    """Agents "coder" and "tester" on one store, each with a note in a session of its
    own, and the store set to keep each agent's records to itself."""
    from memwork.core.ledger import config

    coder = Memory(path, agent="coder", clock=lambda: NOW)
    tester = Memory(path, agent="tester", clock=lambda: NOW)
    coder.observe(coder.start_session(title="mine")["id"], coder_note)
    tester.observe(tester.start_session(title="theirs")["id"], tester_note)
    config.set_value(coder.store, "isolation", "agent", now=NOW, actor="tui")
    return coder, tester


def test_what_the_embedder_fills_in_is_only_what_the_agent_may_see(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("wordllama")
    coder, tester = isolated_agents(
        tmp_path / "s",
        "Watered the tomatoes in the greenhouse",
        "Bought a new automobile battery before winter",
    )
    monkeypatch.setenv("MEMWORK_EMBEDDER", "wordllama")
    found = [h["title"] for h in coder.search("car", limit=5)]
    # The nearest by meaning is the other agent's note: filled in for that agent only.
    assert found and not any("automobile" in title for title in found)
    assert "automobile battery" in tester.search("car", limit=1)[0]["title"]
    coder.close()
    tester.close()


def test_a_cli_call_keeps_the_vectors_it_computed(
    db: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: ANN001
    pytest.importorskip("wordllama")
    from memwork.core.services.recall.wordllama_model import WordLlamaModel

    memory = Memory(db, clock=lambda: NOW)
    sid = memory.start_session(title="t")["id"]
    for n in range(300):
        memory.observe(sid, f"step {n}: the deploy of cache-{n} went green")
    memory.close()
    embedded: list[int] = []
    real = WordLlamaModel.embed

    def counted(self: WordLlamaModel, texts: list[str]):  # noqa: ANN202
        embedded.append(len(texts))
        return real(self, texts)

    monkeypatch.setattr(WordLlamaModel, "embed", counted)
    monkeypatch.setenv("MEMWORK_EMBEDDER", "wordllama")
    assert cli("search", "automobile battery").code == 0  # no word matches: filled
    assert sum(embedded) > 300  # every record's vector, then the query's
    assert list((db / "cache" / "recall").glob("vectors-wordllama.npz"))
    embedded.clear()
    assert cli("search", "automobile battery").code == 0
    assert embedded == [1]  # the next call reads them: only the query is embedded


def test_a_search_the_words_fill_never_loads_the_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memwork.core.services.recall import semantic

    memory = Memory(tmp_path / "s", clock=lambda: NOW)
    for n in range(4):
        memory.add_lesson(f"Rotate the api keys of service {n} every month")
    before = memory.search("rotate keys", limit=3)
    monkeypatch.setenv("MEMWORK_EMBEDDER", "wordllama")

    def refused(name: str) -> None:
        raise AssertionError("the embedder was loaded")

    monkeypatch.setattr(semantic, "embedder", refused)
    assert memory.search("rotate keys", limit=3) == before
    memory.close()


def test_an_unknown_embedder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memwork.core.base.errors import InvalidInput

    memory = Memory(tmp_path / "s", clock=lambda: NOW)
    memory.add_lesson("x marks the spot")
    monkeypatch.setenv("MEMWORK_EMBEDDER", "bert")
    with pytest.raises(InvalidInput, match="MEMWORK_EMBEDDER: must be one of off, wordllama"):
        memory.search("spot")


def test_times_are_read_as_utc_instants() -> None:
    assert (
        search.parse_when("2026-11-01", now=NOW, field="since")
        == datetime(2026, 11, 1, tzinfo=UTC).timestamp()
    )
    assert search.parse_when("1w", now=NOW, field="since") == NOW.timestamp() - 7 * 86400


def test_a_commit_that_removes_text_removes_the_index_file_at_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    sid = fill(store)
    secret = sessions.observe(store, sid, "the launch word is PINEAPPLE", now=NOW, actor="t")
    lesson = lessons.add_lesson(store, "Canary every deploy", now=NOW, actor="t").lesson
    built = Recall()
    search.search(store, "launch word", now=NOW, recall=built)
    built.settle(store)
    saved = tmp_path / "s" / "cache" / "recall" / "index.bin"
    assert b"PINEAPPLE" in saved.read_bytes()

    # Ordinary writes leave the file: new records, a lesson confirmed, a session's notes.
    sessions.observe(store, sid, "an egret on pier 0", now=NOW, actor="t")
    episodes.record_episodes(store, [ep("heron census")], now=NOW, actor="t")
    lessons.reinforce(store, lesson["id"], now=NOW, actor="t")
    for n in range(12):  # past a task's ten rules: the oldest move to the archive
        census = ep("heron census", mistakes=[f"m{n}"], score=0.2)
        episodes.record_episodes(store, [census], now=NOW, actor="t")
    with store.reading():
        assert any(name.startswith("rules.archive") for name in store.table_names())
    assert saved.exists()

    # Deleting the observation (no search after it) leaves no copy of its text behind.
    table = f"observations.{sid}"
    with store.transaction():
        store.delete(table, [secret["id"]])
    assert not saved.exists()
    cached = [p for p in (tmp_path / "s" / "cache").rglob("*") if p.is_file()]
    assert not [p for p in cached if b"PINEAPPLE" in p.read_bytes()]
    rebuilt, reopened = Recall(), Store(tmp_path / "s")
    hits = search.search(reopened, "launch word pineapple", now=NOW, recall=rebuilt)
    assert all("PINEAPPLE" not in h.title for h in hits)
    rebuilt.settle(reopened)
    assert saved.exists()  # rebuilt by the next search, saved as its process ends


def test_a_save_under_way_when_a_commit_removes_text_does_not_land(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    sid = fill(store)
    secret = sessions.observe(store, sid, "the launch word is PINEAPPLE", now=NOW, actor="t")
    follower = Recall()
    search.search(store, "launch word", now=NOW, recall=follower)
    reservation = follower.reserve(store)  # a save starts from the index as it is
    assert reservation is not None and follower.index is not None
    other = Store(tmp_path / "s")  # meanwhile another process forgets the note
    with other.transaction():
        other.delete(f"observations.{sid}", [secret["id"]])
    follower.freeze()
    reservation.write(IndexFile.NAME, saved_file.pieces(follower.index), lambda: None)
    assert not reservation.land(store)  # the file would hold the forgotten words
    follower.saved(landed=False)
    folder = tmp_path / "s" / "cache" / "recall"
    assert not [p for p in folder.iterdir() if b"PINEAPPLE" in p.read_bytes()]
    # The next save starts from the index caught up with the forget, and lands.
    follower.flush(store)
    assert b"PINEAPPLE" not in (folder / IndexFile.NAME).read_bytes()


def test_changes_heard_from_the_store_keep_the_index_equal_to_a_rebuilt_one(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "s")
    other = Store(tmp_path / "s")  # another process's writes, adopted by the next read
    follower = Recall()
    sid = fill(store)
    follower.refresh(store)
    for n in range(3):  # the follower hears its store's commits and what it adopts
        note = sessions.observe(store, sid, f"a heron at gate {n}", now=NOW, actor="t")
        sessions.observe(other, sid, f"an egret at gate {n}", now=NOW, actor="t")
        episodes.record_episodes(other, [ep(f"heron survey {n}")], now=NOW, actor="t")
        follower.refresh(store)
        with other.transaction():
            other.delete(f"observations.{sid}", [note["id"]])
        slots.set_slot(store, "birds", f"herons {n}", now=NOW, actor="t")
        follower.refresh(store)
    assert follower._heard == []  # noqa: SLF001 - it followed by what it heard
    hits = search.search(store, "heron gate", now=NOW, limit=20, recall=follower)
    assert not any("a heron at gate" in h.title for h in hits)  # every one was deleted
    assert any("an egret at gate 2" in h.title for h in hits)
    assert follower.index is not None
    rebuilt = rebuilt_from(Store(tmp_path / "s"))
    assert follower.index.state() == rebuilt.state()


def test_a_note_that_only_asks_is_lowered_in_an_index_read_from_its_saved_file(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "s")
    sid = sessions.start_session(store, title="chat", now=NOW, actor="t")["id"]
    for text in (
        "Can you recommend a restaurant for our anniversary?",
        "For a romantic dinner I would pick Roscioli: candlelit tables, a long wine list.",
    ):
        sessions.observe(store, sid, text, now=NOW, actor="t")
    query = "Which restaurant did you recommend for a romantic anniversary dinner?"
    first = Recall()
    built = search.search(store, query, now=NOW, recall=first)
    first.settle(store)  # the index saved, its flag for the asking note with it

    again = Recall()
    read = search.search(store, query, now=NOW, recall=again)
    assert again.index is not None and again.index.from_file
    assert [h.title for h in read] == [h.title for h in built]
    assert "Roscioli" in read[0].title and "Can you recommend" in read[1].title
    assert again.index.state() == Recall().refresh(store).state()


def test_a_reply_whose_asking_note_is_taken_out_is_posted_again(store: Store) -> None:
    """The note after one that only asks takes half its words: with the question gone
    from the middle of the session, the reply follows another note and takes a tenth
    of that one's, as an index rebuilt from the store would."""
    follower = Recall()
    sid = sessions.start_session(store, title="chat", now=NOW, actor="t")["id"]
    for text in ("Packed the car for Tahoe.", "How was the long weekend, Jon?"):
        sessions.observe(store, sid, text, now=NOW, actor="t")
    asked = store.all(f"observations.{sid}")[-1]
    sessions.observe(store, sid, "Went skiing with the kids.", now=NOW, actor="t")
    follower.refresh(store)
    before = search.search(store, "long weekend", now=NOW, recall=follower)
    assert any(h.title.endswith("Went skiing with the kids.") for h in before)
    with store.transaction():
        store.delete(f"observations.{sid}", [asked["id"]])
    follower.refresh(store)
    assert follower.index is not None
    rebuilt = rebuilt_from(store)
    assert follower.index.state() == rebuilt.state()
    assert search.search(store, "long weekend", now=NOW, recall=follower) == []
