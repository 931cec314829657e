"""A record's links, found through the grouping recording keeps (core/ledger/links.py
``from_record``), always match a scan of the links table: across the writes links
makes itself, writes that go around it, rollbacks and other processes' commits."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memwork.core.ledger import links
from memwork.core.storage.store import Store
from tests.conftest import NOW

HOMES = ("rules.task.t", "rules.archive.000001.task.t", "mistake_cards")
RECORDS = ("r1", "r2", "r3", "c1")


def _scan(store: Store, home: str, frm: str) -> list[dict]:
    return [x for x in links.in_home(store, home) if x["from"] == frm]


def _agrees(store: Store) -> None:
    for home in HOMES:
        for frm in RECORDS:
            found = links.from_record(store, home, frm)
            assert sorted(x["id"] for x in found) == sorted(
                x["id"] for x in _scan(store, home, frm)
            )
            assert all(x is store.docs(links.table_of(home))[x["id"]] for x in found)
            assert all(x["home"] == home for x in found)


def test_the_grouping_follows_every_kind_of_write(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    rng = random.Random(5)
    made: list[dict] = []
    for step in range(150):
        # Several writes a transaction: the first copies the table, the rest change it
        # in place, which only the table's stamp tells.
        with store.transaction():
            for _ in range(rng.randint(1, 5)):
                _one_write(store, rng, made, step)
                _agrees(store)
        with store.reading():
            _agrees(store)


def _one_write(store: Store, rng: random.Random, made: list[dict], step: int) -> None:
    op = rng.choice(["put", "put", "replace", "delete", "rehome", "around", "many"])
    home, frm = rng.choice(HOMES), rng.choice(RECORDS)
    n = len(made)
    if op == "put" or not made:
        link = links.make("derived_from", frm, f"ep{step}-{n}", home, NOW, seq=n)
        made.append(links.put(store, link))
    elif op == "replace":  # a link as it is now, then from another record
        held = [x for h in HOMES for x in store.docs(links.table_of(h)).values()]
        if held:
            old = rng.choice(sorted(held, key=lambda x: x["id"]))
            made.append(links.put(store, {**old, "from": frm, "note": str(n)}))
    elif op == "delete":
        links.delete(store, [rng.choice(made)])
    elif op == "rehome":
        links.rehome(store, frm, home, rng.choice(HOMES))
    elif op == "many":
        new = [links.make("about", frm, f"task:{step}-{n}-{i}", home, NOW) for i in range(3)]
        links.put_all(store, home, new)
        made.extend(new)
    else:  # a write that goes around links, straight to the table
        link = links.make("about", frm, f"file:{step}-{n}", home, NOW)
        store.put(links.table_of(home), link["id"], link)
        made.append(link)


def test_a_rolled_back_link_is_not_found(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    with store.transaction():
        links.put(store, links.make("about", "r1", "task:a", HOMES[0], NOW))
    with store.reading():
        assert len(links.from_record(store, HOMES[0], "r1")) == 1
    with pytest.raises(RuntimeError), store.transaction():
        links.put(store, links.make("about", "r1", "task:b", HOMES[0], NOW))
        assert len(links.from_record(store, HOMES[0], "r1")) == 2
        raise RuntimeError("abandon")
    with store.reading():
        assert [x["to"] for x in links.from_record(store, HOMES[0], "r1")] == ["task:a"]


def test_another_process_s_links_are_found(tmp_path: Path) -> None:
    mine, theirs = Store(tmp_path / "s"), Store(tmp_path / "s")
    with mine.transaction():
        links.put(mine, links.make("about", "r1", "task:a", HOMES[0], NOW))
    with mine.reading():
        assert len(links.from_record(mine, HOMES[0], "r1")) == 1
    with theirs.transaction():
        links.put(theirs, links.make("about", "r1", "task:b", HOMES[0], NOW))
        links.delete(theirs, [x for x in links.in_home(theirs, HOMES[0]) if x["to"] == "task:a"])
    with mine.reading():
        assert [x["to"] for x in links.from_record(mine, HOMES[0], "r1")] == ["task:b"]


def test_groupings_of_tables_the_store_let_go_are_dropped(tmp_path: Path) -> None:
    """A grouping keeps its table's documents alive: once the store holds the table no
    more (another process wrote it, a bulk recording handed it to the backend), the next
    grouping made drops it, so memory stays bounded by what the store holds."""
    mine, theirs = Store(tmp_path / "s"), Store(tmp_path / "s")
    with mine.transaction():
        links.put(mine, links.make("about", "r1", "task:a", HOMES[0], NOW))
        links.put(mine, links.make("about", "c1", "task:b", HOMES[2], NOW))
    with mine.reading():
        links.from_record(mine, HOMES[0], "r1")
    held = mine.derived["links.from"]
    assert links.table_of(HOMES[0]) in held
    mine.cache.evict(links.table_of(HOMES[0]))  # what a refresh or staging does
    with theirs.transaction():
        links.put(theirs, links.make("about", "c1", "task:c", HOMES[2], NOW))
    with mine.reading():
        assert len(links.from_record(mine, HOMES[2], "c1")) == 2
    assert links.table_of(HOMES[0]) not in held
    assert links.table_of(HOMES[2]) in held
