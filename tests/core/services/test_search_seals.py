"""A hit's title is scrubbed on its way out unless the index found it clean and sealed it.

The index checks each record's title once, as the record enters it, and keeps a seal
(a digest keyed by the scrubber's own files) beside each clean title. A search shows a
sealed title as it is; any other title is scrubbed as it is shown: one with a secret
planted in the store (a table file edited by hand), one changed by hand in the index's
saved file (its seal no longer matches), one sealed by another scrubber.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memwork.core import privacy
from memwork.core.domain import sessions
from memwork.core.privacy import seal
from memwork.core.services.recall import search
from memwork.core.services.recall.follow import Recall
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
    with store.transaction():
        doc = store.get(table, note)
        assert doc is not None
        store.put(table, note, {**doc, "content": f"heron deploy used {TOKEN}"})
    (title,) = _titles(store, "heron deploy")
    assert TOKEN not in title
    assert "[redacted:github-pat]" in title


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


def test_a_sealed_title_is_shown_unscrubbed_and_another_scrubbers_seal_does_not_hold(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _noted(store, "the heron deploy went out at dawn")
    recall = Recall()
    shown = _titles(store, "heron deploy", recall)
    index = recall.index
    assert index is not None
    (slot,) = [
        s for s in range(len(index.kinds)) if index.kinds[s] >= 0 and "heron" in index.titles[s]
    ]
    title = index.titles[slot]
    assert seal.sealed(title, index.seals[slot])
    scrubbed: list[str] = []
    real = privacy.scrub

    def spy(text: str, *, personal: bool = True) -> str:
        scrubbed.append(text)
        return real(text, personal=personal)

    monkeypatch.setattr(privacy, "scrub", spy)
    assert _titles(store, "heron deploy", recall) == shown
    assert scrubbed == []  # the note's title and its session's, sealed: shown as they are
    # Another key (another memwork's rules): the seal it finds is not this one.
    monkeypatch.setattr(seal, "_KEYED", None)
    monkeypatch.setattr(seal, "_key_of", lambda folder: b"another scrubber")
    assert not seal.sealed(title, index.seals[slot])
    assert _titles(store, "heron deploy", recall) == shown
    assert title in scrubbed


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
