"""A question that points in time ("a couple of days ago", "last Friday") lifts the
records written then: the spans read from the words, and a search that uses them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memwork.core.services.recall.when import window

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

#: A Wednesday.
NOW = datetime(2023, 4, 12, 22, 0, tzinfo=UTC)


def days_back(span: tuple[float, float] | None) -> tuple[float, float]:
    assert span is not None
    at = NOW.timestamp()
    return round((at - span[0]) / 86_400, 2), round((at - span[1]) / 86_400, 2)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did I cook a couple of days ago?", (3.5, 0.5)),
        ("Which book did I finish a week ago?", (10.5, 3.5)),
        ("what did we deploy 3 days ago", (4.5, 1.5)),
        ("I mentioned an event two weeks ago", (21.0, 7.0)),
        ("What happened yesterday?", (2.5, 0.0)),
        ("Anything from this morning?", (1.0, 0.0)),
        ("Who called last Friday?", (6.0, 4.0)),  # Friday the 7th, a day to spare
        ("Who called last Wednesday?", (8.0, 6.0)),  # a week back, never today
        ("What did I play last weekend?", (5.0, 2.0)),  # Saturday the 8th and Sunday
        # Up to now: as far back again a quarter (and a day), or since it began.
        ("How many art events did I attend in the past month?", (39.05, 0.0)),
        ("what broke over the last week", (9.75, 0.0)),
        ("for the past two days", (3.5, 0.0)),
        ("what did we ship this week", (3.92, 0.0)),  # since Monday, and a day
        ("a note from earlier this month", (12.92, 0.0)),
        ("in the last month", (39.05, 0.0)),  # not "last month", the one before this
        # A day by its date: the day before to the end of the day after.
        ("what did we deploy on 2023-04-03", (10.92, 7.92)),
        ("What happened on April 3rd?", (10.92, 7.92)),
        ("the 3rd of April", (10.92, 7.92)),
        ("What did Tim say on 3 April, 2023?", (10.92, 7.92)),
        ("a photo shared on April 3,2023", (10.92, 7.92)),
        ("on Apr. 3", (10.92, 7.92)),
        ("What did Maria do last weekend before April 3, 2023?", (10.92, 7.92)),  # the date
        ("Who won on Dec 25?", (109.92, 106.92)),  # without a year: the last one
        ("what broke on Monday", (3.92, 0.92)),  # the 10th
        ("what broke on Wednesday", (1.92, 0.0)),  # today, up to now
        # A month: from the day before it begins to a week after it ends.
        ("How many runs did I miss in March?", (43.92, 4.92)),
        ("When did we go camping during March 2023?", (43.92, 4.92)),
        ("What did we paint in December?", (133.92, 94.92)),  # last year's
        ("in April", (12.92, 0.0)),  # this month, up to now
        ("the demo on April 3 in March", (10.92, 7.92)),  # the day's date first
        # Nights, fortnights, hours, weekends without "last", "the past" alone.
        ("What did I eat last night?", (2.5, 0.0)),  # as yesterday
        ("I read it a fortnight ago", (21.0, 7.0)),  # as two weeks ago
        ("the note from an hour ago", (1.54, 0.0)),  # never under a day and a half
        ("Which runs failed in the past 48 hours?", (3.5, 0.0)),
        ("What changed the past few days?", (4.75, 0.0)),
        ("What did we do over the weekend?", (5.0, 2.0)),  # as last weekend
        # A day of the month alone: the last one up to today (March has the 31st).
        ("What broke on the 3rd?", (10.92, 7.92)),
        ("What broke on the 31st?", (13.92, 10.92)),
        # A year, as a month: the day before it begins to a week after it ends.
        ("What did we ship in 2022?", (467.92, 94.92)),
        ("What did we ship in 2023?", (102.92, 0.0)),  # this year, up to now
        # Days before and after the ones above, halves, and days with a name.
        ("What did I eat the day before yesterday?", (3.92, 0.92)),  # the 10th, as a date
        ("Who did I meet the other day?", (8.0, 0.0)),  # within the week
        ("What did we do at the weekend?", (5.0, 2.0)),  # as over the weekend
        ("this past weekend", (5.0, 2.0)),  # as last weekend
        ("What happened this past Friday?", (6.0, 4.0)),  # as last Friday
        ("the previous week", (14.0, 3.0)),  # as last week
        ("a week and a half ago", (15.75, 5.25)),  # ten and a half days, half again aside
        ("one and a half weeks ago", (15.75, 5.25)),
        ("half a year ago", (273.94, 91.31)),  # six months, not a year
        ("the week before last", (21.0, 10.0)),  # a week further back than last week
        ("the weekend before last", (12.0, 9.0)),  # the 1st and 2nd
        # Last month and last year are the calendar's, read as a named month or year.
        ("What did I buy last month?", (43.92, 4.92)),  # March, as "in March"
        ("the month before last", (71.92, 35.92)),  # February
        ("Where did we travel last year?", (467.92, 94.92)),  # 2022, as "in 2022"
        ("What changed since Monday?", (3.92, 0.0)),  # the 10th (and a day) up to now
        # After "since": from where the span begins, up to now.
        ("What changed since March 3?", (41.92, 0.0)),
        ("since last week", (14.0, 0.0)),
        ("What did we ship since March?", (43.92, 0.0)),
        ("since 2022", (467.92, 0.0)),
        ("since Christmas", (109.92, 0.0)),
        ("What did we eat on Christmas Eve?", (110.92, 107.92)),  # the last one, as a date
        ("What did we do over New Year\u2019s?", (102.92, 99.92)),  # either apostrophe
        ("on Valentine's Day", (58.92, 55.92)),
    ],
)
def test_a_phrase_gives_the_span_it_points_at(query: str, expected: tuple[float, float]) -> None:
    assert days_back(window(query, NOW)) == expected


@pytest.mark.parametrize(
    "query",
    [
        "How many days ago did I attend a networking event?",  # a count, not a time
        "How long ago did we rotate the keys?",
        "When did we rotate the staging keys?",
        "the last deploy of the week",
        "",
        "May I ask about the deploy?",  # a month's name, no day
        "What happened on February 30?",  # no such day
        "What is planned on April 20, 2023?",  # a day still to come
        "on 2023-13-01",
        "What do we plan in May 2023?",  # a month still to come
        "the market in Japan",  # "mar", "jan" inside words
        "What should I cook this weekend?",  # still to come
        "It passed on the 2nd attempt",  # an ordinal that names no day
        "the last day of the trip",  # "the last" without "in" or "over": not a span
        "What is planned in 2024?",  # a year still to come
        "What did we ship in 2022-2023?",  # a range of years, not a year
        "What should I buy for Christmas?",  # the holiday as a subject, not a time
        "the previous attempt failed",  # "previous" without a unit
        "What broke since the outage?",  # since an event, not a day
    ],
)
def test_no_span_where_none_is_named(query: str) -> None:
    assert window(query, NOW) is None


@pytest.mark.parametrize(
    ("query", "now"),
    [
        ("three 100 years last month sunday", datetime(1, 1, 4, tzinfo=UTC)),
        ("a fortnight ago in Dec. yesterday", datetime(9999, 12, 31, 23, 59, tzinfo=UTC)),
        ("in Dec. until 30 March 2024-02-29", datetime(1, 1, 4, tzinfo=UTC)),
    ],
)
def test_a_span_past_the_calendars_ends_points_nowhere_rather_than_fail(
    query: str, now: datetime
) -> None:
    # Found by feeding random time phrases to a clock at year 1 and at year 9999: the
    # day before the first or after the last raised OverflowError or ValueError.
    span = window(query, now)
    assert span is None or span[0] <= span[1]


def test_a_clock_set_at_the_calendars_end_searches_or_is_refused(cli) -> None:  # noqa: ANN001
    # MEMWORK_NOW at year 9999 and "yesterday" in a search ended in an internal error.
    sid = cli("session", "start", "--title", "keys").out.strip()
    assert cli("observe", "--session", sid, "Rotated the staging keys").code == 0
    query = ("--json", "search", "keys rotated in Dec. yesterday")
    # The last instant the clock may name: the search answers.
    found = cli(*query, now="9000-12-31T23:59:59Z")
    assert found.code == 0, found.err
    assert found.json()[0]["title"] == "note · keys: Rotated the staging keys"
    # Past it, the setting is refused with its rule, before anything is read.
    refused = cli(*query, now="9999-12-31T23:59:00Z")
    assert refused.code == 2
    assert refused.err.strip() == (
        "memwork: MEMWORK_NOW: must be an instant from 1970-01-01 to 9000-12-31 "
        "(got '9999-12-31T23:59:00Z')"
    )


def test_a_note_written_when_the_question_says_ranks_first(cli) -> None:  # noqa: ANN001
    """Two notes about cooking for a friend: the one written a couple of days before
    the question comes first, though the other holds more of its words."""
    iso = "%Y-%m-%dT%H:%M:%SZ"
    sid = cli(
        "session", "start", "--title", "kitchen", now=(NOW - timedelta(days=30)).strftime(iso)
    )
    sid = sid.out.strip()
    older = "Cooked lasagna for my friend Sam; cooking for a friend is the best."
    recent = "Made a green curry for my friend last night."
    cli("observe", "--session", sid, older, now=(NOW - timedelta(days=10)).strftime(iso))
    cli("observe", "--session", sid, recent, now=(NOW - timedelta(days=2)).strftime(iso))
    asked = NOW.strftime(iso)
    plain = cli("--json", "search", "What did I cook for my friend?", now=asked)
    pointed = cli(
        "--json", "search", "What did I cook for my friend a couple of days ago?", now=asked
    )
    assert [h["title"].split(": ", 1)[1] for h in plain.json()][:2] == [older, recent]
    assert [h["title"].split(": ", 1)[1] for h in pointed.json()][:2] == [recent, older]


def test_a_note_written_on_the_day_the_question_names_ranks_first(cli) -> None:  # noqa: ANN001
    """Two deploy notes: the one written on the date the question gives comes first,
    though the other holds more of its words (and comes first without the date)."""
    iso = "%Y-%m-%dT%H:%M:%SZ"
    sid = cli("session", "start", "--title", "ops", now=(NOW - timedelta(days=30)).strftime(iso))
    sid = sid.out.strip()
    earlier = "Deployed billing-api 2.3 to production after the canary."
    later = "Deployed billing-api 2.4 to production; the production deploy went well."
    cli("observe", "--session", sid, earlier, now="2023-03-28T15:00:00Z")
    cli("observe", "--session", sid, later, now="2023-04-05T09:00:00Z")
    asked = NOW.strftime(iso)
    plain = cli("--json", "search", "what did we deploy to production", now=asked)
    dated = cli("--json", "search", "what did we deploy to production on March 28", now=asked)
    assert [h["title"].split(": ", 1)[1] for h in plain.json()][:2] == [later, earlier]
    assert [h["title"].split(": ", 1)[1] for h in dated.json()][:2] == [earlier, later]
