"""Episode references modelled during a recording (core/ledger/link_batch.py) end as the same
links, in the same tables, as noting them one at a time: whatever the records held
before, however their links move between homes, whatever the clock says, and when
something reads or writes links in the middle."""

from __future__ import annotations

import json
import random
from datetime import timedelta
from pathlib import Path

import pytest

from memwork.core.base import ids
from memwork.core.domain import episodes
from memwork.core.ledger import link_batch, links
from memwork.core.storage.store import Store
from tests.conftest import NOW

HOMES = ("rules.task.t", "rules.archive.000001.task.t", "rules.archive.000002.task.t")
CARDS = "mistake_cards"
RULES = ("r1", "r2", "r3", "r4")


def _tables(store: Store) -> dict[str, dict]:
    """The link tables that hold links (one at a time, a table whose links all moved
    away stays as an empty table; the model never makes it)."""
    with store.reading():
        return {n: dict(store.docs(n)) for n in store.table_names(links.LOGICAL) if store.docs(n)}


def _seed(store: Store, rng: random.Random) -> dict[str, str]:
    """Links the records hold before the batch (some with the seq 0 of old stores); where
    each rule lives."""
    where = {}
    with store.transaction():
        for frm in RULES:
            home = where[frm] = rng.choice(HOMES)
            for i in range(rng.randint(0, 24)):
                at = NOW - timedelta(minutes=rng.randint(0, 50))
                seq = 0 if rng.random() < 0.3 else i + 1
                kind = links.DERIVED_FROM if rng.random() < 0.85 else links.ABOUT
                links.put(store, links.make(kind, frm, f"ep_old{i}", home, at, seq=seq))
        for i in range(rng.randint(0, 22)):
            links.put(store, links.make(links.SIGHTED_IN, "c1", f"ep_old{i}", CARDS, NOW, seq=i))
    return where


def _steps(rng: random.Random, where: dict[str, str], n: int) -> list[tuple]:
    """What a recording asks of links: episodes noted (at instants that may go back),
    rules moved between their active table and archive chunks."""
    home = dict(where)
    out: list[tuple] = []
    for step in range(n):
        at = NOW + timedelta(seconds=rng.randint(-120, 600))
        episode = f"ep_{rng.randint(0, 40)}"  # repeats: an episode noted twice is one link
        roll = rng.random()
        if roll < 0.55:
            frm = rng.choice(RULES)
            out.append(("note", links.DERIVED_FROM, frm, home[frm], episode, at))
        elif roll < 0.75:
            out.append(("note", links.SIGHTED_IN, "c1", CARDS, episode, at))
        elif roll < 0.95:
            frm = rng.choice(RULES)
            new = rng.choice(HOMES)
            out.append(("rehome", frm, home[frm], new))
            home[frm] = new
        else:
            out.append(("read", rng.choice(RULES), step))
    return out


def _apply(store: Store, steps: list[tuple], where: dict[str, str]) -> list:
    seen = []
    home = dict(where)
    for step in steps:
        if step[0] == "note":
            _, kind, frm, at_home, episode, at = step
            links.note_episode(store, kind, frm, at_home, episode, at)
        elif step[0] == "rehome":
            _, frm, old, new = step
            links.rehome(store, frm, old, new)
            home[frm] = new
        else:  # a reader in the middle sees every link noted so far
            frm = step[1]
            seen.append(sorted(x["id"] for x in links.outgoing(store, home[frm], frm)))
    return seen


@pytest.mark.parametrize("seed", range(30))
def test_a_batch_ends_as_one_at_a_time_would(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    at_once, batched = Store(tmp_path / "a"), Store(tmp_path / "b")
    where = _seed(at_once, random.Random(seed))
    assert _seed(batched, random.Random(seed)) == where
    steps = _steps(rng, where, rng.randint(1, 120))
    with at_once.transaction():
        seen_at_once = _apply(at_once, steps, where)
    with batched.transaction(), link_batch.deferred(batched):
        seen_batched = _apply(batched, steps, where)
    assert seen_batched == seen_at_once
    assert _tables(batched) == _tables(at_once)
    assert links.BATCH not in batched.derived


def test_a_batch_past_its_size_writes_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(link_batch, "MAX_RECORDS", 2)
    rng = random.Random(3)
    at_once, batched = Store(tmp_path / "a"), Store(tmp_path / "b")
    where = _seed(at_once, random.Random(3))
    _seed(batched, random.Random(3))
    steps = [s for s in _steps(rng, where, 200) if s[0] != "read"]
    with at_once.transaction():
        _apply(at_once, steps, where)
    with batched.transaction(), link_batch.deferred(batched) as batch:
        _apply(batched, steps, where)
        assert len(batch.records) <= 2
    assert _tables(batched) == _tables(at_once)


def test_a_failed_recording_leaves_no_link_and_no_model(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    before = _tables(store)
    with pytest.raises(RuntimeError), store.transaction(), link_batch.deferred(store):
        links.note_episode(store, links.DERIVED_FROM, "r1", HOMES[0], "ep_1", NOW)
        raise RuntimeError("refused")
    assert _tables(store) == before
    assert links.BATCH not in store.derived
    # The next recording starts afresh.
    with store.transaction(), link_batch.deferred(store):
        links.note_episode(store, links.DERIVED_FROM, "r1", HOMES[0], "ep_2", NOW)
    with store.reading():
        assert [x["to"] for x in links.outgoing(store, HOMES[0], "r1")] == ["ep_2"]


def test_recording_episodes_links_them_as_one_at_a_time_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole recording path (rules derived, cards sighted, rules archived and back,
    consolidation) with and without the model: the same store."""
    rng = random.Random(11)
    tasks = ["deploy", "backfill"]
    texts = [f"step {i}" for i in range(30)]
    batch = []
    for _ in range(300):
        good = rng.random() < 0.6
        picked = rng.sample(texts, rng.randint(1, 3))
        batch.append(
            {
                "task_id": rng.choice(tasks),
                "score": 0.9 if good else 0.1,
                "summary": f"summary {rng.randint(0, 9)}",
                "successes": picked if good else [],
                "mistakes": [] if good else picked,
                "mistake_cards": [
                    {"mistake_type": f"type{rng.randint(0, 3)}", "bad_decision": "guessed"}
                ]
                if not good
                else [],
            }
        )

    def recorded(path: Path, deferred: bool) -> dict[str, dict]:
        ids.seed(9)
        if not deferred:
            monkeypatch.setattr(link_batch, "deferred", _not_deferred)
        store = Store(path)
        for start in range(0, len(batch), 60):
            episodes.record_episodes(store, batch[start : start + 60], now=NOW, actor="cli")
        monkeypatch.undo()
        return _contents(store)

    with_model = recorded(tmp_path / "a", True)
    one_at_a_time = recorded(tmp_path / "b", False)
    assert _same(with_model, one_at_a_time)
    assert any(n.startswith("links.rules.archive.") and t for n, t in with_model.items())
    assert with_model["links.mistake_cards"]


class _not_deferred:  # noqa: N801 - stands in for the context manager
    def __init__(self, store: Store) -> None:
        pass

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_cards_merge_by_key_across_curation_as_a_fresh_index_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recording keeps its cards-by-merge-key index between episodes (core/domain/cards.py);
    across curation merges, edits and a failed recording it files every reported card
    where an index made afresh for each episode would."""
    from memwork.core.domain import cards

    rng = random.Random(4)
    plan = []
    for step in range(40):
        reported = [
            {"mistake_type": f"t{rng.randint(0, 4)}", "correct_decision": rng.choice(["", "x"])}
            for _ in range(rng.randint(1, 3))
        ]
        plan.append(("record", reported))
        if step % 7 == 6:
            plan.append(("merge", rng.random()))
        if step % 11 == 10:
            plan.append(("edit", rng.random()))
        if step % 13 == 12:
            plan.append(("fail", reported))

    def run(path: Path, fresh: bool) -> dict:
        ids.seed(3)
        if fresh:
            monkeypatch.setattr(cards, "_keys", _fresh_keys)
        store = Store(path)
        for what, arg in plan:
            live = sorted(store.docs(cards.TABLE)) if store.has_table(cards.TABLE) else []
            if what == "record":
                item = {"task_id": "t", "score": 0.1, "summary": "s", "mistake_cards": arg}
                episodes.record_episodes(store, [item], now=NOW, actor="cli")
            elif what == "merge" and len(live) > 1:
                keep, absorb = live[int(arg * len(live)) % len(live)], live[0]
                if keep != absorb:
                    cards.merge_cards(store, keep, absorb, now=NOW, actor="tui")
            elif what == "edit" and live:
                cards.edit_card(store, live[-1], now=NOW, actor="tui", lesson=f"l{arg:.3f}")
            elif what == "fail":
                with pytest.raises(RuntimeError), store.transaction():
                    given = [cards.normalise_input(c, task_id="t") for c in arg]
                    cards.apply_cards(store, given, index=0, now=NOW)
                    raise RuntimeError("rolled back")
        monkeypatch.undo()
        return _contents(store)

    kept = run(tmp_path / "a", False)
    fresh = run(tmp_path / "b", True)
    assert _same(kept, fresh)
    assert any(c.get("merged_keys") for c in kept[cards.TABLE].values())


def _fresh_keys(store: Store) -> dict:
    from memwork.core.domain import cards

    docs = store.docs(cards.TABLE)
    by_key = cards._Keys((cards.merge_key(c), c) for c in docs.values())
    for c in docs.values():
        for key in c.get("merged_keys", []):
            by_key.setdefault(tuple(key), c)
    return by_key


def _contents(store: Store) -> dict[str, dict]:
    """Every table that holds documents (one at a time can leave an empty links table
    behind where the model makes none)."""
    with store.reading():
        return {n: dict(store.docs(n)) for n in store.table_names() if store.docs(n)}


def _same(a: dict, b: dict) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
