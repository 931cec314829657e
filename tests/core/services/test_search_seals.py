"""A hit's title is scrubbed on its way out unless the index found it clean and sealed it.

The index checks each record's title once and keeps a seal (a digest keyed by the
scrubber's own files) beside each clean title: a record added to an index as it comes
in, the records of a build from nothing before the file is written (by a long-lived
process's background saver, or as a process saves what it built). A search shows a
sealed title as it is; any other title is scrubbed as it is shown: one not checked
yet, one with a secret planted in the store (a table file edited by hand), one changed
by hand in the index's saved file (its seal no longer matches), one sealed by another
scrubber.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memwork import Memory
from memwork.core import privacy
from memwork.core.domain import sessions
from memwork.core.privacy import seal
from memwork.core.services.recall import saved_file, search, snapshot
from memwork.core.services.recall.engine import UNSEALED, RecallIndex
from memwork.core.services.recall.follow import SEAL_AT_ONCE, IndexFile, Recall
from memwork.core.services.recall.search import kept_recall
from memwork.core.storage.store import Store
from tests.conftest import NOW

TOKEN = "ghp_R7xkPq2LmN9vB4cZ8wYtH3jF6sD1gA5eK0uQ"  # a GitHub token's shape, not a token
SAME_LENGTH = "abcdefghijklmnopqrstuvwxyzabcdefghijklmn"  # as long as TOKEN: a clean stand-in


def _titles(store: Store, query: str, recall: Recall | None = None) -> list[str]:
    return [hit.title for hit in search.search(store, query, now=NOW, recall=recall)]


def _noted(store: Store, text: str, title: str = "rollout") -> tuple[str, str]:
    """A note in a new session: (its table, its id)."""
    sid = sessions.start_session(store, title=title, now=NOW, actor="t")["id"]
    note = sessions.observe(store, sid, text, now=NOW, actor="t")["id"]
    return f"observations.{sid}", str(note)


def test_a_clean_title_is_sealed_and_one_with_a_secret_is_not() -> None:
    clean = "note: the canary stalled at 40%"
    assert seal.sealed(clean, seal.seal_if_clean(clean))
    assert seal.seal_if_clean(f"note: pushed with {TOKEN}") == 0
    # A seal is of one text: the same seal beside another text does not match.
    assert not seal.sealed(clean + "!", seal.seal_if_clean(clean))
    assert not seal.sealed(clean, 0)


def test_a_secret_planted_in_the_store_is_redacted_in_the_hit(store: Store) -> None:
    table, note = _noted(store, "the heron deploy went out at dawn")
    kept = Recall()
    assert _titles(store, "heron deploy", kept)  # built: the planting below comes in as a change
    with store.transaction():
        doc = store.get(table, note)
        assert doc is not None
        store.put(table, note, {**doc, "content": f"heron deploy used {TOKEN}"})
    for recall in (kept, None):  # checked as it came in, and in a build from nothing
        (title,) = _titles(store, "heron deploy", recall)
        assert TOKEN not in title
        assert "[redacted:github-pat]" in title
    assert kept.index is not None
    assert kept.index.seals[_slot(kept.index, "heron")] == 0  # looked at: not clean


def test_a_secret_in_a_session_title_is_redacted_in_its_notes_hits(store: Store) -> None:
    sid = sessions.start_session(store, title="placeholder", now=NOW, actor="t")["id"]
    sessions.observe(store, sid, "the heron deploy went out at dawn", now=NOW, actor="t")
    with store.transaction():
        doc = store.get("sessions", sid)
        assert doc is not None
        store.put("sessions", sid, {**doc, "title": f"key {TOKEN}"})
    (title,) = _titles(store, "heron deploy")
    assert TOKEN[:12] not in title
    assert "[redacted:" in title
    assert title.endswith(": the heron deploy went out at dawn")


def test_a_title_changed_by_hand_in_the_saved_index_is_scrubbed(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    _noted(store, f"the heron deploy went out with {SAME_LENGTH}")
    built = Recall()
    assert SAME_LENGTH in _titles(store, "heron deploy", built)[0]
    built.settle(store)  # saved as the process that built it ends
    path = tmp_path / "s" / "cache" / "recall" / "index.bin"
    data = path.read_bytes()
    assert data.count(SAME_LENGTH.encode()) >= 1
    # A person's edit: the secret in place of the clean text, the file's layout kept.
    tmp = path.with_name("edited")
    tmp.write_bytes(data.replace(SAME_LENGTH.encode(), TOKEN.encode()))
    tmp.replace(path)
    read = Recall()
    shown = _titles(store, "heron deploy", read)
    assert read.index is not None and read.index.from_file, "the hit must come from the file"
    assert shown and TOKEN not in shown[0]
    assert "[redacted:github-pat]" in shown[0]


def _slot(index: RecallIndex, word: str) -> int:
    (slot,) = [
        s for s in range(len(index.kinds)) if index.kinds[s] >= 0 and word in index.titles[s]
    ]
    return slot


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts scrubbed from now on."""
    scrubbed: list[str] = []
    real = privacy.scrub

    def spy(text: str, *, personal: bool = True) -> str:
        scrubbed.append(text)
        return real(text, personal=personal)

    monkeypatch.setattr(privacy, "scrub", spy)
    monkeypatch.setattr(search, "scrub", spy)  # (what the hits' titles are shown through)
    return scrubbed


def _many_notes(store: Store, count: int = SEAL_AT_ONCE + 10) -> None:
    """More notes than a catch-up checks itself, in one session: heron number 0, 1, ..."""
    sid = sessions.start_session(store, title="weir", now=NOW, actor="t")["id"]
    for n in range(count):
        sessions.observe(store, sid, f"heron number {n} fishing below the weir", now=NOW, actor="t")


def test_a_build_leaves_titles_unchecked_and_a_record_added_later_is_checked_at_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _many_notes(store)
    recall = Recall()
    shown = _titles(store, "heron number 7", recall)
    index = recall.index
    assert index is not None and recall.seals_owed
    built = _slot(index, "number 7 ")
    assert index.seals[built] == UNSEALED and index.unsealed() == [
        s for s in range(len(index.kinds)) if index.kinds[s] >= 0
    ]
    scrubbed = _spy(monkeypatch)
    assert _titles(store, "heron number 7", recall) == shown
    assert index.titles[built] in scrubbed  # not checked yet: scrubbed as it is shown
    _noted(store, "the otter crossed the weir")
    assert _titles(store, "otter weir", recall)
    added = _slot(index, "otter")
    assert seal.sealed(index.titles[added], index.seals[added])
    assert index.seals[built] == UNSEALED  # the build's are left to the saver


def test_a_sealed_title_is_shown_unscrubbed_and_another_scrubbers_seal_does_not_hold(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _noted(store, "the heron deploy went out at dawn")
    recall = Recall()
    shown = _titles(store, "heron deploy", recall)
    index = recall.index
    assert index is not None
    for slot in index.unsealed():
        assert index.seal(slot)
    assert index.unsealed() == []
    slot = _slot(index, "heron")
    title = index.titles[slot]
    assert seal.sealed(title, index.seals[slot])
    scrubbed = _spy(monkeypatch)
    assert _titles(store, "heron deploy", recall) == shown
    assert scrubbed == []  # the note's title and its session's, sealed: shown as they are
    # Another key (another memwork's rules): the seal it finds is not this one.
    monkeypatch.setattr(seal, "_KEYED", None)
    monkeypatch.setattr(seal, "_KEY", b"another scrubber")
    assert not seal.sealed(title, index.seals[slot])
    assert _titles(store, "heron deploy", recall) == shown
    assert title in scrubbed


def test_a_process_saves_what_it_built_with_every_title_checked(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    _noted(store, "the heron deploy went out at dawn")
    _noted(store, f"the kingfisher deploy used {TOKEN}")  # scrubbed as written
    with store.transaction():  # and one planted by hand, never scrubbed
        table, note = _noted(store, "placeholder")
        doc = store.get(table, note)
        assert doc is not None
        store.put(table, note, {**doc, "content": f"the egret deploy used {TOKEN}"})
    built = Recall()
    _titles(store, "deploy", built)
    built.settle(store)  # a process that built the index saves it as it ends
    read = Recall().refresh(store)
    assert read.from_file and read.unsealed() == []
    egret = _slot(read, "egret")
    assert read.seals[egret] == 0  # looked at, not clean: scrubbed whenever shown
    for word in ("heron", "kingfisher"):
        slot = _slot(read, word)
        assert seal.sealed(read.titles[slot], read.seals[slot])
    (hit,) = [t for t in _titles(store, "egret deploy") if "egret" in t]
    assert TOKEN not in hit


def test_a_long_lived_process_checks_the_titles_of_a_file_saved_unchecked(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s"
    store = Store(db)
    _many_notes(store)
    built = Recall(one_call=True)  # a CLI call's build, which leaves its titles unchecked
    built.refresh(store)
    assert built.index is not None and len(built.index.unsealed()) == SEAL_AT_ONCE + 11
    (db / "cache" / "recall").mkdir(parents=True, exist_ok=True)
    (db / "cache" / "recall" / IndexFile.NAME).write_bytes(saved_file.to_bytes(built.index))
    store.close()
    memory = Memory(db, clock=lambda: NOW)
    lock, recall = kept_recall(memory.store)
    recall.save_after = 0.05
    assert memory.search("heron weir")
    assert recall.index is not None and recall.index.from_file
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and IndexFile(db).load().unsealed():  # type: ignore[union-attr]
        time.sleep(0.05)
    saved = IndexFile(db).load()
    assert saved is not None and saved.unsealed() == []
    slot = _slot(saved, "number 7 ")
    assert seal.sealed(saved.titles[slot], saved.seals[slot])
    memory.close()


def test_the_key_changes_with_any_file_of_the_scrubber(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "rules.py").write_text("RULES = []\n")
    (tmp_path / "data" / "gitleaks_rules.jsonl").write_text('{"id": "a"}\n')
    first = seal._key_of(tmp_path)
    assert seal._key_of(tmp_path) == first
    (tmp_path / "data" / "gitleaks_rules.jsonl").write_text('{"id": "b"}\n')
    assert seal._key_of(tmp_path) != first
    (tmp_path / "data" / "gitleaks_rules.jsonl").write_text('{"id": "a"}\n')
    (tmp_path / "rules.py").write_text("RULES = [1]\n")
    assert seal._key_of(tmp_path) != first


def test_a_long_lived_process_without_an_index_file_checks_what_it_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache off (or a Redis store): nothing is saved, and the titles a build left
    unchecked are checked in the background all the same."""
    monkeypatch.setenv("MEMWORK_SEARCH_CACHE", "0")
    db = tmp_path / "s"
    memory = Memory(db, clock=lambda: NOW)
    sid = memory.start_session(title="weir")["id"]
    for n in range(SEAL_AT_ONCE + 10):  # more than a catch-up checks itself
        memory.observe(sid, f"heron number {n} fishing below the weir")
    lock, recall = kept_recall(memory.store)
    checked: list[bool] = []
    real = Recall._check_fresh

    def check_fresh(self: Recall, index: RecallIndex) -> None:
        real(self, index)
        checked.append(self.seals_owed)

    monkeypatch.setattr(Recall, "_check_fresh", check_fresh)
    assert memory.search("heron weir")
    assert checked[0]  # the build's titles were left to the saver
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with lock:
            assert recall.index is not None
            left = recall.index.unsealed()
        if not left:
            break
        time.sleep(0.05)
    assert left == []
    with lock:
        index = recall.index
        slot = _slot(index, "number 7 ")
        assert seal.sealed(index.titles[slot], index.seals[slot])
    assert not (db / "cache" / "recall" / IndexFile.NAME).exists()
    memory.close()


def test_a_catch_up_that_adds_many_records_leaves_their_titles_to_the_saver(
    store: Store,
) -> None:
    """A catch-up checks the titles of the few records a write adds before the query
    goes on; past SEAL_AT_ONCE of them (a build, or an index far behind), it leaves them
    to the saver, outside every query."""
    _noted(store, "the heron deploy went out at dawn")
    recall = Recall()
    recall.refresh(store)
    index = recall.index
    assert index is not None
    assert index.unsealed() == [] and not recall.seals_owed  # two titles: checked at once
    sid = sessions.start_session(store, title="sluice", now=NOW, actor="t")["id"]
    for n in range(SEAL_AT_ONCE + 1):
        sessions.observe(store, sid, f"kingfisher number {n} on the sluice", now=NOW, actor="t")
    recall.refresh(store)
    left = index.unsealed()
    assert len(left) == SEAL_AT_ONCE + 2 and recall.seals_owed  # the notes and the session
    waiting = index.unsealed()
    at, changed = snapshot.seal_some(index, waiting, 0, 60.0)  # what the saver does
    recall.sealed_some(changed, done=at == len(waiting))
    assert index.unsealed() == [] and not recall.seals_owed
    sessions.observe(store, sid, "an otter under the sluice", now=NOW, actor="t")
    recall.refresh(store)
    assert index.unsealed() == [] and not recall.seals_owed
    slot = _slot(index, "otter")
    assert seal.sealed(index.titles[slot], index.seals[slot])


def test_a_long_lived_process_seals_again_what_another_version_sealed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index file whose seals another version of the scrubber made (its rules
    changed since): they no longer match, so its titles are scrubbed when shown, and a
    long-lived process checks them all again in the background and writes the file."""
    db = tmp_path / "s"
    store = Store(db)
    for n in range(5):
        _noted(store, f"heron number {n} fishing below the weir")
    with monkeypatch.context() as old:
        old.setattr(seal, "_KEY", b"an older scrubber")
        old.setattr(seal, "_KEYED", None)
        older = seal.key_id()
        built = Recall()
        built.refresh(store)
        assert built.index is not None and built.index.unsealed() == []
        built.settle(store)  # saved under the older key
    monkeypatch.setattr(seal, "_KEYED", None)  # this process's key again
    assert IndexFile(db).load().seal_key == older  # type: ignore[union-attr]
    assert seal.key_id() != older
    store.close()
    memory = Memory(db, clock=lambda: NOW)
    lock, recall = kept_recall(memory.store)
    recall.save_after = 0.05
    scrubbed = _spy(monkeypatch)
    assert memory.search("heron number 3")
    assert recall.seals_owed or IndexFile(db).load().seal_key == seal.key_id()  # type: ignore[union-attr]
    assert any("heron number 3" in text for text in scrubbed)  # the old seal did not hold
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        saved = IndexFile(db).load()
        if saved is not None and saved.seal_key == seal.key_id():
            break
        time.sleep(0.05)
    assert saved is not None and saved.seal_key == seal.key_id() and saved.unsealed() == []
    slot = _slot(saved, "number 3 ")
    assert seal.sealed(saved.titles[slot], saved.seals[slot])
    memory.close()
