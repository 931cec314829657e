"""`memwork search`: natural-language recall over every kind of memory, with filters."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from memwork.core.services.recall import search
from memwork.core.storage.store import Store
from tests.conftest import NOW, folder_digest

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

T0 = "2026-11-01T12:00:00Z"


def ep(summary: str, task: str = "ops", **extra: object) -> dict:
    return {"task_id": task, "score": 0.6, "steps": 3, "summary": summary, **extra}


def titles(result) -> list[str]:  # noqa: ANN001
    return [hit["title"] for hit in result.json()]


def note_titles(result) -> list[str]:  # noqa: ANN001
    return [hit["title"].split(": ", 1)[1] for hit in result.json()]


def chat(cli, title: str, *notes: str) -> None:  # noqa: ANN001
    """A session titled ``title`` holding ``notes``, in order."""
    sid = cli("session", "start", "--title", title, now=T0).out.strip()
    for text in notes:
        cli("observe", "--session", sid, text, now=T0)


def test_a_question_finds_the_note_that_answers_it_despite_its_question_words(cli) -> None:  # noqa: ANN001
    # Chatty notes full of the question's own words ("when", "did", "you", "the")
    # must not beat the one note that holds its subject.
    chat(
        cli,
        "chat",
        "When did you say you would do the review? Did you do it?",
        "What did the team say when you asked them?",
        "Rotated the staging database credentials this morning",
        "Lunch was late",
    )
    found = cli("--json", "search", "When did we rotate the staging credentials?", now=T0)
    assert found.code == 0
    assert note_titles(found)[0] == "Rotated the staging database credentials this morning"


def test_stems_meet_and_a_record_needs_only_some_of_the_words(cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "Deployed services need a canary stage", now=T0)
    cli("lesson", "add", "Migrations run before the deploy", now=T0)
    cli("lesson", "add", "Pin the client version", now=T0)
    found = titles(cli("--json", "search", "deploying canaries", now=T0))
    # "deploying" meets "Deployed"/"deploy", "canaries" meets "canary"; the lesson with
    # both words first, the one with one of them after it, the unrelated one not at all.
    assert found == [
        "Deployed services need a canary stage",
        "Migrations run before the deploy",
    ]


def test_a_rare_word_outweighs_a_common_one(cli) -> None:  # noqa: ANN001
    for n in range(12):
        cli("lesson", "add", f"Check the service logs after step {n}", now=T0)
    cli("lesson", "add", "Kerberos tickets expire after ten hours", now=T0)
    cli("lesson", "add", "Service restarts clear the kerberos cache", now=T0)
    found = titles(cli("--json", "search", "service kerberos", now=T0))
    # Both words: first. The rare word alone beats the common word alone.
    assert found[0] == "Service restarts clear the kerberos cache"
    assert found[1] == "Kerberos tickets expire after ten hours"


def test_words_side_by_side_add_to_the_score_without_outranking_relevance(cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "Rollback deploy scripts must be idempotent", now=T0)
    cli("lesson", "add", "Deploy after the rollback plan is reviewed", now=T0)
    found = cli("--json", "search", "rollback deploy", now=T0).json()
    assert [h["title"] for h in found] == [
        "Rollback deploy scripts must be idempotent",
        "Deploy after the rollback plan is reviewed",
    ]
    assert found[0]["score"] - found[1]["score"] < 1.0  # a bonus, not a band above
    assert set(found[0]) == {"kind", "id", "title", "score"}


def test_typos_are_tolerated_only_for_words_the_memory_never_used(cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "Check the rollback runbook before deploying", now=T0)
    cli("lesson", "add", "Pin the client version", now=T0)
    for query in ("rollbak", "rolback runbok", "deplyoing"):
        assert titles(cli("--json", "search", query, now=T0)) == [
            "Check the rollback runbook before deploying"
        ], query
    # "version" is a word the memory holds: it is not also read as a typo of another.
    cli("lesson", "add", "Versions are tagged on release", now=T0)
    cli("lesson", "add", "Person in charge signs off", now=T0)
    assert sorted(titles(cli("--json", "search", "version", now=T0))) == [
        "Pin the client version",
        "Versions are tagged on release",
    ]


#: A stretch of conversation an agent might pass as its query: more than twenty words
#: of chat around what it keeps coming back to, a cartoon.
PASSAGE = (
    "My favorite cartoon is not on tonight and I am so disappointed. I look forward to "
    "that cartoon for days every time it airs, and now the evening feels empty. What "
    "should we do instead? I just want to see the cartoon, nothing else, maybe go over "
    "the rollbak plan or build something with my blocks later"
)


def test_a_passage_asked_as_a_query_ranks_by_what_it_keeps_coming_back_to(cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "Bart watched a cartoon about pirates at home", now=T0)
    cli("lesson", "add", "A cartoon channel changed its schedule", now=T0)
    cli("lesson", "add", "Bart was disappointed when the swim meet was cancelled", now=T0)
    for n in range(7):
        cli("lesson", "add", f"Release {n} shipped on a Tuesday", now=T0)
    # "disappointed" is the rarer word, said once; "cartoon", said three times, is what
    # the passage is about.
    (top,) = titles(cli("--json", "search", PASSAGE, "--limit", "1", now=T0))
    assert "cartoon" in top
    assert titles(cli("--json", "search", "disappointed cartoon", "--limit", "1", now=T0)) == [
        "Bart was disappointed when the swim meet was cancelled"
    ]


def test_a_passage_does_not_read_its_unknown_words_as_typos(cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "Rollback drills help the team relax", now=T0)
    cli("lesson", "add", "Blockers go on the board first thing", now=T0)
    # A short query's unknown word is a typo ("rollbak" for "rollback"); a passage's
    # unknown words ("evening", "empty", "tonight") are words the memory never held,
    # and spreading each to every word spelled like it would rank by accident.
    assert titles(cli("--json", "search", "rollbak", now=T0)) == [
        "Rollback drills help the team relax"
    ]
    found = titles(cli("--json", "search", PASSAGE, now=T0))
    assert "Rollback drills help the team relax" not in found
    # A question in Chinese is counted in characters, not in the pairs its index also
    # holds: fourteen words, a question, whose misspelt English word is still a typo.
    assert titles(cli("--json", "search", "上次部署失败时用的rollbak计划在哪", now=T0)) == [
        "Rollback drills help the team relax"
    ]


def test_a_fragment_finds_the_words_it_starts(cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "Kubernetes upgrades drain one node at a time", now=T0)
    assert titles(cli("--json", "search", "kube", now=T0)) == [
        "Kubernetes upgrades drain one node at a time"
    ]


def test_a_word_misspelt_past_its_stem_finds_the_stem(cli) -> None:  # noqa: ANN001
    """A typo in a word's ending is more than two edits from the stem the index holds
    ("rotatoin" against "rotat"): the longest stem the word begins with stands for it,
    when it is most of the word."""
    cli("lesson", "add", "Rotation of the signing keys happens monthly", now=T0)
    cli("lesson", "add", "Catalog entries expire after a week", now=T0)
    for query in ("rotatoin", "rotationz"):
        assert titles(cli("--json", "search", query, now=T0)) == [
            "Rotation of the signing keys happens monthly"
        ], query
    # A stem that is a small part of the word stands for nothing: "intern" (of
    # "internal") is not what "internationalization" means.
    cli("lesson", "add", "Internal tools live on the ops cluster", now=T0)
    assert titles(cli("--json", "search", "internationalization", now=T0)) == []


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


def test_time_filters_use_when_each_record_was_made(cli) -> None:  # noqa: ANN001
    sid = cli("session", "start", "--title", "pager", now="2026-10-01T09:00:00Z").out.strip()
    cli("observe", "--session", sid, "pager alert on disk", now="2026-10-01T09:00:00Z")
    cli("observe", "--session", sid, "pager alert on memory", now="2026-10-20T09:00:00Z")
    cli("observe", "--session", sid, "pager alert on cpu", now="2026-10-31T09:00:00Z")
    query = ["--json", "search", "pager alert", "--kind", "observation"]

    def found(*flags: str) -> list[str]:
        return sorted(note_titles(cli(*query, *flags, now=T0)))

    assert found("--since", "2026-10-15") == ["pager alert on cpu", "pager alert on memory"]
    assert found("--until", "2026-10-20") == ["pager alert on disk", "pager alert on memory"]
    assert found("--since", "2026-10-10", "--until", "2026-10-25T00:00:00Z") == [
        "pager alert on memory"
    ]
    assert found("--since", "2d") == ["pager alert on cpu"]  # two days back from T0
    assert found("--since", "40d") == sorted(
        ["pager alert on disk", "pager alert on memory", "pager alert on cpu"]
    )
    # A span back past the calendar's first day is from the start (it ended in an
    # internal error: OverflowError), however many digits it has.
    everything = sorted(["pager alert on disk", "pager alert on memory", "pager alert on cpu"])
    assert found("--since", "999999999d") == everything
    assert found("--since", "9" * 30 + "h") == everything
    assert found("--until", "99999999w") == []


def test_the_session_filter_keeps_one_sessions_records(cli) -> None:  # noqa: ANN001
    one = cli("session", "start", "--title", "first", now=T0).out.strip()
    two = cli("session", "start", "--title", "second", now=T0).out.strip()
    cli("observe", "--session", one, "walrus sighting near the dock", now=T0)
    cli("observe", "--session", two, "walrus sighting on the beach", now=T0)
    cli("wm", "--session", two, "set", "walrus", "counted", now=T0)
    cli("record-episode", stdin=json.dumps(ep("walrus census", session_id=two)), now=T0)
    cli("lesson", "add", "Walrus counts happen at dawn", now=T0)
    hits = cli("--json", "search", "walrus", "--session", two, now=T0).json()
    assert sorted(h["kind"] for h in hits) == ["episode", "observation", "wm"]
    assert all(two in h["id"] or h["kind"] == "episode" for h in hits)
    assert cli("--json", "search", "walrus", "--session", "nobody", now=T0).json() == []


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
    since = cli("search", "x", "--since", "last tuesday", now=T0)
    assert since.code == 2 and since.err.startswith("memwork: since: must be an ISO-8601")
    upside_down = cli("search", "x", "--since", "2026-10-10", "--until", "2026-10-01", now=T0)
    assert upside_down.code == 2 and "since" in upside_down.err
    assert folder_digest(db) == before


def test_forgotten_deleted_and_edited_records_leave_recall_at_once(cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "Always run the tests before pushing", now=T0)
    cli(
        "lesson",
        "add",
        "Always run all tests before pushing",
        "--on-duplicate",
        "supersede",
        now=T0,
    )
    flag = cli("--json", "lesson", "add", "Old feature flags cause surprises", now=T0).json()["id"]
    cli("slot", "set", "pelican", "The pelican feeds at noon", now=T0)
    assert titles(cli("--json", "search", "feature flags", now=T0)) == [
        "Old feature flags cause surprises"
    ]
    assert cli("lesson", "forget", flag, now=T0).code == 0
    assert cli("--json", "search", "feature flags", now=T0).json() == []
    # A superseded lesson is history: found, and marked.
    found = titles(cli("--json", "search", "tests before pushing", "--kind", "lesson", now=T0))
    assert "(superseded) Always run the tests before pushing" in found
    # An edited slot is found by its new words only; a deleted one not at all.
    assert cli("slot", "replace", "pelican", "noon", "dusk", now=T0).code == 0
    assert cli("--json", "search", "noon", "--kind", "slot", now=T0).json() == []
    assert len(cli("--json", "search", "dusk", "--kind", "slot", now=T0).json()) == 1
    assert cli("slot", "delete", "pelican", now=T0).code == 0
    assert cli("--json", "search", "pelican dusk", now=T0).json() == []


@pytest.mark.parametrize("query", ["", "  ", "!!!", "the and of"])
def test_empty_queries_find_nothing(store: Store, query: str) -> None:
    from memwork.core.domain import lessons

    lessons.add_lesson(store, "The and of everything", now=NOW, actor="t")
    assert search.search(store, query, now=NOW) == []


def test_search_and_history_read_and_create_nothing(tmp_path: Path) -> None:
    from memwork.core.doors.cli.main import main

    missing = tmp_path / "no-store-here"
    assert main(["--db", str(missing), "search", "anything"]) == 2
    assert main(["--db", str(missing), "history"]) == 2
    assert not missing.exists()


def test_a_hit_shows_its_sessions_title_as_it_is_now(tmp_path) -> None:  # noqa: ANN001
    """A long-lived process works out how a session shows in hits once: a session's
    new title shows in the next search all the same."""
    from memwork import Memory

    memory = Memory(tmp_path / "store", clock=lambda: NOW)
    memory.observe("run-7", "the heron waited by the weir")
    [before] = memory.search("heron weir")
    assert "run-7" in before["title"]
    assert memory.search("heron weir") == [before]  # (the second answer is the kept one)
    memory.start_session(title="River watch", session="run-7")
    [after] = memory.search("heron weir")
    assert "River watch" in after["title"] and "run-7" not in after["title"]
    memory.close()


LONG_REPLY = (
    "Choosing a camera lens is a big decision, and there is a lot to weigh before you "
    "purchase one. The type of lens matters: a prime has one focal length, while a "
    "zoom covers a range; for portraits many photographers like a fast prime. Think "
    "about the body you own: a full-frame and a crop-sensor body frame the same glass "
    "differently. Before you buy, rent one for a weekend and see how it handles. "
    "Check the weight, the autofocus speed and the build quality. Read reviews from "
    "people who shoot the same subjects as you, and compare prices from a few stores: "
    "a used one in good condition can save a lot of money. Look after your gear, too: "
    "a hood, a clean cloth and a good bag go a long way. Recent models often focus "
    "faster and more quietly, which matters for video. If you purchase online, keep "
    "the box and the receipt in case you need to return it. Finally, remember that "
    "the best camera is the one you enjoy carrying, so take your time and have fun. "
    "When you travel, pack light: one body, two lenses and spare batteries cover most "
    "days. A small tripod helps at dusk, and a polarising filter deepens the sky and "
    "cuts glare on water. Learn the exposure triangle well enough that you can change "
    "settings without looking: aperture for depth, shutter speed for motion, "
    "sensitivity for the rest. Back up your pictures every evening to a second card "
    "or a laptop, since a lost card is a lost trip. Print your favourites now and "
    "then; a print shows flaws and strengths a screen hides. Join a local club or an "
    "online group to get honest feedback, and set yourself small projects, such as a "
    "week of portraits or a month of street scenes, to keep learning."
)


FILLER = (
    "Can you suggest a recipe for a quick weeknight pasta?",
    "I want to buy a new pair of running shoes for the spring.",
    "My sister visited last weekend and we went hiking.",
    "What is a good way to learn Spanish vocabulary?",
    "I recently moved to a new apartment near the park.",
    "My phone camera keeps blurring photos at night.",
    "How do I keep my tomato plants healthy in the heat?",
    "We are planning a trip to Lisbon in May.",
)


def test_a_long_reply_holding_the_words_far_apart_ranks_below_the_line_that_answers(
    cli,  # noqa: ANN001
) -> None:
    """A reply of ~1,600 characters that holds every word of the question, far apart,
    must not outrank the short line before it that states the fact (without the extra
    weight of a long record's length, it does)."""
    for n, text in enumerate(FILLER):
        other = cli("session", "start", "--title", f"chat {n}", now=T0).out.strip()
        cli("observe", "--session", other, text, now=T0)
    sid = cli("session", "start", "--title", "photography", now=T0).out.strip()
    line = "By the way, I recently got a new 50mm prime lens for my camera."
    for text in (line, LONG_REPLY, "Thanks, I will look after it."):
        cli("observe", "--session", sid, text, now=T0)
    found = cli(
        "--json", "search", "What type of camera lens did I purchase most recently?", now=T0
    )
    assert found.code == 0
    shown = note_titles(found)
    assert shown[0] == line
    assert any(title.startswith("Choosing a camera lens") for title in shown[1:])  # still found


def test_a_note_that_only_asks_ranks_below_the_reply_that_answers(cli) -> None:  # noqa: ANN001
    chat(
        cli,
        "chat",
        "Can you recommend a restaurant for our anniversary?",
        "For a romantic dinner I would pick Roscioli: candlelit tables, a long wine list.",
        "Thanks! I will book it for Saturday.",
    )
    # The question holds more of the later question's words (restaurant, recommend,
    # anniversary), but it only asks: the reply is where the answer is.
    found = note_titles(
        cli(
            "--json",
            "search",
            "Which restaurant did you recommend for a romantic anniversary dinner?",
            now=T0,
        )
    )
    assert found[:2] == [
        "For a romantic dinner I would pick Roscioli: candlelit tables, a long wine list.",
        "Can you recommend a restaurant for our anniversary?",
    ]


def test_a_note_that_tells_before_it_asks_keeps_its_rank(cli) -> None:  # noqa: ANN001
    chat(
        cli,
        "chat",
        "Smoker grates: buy a brass brush.",
        "Thanks, will do.",
        "I bought the smoker at the hardware store. How do I clean it?",
    )
    # The last note ends on a question but states a fact first: it is not lowered as a
    # note that only asks would be (a fifth less would put the tip above it).
    found = note_titles(cli("--json", "search", "Where did I buy the smoker?", now=T0))
    assert found[0] == "I bought the smoker at the hardware store. How do I clean it?"


def test_the_reply_to_a_note_that_only_asks_is_found_by_what_it_asked(cli) -> None:  # noqa: ANN001
    chat(cli, "chat", "How was the long weekend, Jon?", "Went skiing at Tahoe with the kids.")
    chat(
        cli,
        "release",
        "The long weekend shifts the release by a day.",
        "Jon owns the release checklist.",
    )
    # The reply says none of the question's words: it is about what the note before it
    # asked, and takes half of that note's words (a tenth after a note that tells).
    query = "What did Jon do over the long weekend?"
    found = note_titles(cli("--json", "search", query, "--kind", "observation", now=T0))
    assert found[0] == "Went skiing at Tahoe with the kids."
