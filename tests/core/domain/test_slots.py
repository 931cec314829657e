"""Slots: labels, limits, read-only, ordering, imports, scrubbing, audit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwork.core.base.errors import Conflict, InvalidInput, NotFound
from memwork.core.domain import slots
from memwork.core.ledger import audit
from memwork.core.storage.store import Store
from tests.conftest import NOW

ACTOR = "api"


def _set(store: Store, label: str, content: str, **kw: Any) -> dict[str, Any]:
    return slots.set_slot(store, label, content, now=kw.pop("now", NOW), actor=ACTOR, **kw)


def _snapshot(store: Store) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    with store.reading():
        return store.all("slots"), list(audit.entries(store))


def _labels(store: Store) -> list[str]:
    return [s["label"] for s in slots.list_slots(store)]


def _audit_actions(store: Store) -> list[tuple[str, str]]:
    with store.reading():
        return [(e["action"], e["summary"]) for e in audit.entries(store, newest_first=False)]


# -- create / overwrite / append / replace / delete --------------------------------------
def test_set_creates_with_defaults(store: Store) -> None:
    slot = _set(store, "persona", "I am terse.")
    assert slot["label"] == "persona"
    assert slot["content"] == "I am terse."
    assert slot["limit"] == 2000
    assert slot["description"] == ""
    assert slot["read_only"] is False
    assert slot["position"] == 0
    assert slot["id"].startswith("slot_")
    assert slot["created_at"] == slot["updated_at"] == "2026-11-01T12:00:00.000000Z"
    assert slot["chars"] == 11 and slot["over_limit"] is False
    stored = slots.get_slot(store, "persona")
    assert stored == slot
    with store.reading():
        assert set(store.all("slots")[0]) == set(slots.FIELDS)  # computed fields not stored


def test_set_overwrites_and_keeps_position_description_limit(store: Store) -> None:
    _set(store, "a", "one")
    first = _set(store, "b", "two", limit=50, description="the b slot")
    _set(store, "c", "three")
    later = NOW + timedelta(hours=1)
    again = _set(store, "b", "TWO", now=later)
    assert again["id"] == first["id"]
    assert again["content"] == "TWO"
    assert again["position"] == 1
    assert again["limit"] == 50
    assert again["description"] == "the b slot"
    assert again["created_at"] == first["created_at"]
    assert again["updated_at"] != first["updated_at"]
    changed = _set(store, "b", "TWO", limit=60, description="new words")
    assert (changed["limit"], changed["description"]) == (60, "new words")
    assert _labels(store) == ["a", "b", "c"]


def test_set_that_changes_nothing_writes_nothing(store: Store) -> None:
    _set(store, "a", "same")
    before = _snapshot(store)
    _set(store, "a", "same", now=NOW + timedelta(days=1))
    assert _snapshot(store) == before


def test_append_uses_a_newline_separator(store: Store) -> None:
    _set(store, "notes", "")
    assert slots.append_slot(store, "notes", "first", now=NOW, actor=ACTOR)["content"] == "first"
    assert (
        slots.append_slot(store, "notes", "second", now=NOW, actor=ACTOR)["content"]
        == "first\nsecond"
    )
    _set(store, "notes", "ends with newline\n")
    got = slots.append_slot(store, "notes", "next", now=NOW, actor=ACTOR)
    assert got["content"] == "ends with newline\nnext"
    assert (
        slots.separator("") == "" and slots.separator("x\n") == "" and slots.separator("x") == "\n"
    )


def test_append_empty_text_is_refused(store: Store) -> None:
    _set(store, "notes", "x")
    with pytest.raises(InvalidInput, match="^text: must not be empty"):
        slots.append_slot(store, "notes", "", now=NOW, actor=ACTOR)
    with pytest.raises(InvalidInput, match="^text: is empty once its <private>…</private> parts"):
        slots.append_slot(store, "notes", "<private>secret</private>", now=NOW, actor=ACTOR)


def test_append_and_replace_on_missing_slot_are_not_found(store: Store) -> None:
    with pytest.raises(NotFound, match="slot not found: nope"):
        slots.append_slot(store, "nope", "x", now=NOW, actor=ACTOR)
    with pytest.raises(NotFound):
        slots.replace_in_slot(store, "nope", "a", "b", now=NOW, actor=ACTOR)
    with pytest.raises(NotFound):
        slots.delete_slot(store, "nope", now=NOW, actor=ACTOR)
    with pytest.raises(NotFound):
        slots.get_slot(store, "nope")


def test_replace_replaces_every_occurrence_and_reports_the_count(store: Store) -> None:
    _set(store, "style", "use tabs; tabs everywhere")
    slot, count = slots.replace_in_slot(store, "style", "tabs", "spaces", now=NOW, actor=ACTOR)
    assert count == 2
    assert slot["content"] == "use spaces; spaces everywhere"
    slot, count = slots.replace_in_slot(store, "style", "use ", "", now=NOW, actor=ACTOR)
    assert (slot["content"], count) == ("spaces; spaces everywhere", 1)


def test_replace_with_absent_old_is_an_error_naming_old(store: Store) -> None:
    _set(store, "style", "use tabs")
    before = _snapshot(store)
    with pytest.raises(InvalidInput, match=r"^old: 'spaces' does not occur in slot style") as exc:
        slots.replace_in_slot(store, "style", "spaces", "x", now=NOW, actor=ACTOR)
    assert exc.value.field == "old"
    with pytest.raises(InvalidInput, match="^old: must not be empty"):
        slots.replace_in_slot(store, "style", "", "x", now=NOW, actor=ACTOR)
    assert _snapshot(store) == before


def test_delete_removes_and_closes_the_gap(store: Store) -> None:
    for label in ("a", "b", "c"):
        _set(store, label, label)
    deleted = slots.delete_slot(store, "b", now=NOW, actor=ACTOR)
    assert deleted["label"] == "b"
    assert [(s["label"], s["position"]) for s in slots.list_slots(store)] == [("a", 0), ("c", 1)]
    with pytest.raises(NotFound):
        slots.get_slot(store, "b")
    assert _set(store, "b", "back")["position"] == 2  # a re-created slot goes last


# -- labels -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "label", ["persona", "corrections/mistakes", "a.b-c_d", "A1", "x" * 200, "v1.2/notes_3"]
)
def test_valid_labels(store: Store, label: str) -> None:
    assert _set(store, label, "x")["label"] == label
    assert slots.get_slot(store, label)["label"] == label


@pytest.mark.parametrize(
    "label", ["has space", "émoji", "", "tab\tbed", "semi;colon", "x" * 201, "trailing\n", "a:b"]
)
def test_invalid_labels_are_refused_and_nothing_is_written(store: Store, label: str) -> None:
    before = _snapshot(store)
    with pytest.raises(InvalidInput) as exc:
        _set(store, label, "x")
    assert exc.value.field == "label"
    assert "letters, digits and _ - . /" in str(exc.value)
    assert _snapshot(store) == before
    with pytest.raises(InvalidInput, match="^label: "):
        slots.get_slot(store, label)  # an impossible label names the rule, not "not found"


def test_labels_are_unique_and_case_sensitive(store: Store) -> None:
    a = _set(store, "persona", "one")
    b = _set(store, "persona", "two")
    assert a["id"] == b["id"]
    _set(store, "Persona", "three")
    assert _labels(store) == ["persona", "Persona"]


# -- limits -----------------------------------------------------------------------------
def test_set_over_the_limit_is_refused_not_cut(store: Store) -> None:
    _set(store, "p", "short", limit=2000)
    before = _snapshot(store)
    with pytest.raises(InvalidInput) as exc:
        _set(store, "p", "x" * 2104)
    assert exc.value.field == "content"
    assert str(exc.value) == "content: would be 2104 characters, over the slot's limit of 2000"
    assert _snapshot(store) == before
    with pytest.raises(InvalidInput, match="^content: would be 11 characters"):
        _set(store, "new", "x" * 11, limit=10)
    assert _snapshot(store) == before


def test_exactly_at_the_limit_is_fine(store: Store) -> None:
    assert _set(store, "p", "x" * 10, limit=10)["chars"] == 10
    with pytest.raises(InvalidInput, match="would be 12 characters, over the slot.s limit of 10"):
        slots.append_slot(store, "p", "y", now=NOW, actor=ACTOR)


def test_append_and_replace_over_the_limit_are_refused(store: Store) -> None:
    _set(store, "p", "abcde", limit=8)
    before = _snapshot(store)
    with pytest.raises(InvalidInput, match="^content: would be 9 characters"):
        slots.append_slot(store, "p", "xyz", now=NOW, actor=ACTOR)  # "abcde\nxyz"
    with pytest.raises(InvalidInput, match="^content: would be 9 characters"):
        slots.replace_in_slot(store, "p", "c", "12345", now=NOW, actor=ACTOR)
    assert _snapshot(store) == before
    assert slots.append_slot(store, "p", "xy", now=NOW, actor=ACTOR)["content"] == "abcde\nxy"


@pytest.mark.parametrize("bad", [0, -5, "ten", 1.5, True])
def test_limit_must_be_a_whole_number_of_at_least_one(store: Store, bad: Any) -> None:
    before = _snapshot(store)
    with pytest.raises(InvalidInput) as exc:
        _set(store, "p", "x", limit=bad)
    assert exc.value.field == "limit"
    assert _snapshot(store) == before


def test_lowering_the_limit_below_the_content_is_refused(store: Store) -> None:
    _set(store, "p", "x" * 50, limit=100)
    before = _snapshot(store)
    with pytest.raises(InvalidInput) as exc:
        _set(store, "p", "x" * 50, limit=10)
    assert exc.value.field == "limit"
    assert "10 is below the slot's current 50 characters" in str(exc.value)
    assert _snapshot(store) == before
    assert _set(store, "p", "x" * 10, limit=10)["limit"] == 10  # new content that fits: fine


def test_redaction_counts_against_the_limit(store: Store) -> None:
    with pytest.raises(InvalidInput, match="after redaction, over the slot's limit of 20"):
        _set(store, "p", "PASSWORD=hunter2x", limit=20)  # 17 chars in, 28 once redacted


# -- read-only --------------------------------------------------------------------------
def test_read_only_slots_refuse_edits(store: Store) -> None:
    _set(store, "rules", "do not touch", read_only=True)
    before = _snapshot(store)
    attempts = [
        lambda: _set(store, "rules", "changed"),
        lambda: _set(store, "rules", "changed", read_only=True),
        lambda: slots.append_slot(store, "rules", "more", now=NOW, actor=ACTOR),
        lambda: slots.replace_in_slot(store, "rules", "not", "", now=NOW, actor=ACTOR),
        lambda: slots.delete_slot(store, "rules", now=NOW, actor=ACTOR),
    ]
    for attempt in attempts:
        with pytest.raises(Conflict, match="^slot rules is read-only$"):
            attempt()
    assert _snapshot(store) == before


def test_explicit_read_only_false_unlocks(store: Store) -> None:
    _set(store, "rules", "locked", read_only=True)
    got = _set(store, "rules", "unlocked", read_only=False)
    assert (got["content"], got["read_only"]) == ("unlocked", False)
    assert _audit_actions(store)[-1][0] == "unlock"
    locked = slots.set_read_only(store, "rules", True, now=NOW, actor=ACTOR)
    assert locked["read_only"] is True
    assert slots.set_read_only(store, "rules", False, now=NOW, actor=ACTOR)["read_only"] is False
    assert [a for a, _ in _audit_actions(store)] == ["create", "unlock", "lock", "unlock"]


def test_read_only_slots_can_be_moved(store: Store) -> None:
    _set(store, "a", "a")
    _set(store, "b", "b", read_only=True)
    slots.move_slot(store, "b", 0, now=NOW, actor=ACTOR)
    assert _labels(store) == ["b", "a"]
    # The history counts positions from 1, as the Slots pane shows them.
    action, summary = _audit_actions(store)[-1]
    assert action == "move" and summary.startswith("move slot b to position 1 of 2")


# -- ordering ---------------------------------------------------------------------------
def test_new_slots_go_last_and_move_keeps_positions_dense(store: Store) -> None:
    for label in ("a", "b", "c", "d"):
        _set(store, label, label)
    assert [s["position"] for s in slots.list_slots(store)] == [0, 1, 2, 3]
    moved = slots.move_slot(store, "d", 0, now=NOW + timedelta(minutes=1), actor=ACTOR)
    assert moved["position"] == 0 and moved["updated_at"] != moved["created_at"]
    assert _labels(store) == ["d", "a", "b", "c"]
    slots.move_slot(store, "a", 3, now=NOW, actor=ACTOR)
    assert _labels(store) == ["d", "b", "c", "a"]
    slots.move_slot(store, "c", 1, now=NOW, actor=ACTOR)
    listed = slots.list_slots(store)
    assert [s["label"] for s in listed] == ["d", "c", "b", "a"]
    assert [s["position"] for s in listed] == [0, 1, 2, 3]
    # neighbours that only shifted were not "edited"
    assert slots.get_slot(store, "b")["updated_at"] == slots.get_slot(store, "b")["created_at"]


def test_move_out_of_range_and_noop(store: Store) -> None:
    _set(store, "a", "a")
    _set(store, "b", "b")
    before = _snapshot(store)
    for bad in (-1, 2, "1"):
        with pytest.raises(InvalidInput, match=r"^position: must be between 0 and 1"):
            slots.move_slot(store, "a", bad, now=NOW, actor=ACTOR)  # type: ignore[arg-type]
    slots.move_slot(store, "a", 0, now=NOW, actor=ACTOR)  # already there: nothing written
    assert _snapshot(store) == before


def test_list_orders_by_position_then_label(store: Store) -> None:
    for label, position in (("zeta", 0), ("beta", 1), ("alpha", 1)):
        slots.put_imported_slot(store, {"label": label, "position": position}, now=NOW, actor=ACTOR)
    assert _labels(store) == ["zeta", "alpha", "beta"]
    slots.move_slot(store, "beta", 2, now=NOW, actor=ACTOR)  # a move makes positions dense
    assert [(s["label"], s["position"]) for s in slots.list_slots(store)] == [
        ("zeta", 0),
        ("alpha", 1),
        ("beta", 2),
    ]


# -- imports ----------------------------------------------------------------------------
def test_over_limit_import_is_kept_whole_and_flagged(store: Store) -> None:
    content = "y" * 2500
    got = slots.put_imported_slot(
        store,
        {"label": "human", "content": content, "limit": "2000", "description": "from letta"},
        now=NOW,
        actor="cli",
    )
    assert got["content"] == content
    assert got["limit"] == 2000
    assert got["over_limit"] is True and got["chars"] == 2500
    assert slots.list_slots(store)[0]["over_limit"] is True
    assert _audit_actions(store)[-1] == (
        "import",
        "import slot human (2500/2000 chars, over limit)",
    )


def test_over_limit_slot_may_shrink_but_never_grow(store: Store) -> None:
    slots.put_imported_slot(
        store, {"label": "human", "content": "ab " * 10, "limit": 5}, now=NOW, actor=ACTOR
    )
    before = _snapshot(store)
    with pytest.raises(InvalidInput, match="^content: would be 32 characters"):
        slots.append_slot(store, "human", "x", now=NOW, actor=ACTOR)
    with pytest.raises(InvalidInput, match="^content: would be 40 characters"):
        slots.replace_in_slot(store, "human", "ab", "abc", now=NOW, actor=ACTOR)
    assert _snapshot(store) == before
    slot, _ = slots.replace_in_slot(store, "human", "ab ", "a", now=NOW, actor=ACTOR)
    assert slot["content"] == "a" * 10 and slot["over_limit"] is True
    assert _set(store, "human", "abc")["over_limit"] is False


def test_import_clash_is_a_conflict_unless_replace(store: Store) -> None:
    first = _set(store, "persona", "mine", read_only=True)
    before = _snapshot(store)
    with pytest.raises(Conflict, match="^slot persona already exists$"):
        slots.put_imported_slot(store, {"label": "persona", "content": "x"}, now=NOW, actor=ACTOR)
    assert _snapshot(store) == before
    got = slots.put_imported_slot(
        store, {"label": "persona", "content": "theirs"}, now=NOW, actor=ACTOR, replace=True
    )
    assert got["id"] == first["id"] and got["content"] == "theirs"
    assert got["read_only"] is False and got["position"] == 0
    assert len(slots.list_slots(store)) == 1


def test_import_round_trips_an_exported_record(store: Store, tmp_path) -> None:  # noqa: ANN001
    record = {
        "id": "slot_01EXAMPLE",
        "label": "corrections/mistakes",
        "content": "never force-push",
        "description": "d",
        "limit": 100,
        "read_only": True,
        "position": 3,
        "created_at": "2025-01-01T00:00:00.000000Z",
        "updated_at": "2025-01-02T00:00:00.000000Z",
        "chars": 16,
        "over_limit": False,
    }
    got = slots.put_imported_slot(store, record, now=NOW, actor=ACTOR)
    assert got == record
    with store.reading():
        assert store.all("slots") == [{k: record[k] for k in slots.FIELDS}]


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"content": "x"}, "label"),
        ({"label": "bad label"}, "label"),
        ({"label": "ok", "limit": "0"}, "limit"),
        ({"label": "ok", "limit": "lots"}, "limit"),
        ({"label": "ok", "content": 5}, "content"),
        ({"label": "ok", "position": -1}, "position"),
        ({"label": "ok", "unknown": 1}, "unknown"),
    ],
)
def test_invalid_import_writes_nothing(store: Store, doc: dict[str, Any], field: str) -> None:
    before = _snapshot(store)
    with pytest.raises(InvalidInput) as exc:
        slots.put_imported_slot(store, doc, now=NOW, actor=ACTOR)
    assert exc.value.field == field
    assert _snapshot(store) == before


def test_import_without_position_goes_last(store: Store) -> None:
    _set(store, "a", "a")
    got = slots.put_imported_slot(store, {"label": "b", "limit": 7.0}, now=NOW, actor=ACTOR)
    assert (got["position"], got["limit"], got["content"]) == (1, 7, "")


# -- privacy and audit ------------------------------------------------------------------
def test_secrets_are_scrubbed_and_personal_details_kept(store: Store) -> None:
    # Slots are curated: a person put the contact details there on purpose.
    got = _set(store, "p", "write to alice@example.com", description="key sk-" + "a" * 30)
    assert got["content"] == "write to alice@example.com"
    assert got["description"] == "key [redacted:api_key]"
    got = slots.append_slot(store, "p", "or PASSWORD=hunter2rocks", now=NOW, actor=ACTOR)
    assert got["content"] == "write to alice@example.com\nor PASSWORD=[redacted:password]"
    got, _ = slots.replace_in_slot(
        store,
        "p",
        "or ",
        "cc carol@example.net token ghp_" + "R7mQx2Lp9Vn4Ks8Tz1Wb6Hc3Yd5Jf0Ga2QeX" + " ",
        now=NOW,
        actor=ACTOR,
    )
    assert "carol@example.net" in got["content"] and "ghp_" not in got["content"]
    imported = slots.put_imported_slot(
        store,
        {"label": "h", "content": "ip 10.1.2.3 in /home/ann <private>x</private>"},
        now=NOW,
        actor=ACTOR,
    )
    assert imported["content"] == "ip 10.1.2.3 in /home/ann "
    with store.reading():
        assert "hunter2rocks" not in str(store.all("slots"))


def test_every_mutation_writes_an_audit_entry(store: Store) -> None:
    _set(store, "a", "one")
    _set(store, "a", "two")
    slots.append_slot(store, "a", "three", now=NOW, actor=ACTOR)
    slots.replace_in_slot(store, "a", "two", "2", now=NOW, actor=ACTOR)
    _set(store, "b", "b")
    slots.move_slot(store, "b", 0, now=NOW, actor=ACTOR)
    slots.delete_slot(store, "a", now=NOW, actor=ACTOR)
    slots.put_imported_slot(store, {"label": "c"}, now=NOW, actor=ACTOR)
    with store.reading():
        entries = list(audit.entries(store, newest_first=False))
    assert [e["action"] for e in entries] == [
        "create",
        "set",
        "append",
        "replace",
        "create",
        "move",
        "delete",
        "import",
    ]
    assert {e["table"] for e in entries} == {"slots"}
    assert {e["actor"] for e in entries} == {ACTOR}
    assert entries[3]["summary"] == "replace in slot a: 1 occurrence (7/2000 chars)"
    assert entries[0]["record_id"] == entries[6]["record_id"]


def test_reads_do_not_import_pydantic() -> None:
    import subprocess
    import sys

    from tests.conftest import python_env

    probe = (
        "import sys; from memwork.core.domain import slots; "
        "from memwork.core.storage.store import Store; "
        "s = Store.in_memory(); slots.list_slots(s); "
        "print('pydantic' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=python_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


# -- property: edits never pass the limit ------------------------------------------------
_TEXT = st.text(alphabet="ab \n@.x", max_size=12)
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), _TEXT),
        st.tuples(st.just("append"), _TEXT),
        st.tuples(st.just("replace"), _TEXT, _TEXT),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_OPS, limit=st.integers(min_value=1, max_value=30), start=st.integers(0, 60))
def test_edits_never_pass_the_limit(ops: list[tuple[str, ...]], limit: int, start: int) -> None:
    store = Store.in_memory()
    now = datetime(2026, 1, 1, tzinfo=UTC)
    # Start either from a fitting slot or from an imported one over its limit.
    slots.put_imported_slot(
        store, {"label": "s", "content": "ab" * (start // 2), "limit": limit}, now=now, actor="t"
    )
    previous = slots.get_slot(store, "s")["content"]
    for op in ops:
        try:
            if op[0] == "set":
                slots.set_slot(store, "s", op[1], now=now, actor="t")
            elif op[0] == "append":
                slots.append_slot(store, "s", op[1], now=now, actor="t")
            else:
                slots.replace_in_slot(store, "s", op[1], op[2], now=now, actor="t")
        except InvalidInput as exc:
            assert slots.get_slot(store, "s")["content"] == previous  # refused: unchanged
            assert exc.field in ("content", "text", "old")
            continue
        content = slots.get_slot(store, "s")["content"]
        # Never over the limit, unless an imported over-limit slot that did not grow.
        assert len(content) <= limit or len(content) <= len(previous)
        previous = content
