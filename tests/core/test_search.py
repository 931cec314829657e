"""`memwork search`: every kind of memory, lexical and fuzzy ranking fused, phrases first."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from memwork.core import search
from memwork.core.storage.store import Store
from tests.conftest import NOW, folder_digest

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

T0 = "2026-11-01T12:00:00Z"


def ep(summary: str, task: str = "ops", **extra: object) -> dict:
    return {"task_id": task, "score": 0.6, "steps": 3, "summary": summary, **extra}


def ids_of(result) -> list[str]:  # noqa: ANN001
    return [hit["id"] for hit in result.json()]


def titles(result) -> list[str]:  # noqa: ANN001
    return [hit["title"] for hit in result.json()]


def test_the_querys_words_side_by_side_rank_above_the_same_words_scattered(cli) -> None:  # noqa: ANN001
    # The worker-25 log is named once; worker-13's log mentions "25" twice and is newer,
    # so word counts alone (and recency) favour the wrong one.
    cli(
        "record-episode",
        stdin=json.dumps(
            [
                ep("Read worker-25.log and found the leak"),
                ep("Read worker-13.log (25 MB), 25 retries, another worker restarted"),
            ]
        ),
        now=T0,
    )
    found = cli("--json", "search", "worker-25", now=T0)
    assert found.code == 0
    assert titles(found)[0].endswith("Read worker-25.log and found the leak")
    assert "Read worker-13.log (25 MB)" in titles(found)[1]
    first, second = found.json()
    assert first["score"] >= 2 > second["score"]  # "side by side" is its own tier
    assert set(first) == {"kind", "id", "title", "score"}


def test_an_exact_phrase_beats_its_words_in_another_order(cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "Deploy after the rollback plan is reviewed", now=T0)
    cli("lesson", "add", "Rollback deploy scripts must be idempotent", now=T0)
    found = cli("--json", "search", "rollback deploy", now=T0)
    assert titles(found) == [
        "Rollback deploy scripts must be idempotent",
        "Deploy after the rollback plan is reviewed",
    ]


def test_typos_are_tolerated(cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "Check the rollback runbook before deploying", now=T0)
    cli("lesson", "add", "Pin the client version", now=T0)
    for query in ("rollbak", "rolback runbok", "deplyoing"):
        assert titles(cli("--json", "search", query, now=T0)) == [
            "Check the rollback runbook before deploying"
        ], query


def test_a_whole_word_ranks_above_the_same_letters_inside_a_word(cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "Rotate the credentials monthly", now=T0)
    cli("lesson", "add", "Rotat means nothing here", now=T0)
    found = titles(cli("--json", "search", "rotat", now=T0))
    assert found[0] == "Rotat means nothing here"


def test_every_memory_kind_is_searched_and_kind_filters(cli) -> None:  # noqa: ANN001
    sid = cli("session", "start", "--title", "zebra migration", now=T0).out.strip()
    cli("observe", "--session", sid, "zebra table locked", now=T0)
    cli("wm", "--session", sid, "set", "blocker", "zebra index", now=T0)
    cli("wm", "--session", sid, "scratch", "add", "zebra notes", now=T0)
    cli("slot", "set", "zebra", "Stripe everything.", now=T0)
    cli("lesson", "add", "Zebra tables need a maintenance window", now=T0)
    cli("rule", "add", "Never lock the zebra table at noon", now=T0)
    cards = [{"mistake_type": "zebra_lock", "lesson": "Lock zebra rows, not the table"}]
    cli(
        "record-episode",
        stdin=json.dumps(ep("zebra rows moved", mistakes=["zebra lock"], mistake_cards=cards)),
        now=T0,
    )
    everything = cli("--json", "search", "zebra", "--limit", "50", now=T0).json()
    assert {h["kind"] for h in everything} == {
        "session",
        "observation",
        "wm",
        "slot",
        "lesson",
        "rule",
        "card",
        "episode",
    }
    only = cli("--json", "search", "zebra", "--kind", "lesson", "--kind", "wm", now=T0).json()
    assert {h["kind"] for h in only} == {"lesson", "wm"}
    assert len(only) == 3  # the lesson, the key, the scratchpad note
    plural = cli("--json", "search", "zebra", "--kind", "cards", now=T0).json()
    assert [h["kind"] for h in plural] == ["card"]
    assert len(cli("--json", "search", "zebra", "--limit", "2", now=T0).json()) == 2


def test_expired_working_memory_is_not_found(cli) -> None:  # noqa: ANN001
    sid = cli("session", "start", now=T0).out.strip()
    cli("wm", "--session", sid, "set", "otter", "soon gone", "--ttl", "60", now=T0)
    assert len(cli("--json", "search", "otter", now=T0).json()) == 1
    later = (NOW + timedelta(minutes=2)).isoformat()
    assert cli("--json", "search", "otter", now=later).json() == []


def test_text_output_and_bad_flags(cli, db: Path) -> None:  # noqa: ANN001
    cli("lesson", "add", "Canary every deploy", now=T0)
    shown = cli("search", "canary", now=T0)
    assert shown.code == 0 and "lesson" in shown.out and "Canary every deploy" in shown.out
    assert cli("search", "nothing-like-this", now=T0).out == ""
    before = folder_digest(db)
    bad = cli("search", "x", "--kind", "bogus", now=T0)
    assert bad.code == 2 and bad.err.startswith("memwork: kind: must be one of lesson, rule")
    assert cli("search", "x", "--limit", "0", now=T0).code == 2
    assert folder_digest(db) == before


def test_a_corpus_follows_the_store_between_searches(store: Store) -> None:
    from memwork.core import episodes

    corpus = search.Corpus()
    episodes.record_episodes(store, [ep("pelican feeding")], now=NOW, actor="t")
    assert [h.kind for h in search.search(store, "pelican", now=NOW, corpus=corpus)] == ["episode"]
    episodes.record_episodes(store, [ep("second pelican")], now=NOW, actor="t")
    hits = search.search(store, "pelican", now=NOW, corpus=corpus)
    assert sorted(h.title.split(": ", 1)[1] for h in hits) == ["pelican feeding", "second pelican"]


@pytest.mark.parametrize("query", ["", "  ", "!!!"])
def test_empty_queries_find_nothing(store: Store, query: str) -> None:
    assert search.search(store, query, now=NOW) == []


def test_the_disk_cache_answers_like_the_store_and_follows_its_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memwork.core import episodes, sessions

    store = Store(tmp_path / "s")
    sid = sessions.start_session(store, title="heron watch", now=NOW, actor="t")["id"]
    sessions.observe(store, sid, "heron on the pier", now=NOW, actor="t")
    episodes.record_episodes(
        store,
        [ep(f"heron count {n}", mistakes=["missed a heron"]) for n in range(30)],
        now=NOW,
        actor="t",
    )

    def run(query: str = "heron count") -> list[search.Hit]:
        return search.search(Store(tmp_path / "s"), query, now=NOW, limit=50)

    fresh = run()
    cached = list((tmp_path / "s" / "cache" / "search").glob("*.txt"))
    assert {p.name for p in cached} == {"episodes.000001.txt", f"observations.{sid}.txt"}
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in cached)
    assert run() == fresh  # answered from the cache, the same hits and scores
    monkeypatch.setenv("MEMWORK_SEARCH_CACHE", "0")
    assert run() == fresh
    monkeypatch.delenv("MEMWORK_SEARCH_CACHE")

    # A new episode lands in the cached shard; a renamed session renames its observations.
    episodes.record_episodes(store, [ep("heron count final")], now=NOW, actor="t")
    assert any(h.title.endswith("heron count final") for h in run())
    with store.transaction():
        session = store.get("sessions", sid)
        store.put("sessions", sid, {**session, "title": "egret watch"})
    assert [h.title for h in run("pier")] == ["note · egret watch: heron on the pier"]


def test_search_and_history_read_and_create_nothing(tmp_path: Path) -> None:
    from memwork.core.cli.main import main

    missing = tmp_path / "no-store-here"
    assert main(["--db", str(missing), "search", "anything"]) == 2
    assert main(["--db", str(missing), "history"]) == 2
    assert not missing.exists()


def test_the_disk_cache_stays_inside_the_store_and_follows_no_link(tmp_path: Path) -> None:
    from memwork.core import episodes

    store = Store(tmp_path / "s")
    episodes.record_episodes(store, [ep(f"heron count {n}") for n in range(5)], now=NOW, actor="t")
    bait = tmp_path / "bait"
    bait.mkdir()
    (tmp_path / "s" / "cache").mkdir(mode=0o700)
    (tmp_path / "s" / "cache" / "search").symlink_to(bait)

    hits = search.search(Store(tmp_path / "s"), "heron count", now=NOW, limit=50)
    assert len(hits) == 5  # the search still answers, from the store
    assert list(bait.iterdir()) == []  # and wrote nothing through the link
    assert not list((tmp_path / "xdg-cache").rglob("*"))  # nor outside the store


def test_a_lesson_the_agent_no_longer_gets_is_marked_in_its_hit(cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "Always run the tests before pushing")
    cli("lesson", "add", "Always run all tests before pushing", "--on-duplicate", "supersede")
    cli("lesson", "add", "Old feature flags cause surprising behaviour")
    forgotten = cli("lesson", "list", "--json").json()
    flag = next(x["id"] for x in forgotten if x["content"].startswith("Old feature"))
    assert cli("lesson", "forget", flag).code == 0
    found = titles(cli("search", "tests before pushing", "--kind", "lesson", "--json"))
    assert "(superseded) Always run the tests before pushing" in found
    assert "Always run all tests before pushing" in found
    found = titles(cli("search", "feature flags", "--kind", "lesson", "--json"))
    assert found == ["(forgotten) Old feature flags cause surprising behaviour"]
