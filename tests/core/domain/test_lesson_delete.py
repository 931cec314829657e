"""Deleting a lesson for good: its words leave every table, cache and history entry,
and the lessons around it are left as a person would expect."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import curator_args, every_byte

BOTH_BACKENDS = True

#: Words nothing else in the store says, so finding them anywhere is finding a trace.
MARK = "zebraorchid"
KEEP = "kingfisher"


def _add(cli: Any, text: str) -> str:
    done = cli("--json", "lesson", "add", text)
    assert done.code == 0, done.err
    return str(done.json()["id"])


def test_a_deleted_lesson_leaves_no_word_behind(cli: Any, db: Path | str) -> None:
    assert cli("config", "set", "context_log", "on").code == 0
    lesson = _add(cli, f"Call {MARK} Whitfield before a deploy")
    other = _add(cli, f"Watch the {KEEP} dashboard after a deploy")
    assert cli("lesson", "edit", lesson, "--text", f"Ask {MARK} before deploys").code == 0
    assert cli("lesson", "reinforce", lesson).code == 0
    assert MARK in cli("context").out  # an inject entry in the history names it
    assert cli("link", lesson, other).code == 0
    assert cli("--json", "search", MARK).json()  # the search cache holds it now
    assert cli("config", "set", "review", "on").code == 0
    proposed = cli("lesson", "edit", lesson, "--text", f"{MARK} says: deploy on Fridays")
    assert proposed.code == 0, proposed.err  # an agent's edit, waiting for review
    assert MARK in every_byte(db)

    done = cli("--json", "lesson", "delete", lesson)
    assert done.code == 0, done.err
    result = done.json()
    assert result["kind"] == "lesson" and result["ids"] == [lesson]
    assert result["lessons"] == 1 and result["links"] == 1
    assert result["proposals_blanked"] == 1 and result["superseded_forgotten"] == []
    assert result["audit_entries_blanked"] >= 4  # add, edit, reinforce, inject, proposal

    assert MARK not in every_byte(db)
    assert KEEP in every_byte(db)
    assert cli("--json", "search", MARK).json() == []
    assert cli("lesson", "show", lesson).code == 2
    assert [x["id"] for x in cli("--json", "lesson", "list", "--all").json()] == [other]
    # The history keeps the fact of each step, not its words.
    steps = cli("--json", "history", "--record", lesson).json()
    assert {s["action"] for s in steps} >= {"add", "edit", "reinforce", "delete"}
    assert all(MARK not in s["summary"] for s in steps)
    # The agent's proposal is decided: there is no lesson left for it to change.
    (proposal,) = cli(*curator_args(), "--json", "review", "list", "--all").json()
    assert proposal["status"] == "rejected"
    assert "deleted" in proposal["why"]


def test_a_merged_lesson_s_words_leave_the_keeper_s_history(cli: Any, db: Path | str) -> None:
    absorbed = _add(cli, f"Run the {MARK} canary before every deploy")
    keeper = _add(cli, "Run the canary before every deploy")
    assert cli("lesson", "merge", keeper, absorbed).code == 0
    assert any(MARK in w for w in cli("--json", "lesson", "show", keeper).json()["wordings"])

    done = cli("--json", "lesson", "delete", absorbed)
    assert done.code == 0, done.err
    assert done.json()["wordings_removed"] == 1
    kept = cli("--json", "lesson", "show", keeper).json()
    assert kept["content"] == "Run the canary before every deploy"
    assert not kept["forgotten"]
    assert MARK not in every_byte(db)


def test_a_lesson_the_deleted_one_replaced_stays_out_of_the_context(
    cli: Any, db: Path | str
) -> None:
    old = _add(cli, f"Run the {KEEP} canary before every deploy")
    new = _add(cli, f"Run the {KEEP} canary before every deploy, then wait ten minutes")
    assert cli("lesson", "merge", new, old).code == 0
    assert f"{KEEP} canary before every deploy, then" in cli("context").out

    done = cli("lesson", "delete", new)
    assert done.code == 0, done.err
    assert "forgot 1 lesson it had replaced, which would have come back without it" in done.err
    assert old in done.err
    # Not live again behind the person's back: forgotten, and restorable.
    assert KEEP not in cli("context").out
    (left,) = cli("--json", "lesson", "list", "--all").json()
    assert left["id"] == old and left["forgotten"]
    assert cli("lesson", "unforget", old).code == 0
    assert KEEP in cli("context").out


def test_a_lesson_is_named_by_its_whole_id_or_its_last_characters(cli: Any, db: Path | str) -> None:
    first = _add(cli, f"Call {MARK} before a deploy")
    second = _add(cli, "Watch the dashboard after a deploy")
    assert cli("--json", "lesson", "delete", first[-6:]).json()["ids"] == [first]
    assert cli("--json", "lesson", "delete", second[:20]).json()["ids"] == [second]
    assert cli("--json", "lesson", "list", "--all").json() == []


def test_one_missing_lesson_deletes_nothing(cli: Any, db: Path | str) -> None:
    lesson = _add(cli, f"Call {MARK} before a deploy")
    before = cli("--json", "export").json()["tables"]

    done = cli("lesson", "delete", lesson, "les_nosuchlesson")
    assert done.code == 2
    assert "lesson not found: les_nosuchlesson" in done.err
    assert cli("--json", "export").json()["tables"] == before
    assert cli("lesson", "delete").code == 2  # at least one is named
    # The start of an id says when a lesson was made, not which: not enough to delete by.
    vague = cli("lesson", "delete", lesson[:6])
    assert vague.code == 2 and "is only the start of an id" in vague.err
    assert cli("--json", "export").json()["tables"] == before
    blank = cli("lesson", "delete", lesson, " ")
    assert blank.code == 2 and "each must name a lesson (one is empty)" in blank.err
    assert cli("--json", "export").json()["tables"] == before
