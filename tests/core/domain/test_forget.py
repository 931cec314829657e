"""Forgetting for good: a session or observations leave every table, index, cache and
the next context, through every door; the audit keeps the fact, not the words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memwork import Memory
from memwork.core.base.errors import UserError
from tests.conftest import every_byte, folder_digest, stored_text
from tests.doors import mcp, tool

BOTH_BACKENDS = True

#: Words nothing else in the store says, so finding them anywhere is finding a trace.
MARK = "zebraorchid"
KEEP = "kingfisher"


def _session_with_secrets(cli: Any, word: str) -> tuple[str, list[str]]:
    sid = cli("session", "start", "--project", "api", "--title", f"{word} title").out.strip()
    obs = [
        cli("--json", "observe", "--session", sid, f"{word} observed {n}").json()["id"]
        for n in range(3)
    ]
    cli("wm", "--session", sid, "set", f"{word}-key", f"{word} value")
    cli("wm", "--session", sid, "task", "--id", "t1", "--description", f"{word} task")
    cli("wm", "--session", sid, "scratch", "add", f"{word} scratch")
    cli("wm", "--session", sid, "checkpoint", "create", "-m", f"{word} wm checkpoint")
    cli("session", "end", sid, "--summary", f"{word} summary")
    return sid, obs


def test_a_forgotten_session_leaves_no_trace(cli: Any, db: Path | str) -> None:
    sid, obs = _session_with_secrets(cli, MARK)
    kept, _ = _session_with_secrets(cli, KEEP)
    lesson = cli("lesson", "add", "Check the canary dashboard").out.strip()
    assert cli("link", lesson, obs[0], "--kind", "cites").code == 0
    assert cli("link", lesson, sid).code == 0
    # Searched and exported before: the search cache and the export hold the words.
    assert cli("--json", "search", MARK).json()
    assert MARK in cli("export").out and MARK in every_byte(db)

    done = cli("--json", "session", "delete", sid)
    assert done.code == 0, done.err
    result = done.json()
    assert result["observations"] == 3 and result["working_memory"] is True
    assert result["links"] == 2 and result["checkpoints_may_hold"] == []

    assert MARK not in every_byte(db)  # no table, cache, journal or audit entry holds it
    assert MARK not in cli("export").out
    assert cli("--json", "search", MARK).json() == []
    assert MARK not in cli("context", "--project", "api").out
    assert cli("session", "show", sid).code == 2
    assert cli("--json", "links", lesson).json()["outgoing"] == []
    # The other session is whole.
    assert KEEP in cli("export").out and cli("session", "show", kept).code == 0
    # The audit keeps the fact: when, who, what kind of change, which record.
    entries = cli("--json", "history", "--record", sid, "--limit", "50").json()
    assert entries[0]["action"] == "forget" and MARK not in json.dumps(entries)
    assert {e["summary"] for e in entries[1:]} == {"[forgotten]"}
    assert {e["action"] for e in entries} >= {"start", "end", "wm-set", "forget"}


def test_a_forgotten_session_takes_its_actions_with_it(cli: Any, db: Path | str) -> None:
    sid = cli("session", "start", "--project", "api").out.strip()
    other = cli("session", "start", "--project", "api").out.strip()

    def add(title: str, *flags: str) -> str:
        done = cli("--json", "action", "add", title, "--project", "api", *flags)
        assert done.code == 0, done.err
        return str(done.json()["id"])

    first = add(f"{MARK} rotate keys", "--session", sid, "--priority", "3")
    second = add(f"{MARK} page on-call", "--session", sid, "--after", first)
    cli("action", "update", second, "--note", f"{MARK} note", "--status", "active")
    kept = add(f"{KEEP} backfill", "--session", other, "--after", second)
    assert MARK in cli("context", "--project", "api").out

    done = cli("--json", "session", "delete", sid)
    assert done.code == 0, done.err
    assert done.json()["actions"] == 2
    assert MARK not in every_byte(db)  # no table, journal or audit entry holds the titles
    assert MARK not in cli("export").out
    assert MARK not in cli("context", "--project", "api").out
    assert MARK not in cli("--json", "history", "--limit", "200").out
    assert cli("action", "show", first).code == 2
    # Another session's action stays, no longer waiting for one that is gone.
    shown = cli("--json", "action", "show", kept).json()
    assert shown["after"] == [] and shown["workable"] is True
    assert KEEP in cli("context", "--project", "api").out
    # The audit keeps the fact that the actions were there, not their titles.
    entries = cli("--json", "history", "--record", first).json()
    assert entries and {e["summary"] for e in entries} == {"[forgotten]"}
    assert "(0 observations, 1 action)" in cli("session", "delete", other).out


def test_forgetting_observations_one_by_one(cli: Any, db: Path | str) -> None:
    sid, obs = _session_with_secrets(cli, KEEP)
    secret = cli("--json", "observe", "--session", sid, f"{MARK} leaked").json()["id"]
    before = cli("--json", "session", "show", sid).json()
    done = cli("--json", "observation", "delete", f"{sid}/{secret}")
    assert done.code == 0, done.err
    assert done.json()["ids"] == [secret]
    assert MARK not in every_byte(db)
    after = cli("--json", "session", "show", sid).json()
    assert [o["id"] for o in after["observations"]] == obs
    # Counted, so the tally of what was ever observed still adds up.
    assert after["total_observed"] == before["total_observed"]
    assert after["forgotten_observations"] == 1
    # All or nothing: one unknown id deletes none.
    snapshot = folder_digest(db)
    refused = cli("observation", "delete", obs[0], "obs_nope")
    assert refused.code == 2 and "obs_nope" in refused.err
    assert folder_digest(db) == snapshot


def test_checkpoints_keep_their_copies_until_deleted(cli: Any, db: Path | str) -> None:
    sid, _ = _session_with_secrets(cli, MARK)
    checkpoint = cli("checkpoint", "create", "-m", "before").out.strip()
    done = cli("session", "delete", sid)
    assert done.code == 0 and checkpoint[:8] in done.err  # said on stderr
    assert MARK not in every_byte(db)
    assert MARK in every_byte(db, snapshots=True)  # the checkpoint's copy, as promised
    cli("checkpoint", "delete", checkpoint)
    assert MARK not in every_byte(db, snapshots=True)


def test_forget_lesson_on_the_command_line_names_the_lesson_verbs(cli: Any, db: Path | str) -> None:
    lesson = cli("--json", "lesson", "add", "pin the base image").json()["id"]
    done = cli("forget", "lesson", lesson)
    assert done.code == 2 and done.err.count("\n") == 1, done.err
    assert "`memwork lesson forget`" in done.err and "`memwork lesson delete`" in done.err
    assert cli("lesson", "show", lesson).code == 0  # refused: nothing was forgotten
    assert "invalid choice" in cli("forget", "sesion", "x").err  # other words: as before


@pytest.mark.slow
def test_forget_through_the_api_and_mcp(cli: Any, db: Path | str) -> None:
    first, first_obs = _session_with_secrets(cli, MARK)
    second, second_obs = _session_with_secrets(cli, MARK + "x")

    with Memory(db) as memory:
        gone = memory.forget("observation", first_obs[1])
        assert gone["ids"] == [first_obs[1]]
        with pytest.raises(UserError, match="kind") as refused:
            memory.forget("lesson", first)
        # A lesson has verbs of its own: the refusal names both.
        assert "forget_lesson" in str(refused.value) and "delete_lessons" in str(refused.value)
        assert memory.delete_session(first)["observations"] == 2

    async def body(client: Client) -> Any:
        return await tool(client, "forget", kind="session", id=second)

    assert mcp(db, body)["id"] == second
    assert MARK not in every_byte(db)
    assert stored_text(db, "sessions").count('"id"') == 0


@pytest.mark.folder_only
def test_the_search_cache_forgets_at_once(cli: Any, db: Path) -> None:
    sid, _ = _session_with_secrets(cli, MARK)
    assert cli("--json", "search", MARK).json()
    cache = db / "cache"
    assert cache.exists() and MARK in every_byte(cache)
    cli("session", "delete", sid)
    assert MARK not in every_byte(cache)


def test_a_summary_crystallize_wrote_loses_its_quote_of_a_forgotten_note(
    cli: Any, db: Path | str
) -> None:
    """crystallize (no model) quotes observations in the session's summary and in the
    summary's audit entry: forgetting one blanks its quotes there, every other quote
    stays, and no byte of the store holds its words."""
    sid = cli("session", "start", "--title", "deploy").out.strip()
    cli("observe", "--session", sid, "--kind", "decision", f"{KEEP} goes first")
    long_note = f"{MARK} " + "the long reason why " * 20  # quoted cut short, with …
    cli("observe", "--session", sid, "--kind", "error", long_note)
    secret = cli("--json", "observe", "--session", sid, f"{MARK} leaked").json()["id"]
    summary = cli("--json", "crystallize", sid).json()["summary"]
    assert f"{MARK} leaked" in summary and "…" in summary
    cli("observation", "delete", f"{sid}/{secret}")
    assert f"{MARK} leaked" not in every_byte(db)
    held = cli("--json", "session", "show", sid).json()["summary"]
    assert held.endswith("Last: [forgotten]") and f"Decided: {KEEP} goes first." in held
    # The cut quote of the other note (still kept) stays: only what was forgotten goes.
    assert f"Errors: {MARK} the long reason" in held
    long_id = next(
        o["id"]
        for o in cli("--json", "session", "show", sid).json()["observations"]
        if o["content"].startswith(MARK)
    )
    done = cli("--json", "observation", "delete", f"{sid}/{long_id}").json()
    assert done["quotes_blanked"] == 2  # the summary, and its audit entry
    assert MARK not in every_byte(db)
    assert "Errors: [forgotten]." in cli("--json", "session", "show", sid).json()["summary"]
    assert KEEP in cli("--json", "session", "show", sid).json()["summary"]
    assert cli("--json", "search", MARK).json() == []


def test_a_summary_in_other_words_is_its_own_record(cli: Any, db: Path | str) -> None:
    """Words a person wrote about a note, not in a quote crystallize makes, stay."""
    sid = cli("session", "start", "--title", "deploy").out.strip()
    secret = cli("--json", "observe", "--session", sid, f"{MARK} leaked").json()["id"]
    cli("session", "end", sid, "--summary", f"we saw {MARK} leaked")
    done = cli("--json", "observation", "delete", f"{sid}/{secret}").json()
    assert done["quotes_blanked"] == 0
    assert cli("--json", "session", "show", sid).json()["summary"] == f"we saw {MARK} leaked"


def test_lessons_that_say_a_forgotten_note_word_for_word_are_named(
    cli: Any, db: Path | str
) -> None:
    """reflect makes lessons of notes word for word; a forget names them for `lesson
    delete` (and leaves them: they are records of their own)."""
    sid = cli("session", "start", "--title", "deploy").out.strip()
    said = f"Never page {MARK} after midnight for a flaky check"
    note = cli("--json", "observe", "--session", sid, "--kind", "lesson", said).json()["id"]
    cli("observe", "--session", sid, "--kind", "error", f"The {MARK} canary timed out twice")
    assert cli("reflect", sid).code == 0
    made = {x["content"]: x["id"] for x in cli("--json", "lesson", "list").json()}
    assert said in made and f"Avoid: The {MARK} canary timed out twice" in made
    mine = cli("--json", "lesson", "add", f"Ask before paging about {MARK}").json()["id"]

    done = cli("observation", "delete", f"{sid}/{note}")
    assert done.code == 0, done.err
    assert f"memwork lesson delete {made[said]}" in done.err
    assert cli("--json", "lesson", "show", made[said]).json()["content"] == said  # left

    gone = cli("--json", "session", "delete", sid).json()  # the error note goes with it
    assert gone["lessons_quoting"] == [made[f"Avoid: The {MARK} canary timed out twice"]]
    assert mine not in gone["lessons_quoting"]  # other words: not a quote
    assert cli("lesson", "delete", *made.values(), mine).code == 0
    assert MARK not in every_byte(db)
