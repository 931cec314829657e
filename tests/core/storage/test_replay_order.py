"""A table caught up from other writers' commits reads as a fresh read of it would: the
same documents, in id order, whatever order the new ids came in."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memwork.core.storage.backend import TableWrite, replay
from memwork.core.storage.store import Store

IDS = st.text(alphabet="0123456789ABCDEFGHJKMNPQRSTVWXYZ", min_size=1, max_size=3)


@st.composite
def _history(draw: st.DrawFn) -> tuple[dict, list[TableWrite]]:
    base = {i: {"id": i, "v": 0} for i in sorted(draw(st.sets(IDS, max_size=120)))}
    writes = []
    for n in range(draw(st.integers(1, 8))):
        put = {i: {"id": i, "v": n + 1} for i in draw(st.sets(IDS, max_size=6))}
        gone = draw(st.lists(IDS, max_size=3))
        replace = draw(st.integers(0, 12)) == 0
        writes.append(TableWrite(put, [i for i in gone if i not in put], replace=replace))
    return base, writes


def _applied(base: dict, writes: list[TableWrite]) -> dict:
    table = dict(base)
    for write in writes:
        if write.replace:
            table = {}
        table.update(write.put)
        for doc_id in write.delete:
            table.pop(doc_id, None)
    return dict(sorted(table.items()))


@settings(max_examples=400, deadline=None)
@given(history=_history())
def test_replayed_writes_give_the_table_in_id_order(history: tuple[dict, list]) -> None:
    base, writes = history
    got = replay(writes, lambda: dict(base))
    assert list(got.items()) == list(_applied(base, writes).items())


def test_a_new_id_that_sorts_before_the_last_ones_takes_its_place() -> None:
    # Two writers made their ids in one order and committed in the other.
    base = {f"obs_{n:03d}": {"n": n} for n in range(500)}
    late = TableWrite({"obs_498a": {"n": -1}}, ["obs_000"])
    got = replay([late], lambda: dict(base))
    ids = list(got)
    assert ids == sorted(ids)
    assert ids[-3:] == ["obs_498", "obs_498a", "obs_499"]
    assert "obs_000" not in got and len(got) == 500


@settings(max_examples=400, deadline=None)
@given(history=_history())
def test_replayed_in_place_gives_the_same_table(history: tuple[dict, list]) -> None:
    """A table the caller alone holds, changed in place: the same documents in the same
    order as the replay into a copy."""
    base, writes = history
    owned = dict(base)
    got = replay(writes, lambda: owned, owned=True)
    assert list(got.items()) == list(_applied(base, writes).items())


def test_a_table_a_reader_holds_is_never_changed_under_it(tmp_path: Path) -> None:
    """Two stores on one folder. While a reader holds a table's documents, the other
    store's commits taken in leave them as they were (a new dict takes their place);
    once nothing holds them, taking in a commit changes the cached dict in place (no
    copy of the table) and moves its stamp, so an index derived from it is rebuilt."""
    writer, reader = Store(tmp_path / "s"), Store(tmp_path / "s")
    with writer.transaction():
        for n in range(200):
            writer.put("notes", f"n{n:03d}", {"n": n})
    with reader.reading():
        held = reader.docs("notes")
        snapshot = dict(held)
    with writer.transaction():
        writer.put("notes", "n999", {"n": 999})
        writer.delete("notes", ["n000"])
    with reader.reading():
        now = reader.docs("notes")
        assert held == snapshot and now is not held
        assert "n999" in now and "n000" not in now
    del held, now
    with reader.reading():
        ident, stamp = id(reader.docs("notes")), reader.table_stamp("notes")
    with writer.transaction():
        writer.put("notes", "n998", {"n": 998})
    with reader.reading():
        docs = reader.docs("notes")
        assert id(docs) == ident and reader.table_stamp("notes") != stamp
        assert list(docs) == sorted(docs) and docs["n998"] == {"n": 998}
    writer.close()
    reader.close()
