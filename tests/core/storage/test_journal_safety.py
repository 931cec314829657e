"""A tampered or damaged journal.json is refused before anything is replayed, by every verb,
and doctor tells a pending commit (fine: the next open completes it) from a bad journal.

The journal is how the table files change: a fold of the log (and a commit too big for
the log, which is folded in with it) renames all its files in one journaled step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memwork.core.services.doctor.folder import report
from memwork.core.storage import journal
from memwork.core.storage.store import Store
from tests.conftest import folder_digest

T0 = "2026-01-01T00:00:00Z"
VERBS = [
    ("stats",),
    ("doctor",),
    ("context",),
    ("lesson", "list"),
    ("export",),
    ("lesson", "add", "another"),
]


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.json").write_text("precious")
    return outside


def _bad_journals(db: Path, outside: Path) -> dict[str, object]:
    """Journals that would reach outside the store, or that have the wrong shape."""
    victim = str(outside / "victim.json")
    return {
        "delete outside (absolute)": {"deletes": [victim], "renames": []},
        "delete outside (relative)": {"deletes": ["../outside/victim.json"], "renames": []},
        "move a table out": {"deletes": [], "renames": [["lessons.json", "../outside/l.json"]]},
        "move a table out by a temp-like name": {
            "deletes": [],
            "renames": [["lessons.json", "../outside/x.json.tmp-1"]],
        },
        "rename from outside": {"deletes": [], "renames": [[victim, "lessons.json"]]},
        "target the lock": {"deletes": [], "renames": [["x.tmp-1", ".lock"]]},
        "delete the manifest": {"deletes": ["store.json"], "renames": []},
        "temp of another file": {
            "deletes": [],
            "renames": [["lessons.json", "audit.000001.json"]],
        },
        "a list": [1, 2, 3],
        "missing key": {"renames": []},
        "extra key": {"deletes": [], "renames": [], "run": "rm -rf /"},
        "renames not pairs": {"deletes": [], "renames": [["a.json.tmp-1"]]},
        "deletes not strings": {"deletes": [7], "renames": []},
        "a string": "renames",
    }


@pytest.fixture
def seeded(cli, db: Path) -> Path:  # noqa: ANN001
    cli("lesson", "add", "Keep this lesson", now=T0)
    Store(db).fold_log()  # the lesson is in lessons.json now, not only in the log
    return db


@pytest.mark.parametrize(
    "case",
    list(_bad_journals(Path("/db"), Path("/outside"))),
)
def test_a_bad_journal_is_refused_by_every_verb_and_touches_nothing(
    cli,  # noqa: ANN001
    seeded: Path,
    tmp_path: Path,
    case: str,
) -> None:
    outside = _outside(tmp_path)
    plan = _bad_journals(seeded, outside)[case]
    (seeded / journal.JOURNAL_NAME).write_text(json.dumps(plan))
    before = folder_digest(seeded)
    outside_before = folder_digest(outside)
    for verb in VERBS:
        done = cli(*verb)
        if verb == ("doctor",):
            assert done.code == 1, done.out
            assert "PROBLEM  journal:" in done.out
            assert "store is healthy" not in done.out
            assert "next open completes" not in done.out
        else:
            assert done.code == 2, (verb, done.err)
            assert done.err.startswith(f"memwork: {seeded / 'journal.json'} is not a valid")
            assert done.err.count("\n") == 1
        assert folder_digest(seeded) == before, verb
        assert folder_digest(outside) == outside_before, verb


def test_an_unparseable_journal_is_a_problem_for_doctor(cli, seeded: Path) -> None:  # noqa: ANN001
    (seeded / journal.JOURNAL_NAME).write_text("{half a journ")
    before = folder_digest(seeded)
    done = cli("stats")
    assert done.code == 2 and done.err.count("\n") == 1
    assert "journal.json is not a valid memwork journal (not valid JSON" in done.err
    assert "Move it out of the store" in done.err
    doctor = cli("doctor")
    assert doctor.code == 1
    assert "PROBLEM  journal:" in doctor.out and "not valid JSON" in doctor.out
    assert "every command refuses the store" in doctor.out
    assert "next open" not in doctor.out
    assert folder_digest(seeded) == before


def test_a_journal_whose_temp_file_is_a_link_is_refused(
    cli,  # noqa: ANN001
    seeded: Path,
    tmp_path: Path,
) -> None:
    outside = _outside(tmp_path)
    tmp = "lessons.json.tmp-1-abc"
    (seeded / tmp).symlink_to(outside / "victim.json")
    (seeded / journal.JOURNAL_NAME).write_text(
        json.dumps({"deletes": [], "renames": [[tmp, "lessons.json"]]})
    )
    done = cli("stats")
    assert done.code == 2 and "symbolic link" in done.err
    assert (outside / "victim.json").read_text() == "precious"
    assert "Keep this lesson" in (seeded / "lessons.json").read_text()


def _interrupt_during_renames(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fold of the log killed after its journal, part-way through the renames."""
    store = Store(folder)
    with store.transaction():
        store.put("lessons", "b", {"id": "b"})
        store.put("rules", "r", {"id": "r"})
    real_replace = journal.os.replace
    calls = {"n": 0}

    def replace_then_die(src: object, dst: object) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # as if SIGKILLed between two renames
        real_replace(src, dst)

    monkeypatch.setattr(journal.os, "replace", replace_then_die)
    with pytest.raises(KeyboardInterrupt):
        store.fold_log()
    monkeypatch.undo()


def test_doctor_after_a_kill_during_the_renames_says_the_next_open_completes_it(
    cli,  # noqa: ANN001
    seeded: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _interrupt_during_renames(seeded, monkeypatch)
    assert (seeded / journal.JOURNAL_NAME).exists()
    before = folder_digest(seeded)
    done = cli("doctor")
    assert done.code == 0, done.out
    assert "an interrupted commit will be completed by the next open" in done.out
    assert done.out.splitlines()[-1] == "store is usable; 1 warning above"
    assert folder_digest(seeded) == before  # doctor repairs nothing
    assert report(seeded)["ok"]
    # And the next open does complete it.
    store = Store(seeded)
    with store.reading():
        assert store.get("lessons", "b") == {"id": "b"}
        assert store.get("rules", "r") == {"id": "r"}
    assert not (seeded / journal.JOURNAL_NAME).exists()
    assert cli("doctor").out.count("journal") == 0


def test_a_valid_journal_is_still_replayed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "s"
    _interrupt_during_renames(folder, monkeypatch)
    plan = json.loads((folder / journal.JOURNAL_NAME).read_text())
    assert all(".tmp-" in tmp for tmp, _ in plan["renames"])
    store = Store(folder)
    with store.reading():
        assert store.get("rules", "r") == {"id": "r"}
