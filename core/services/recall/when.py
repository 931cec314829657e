"""When a question points in time: "a week ago", "last Friday", "yesterday".

An agent asks "what did I cook for my friend a couple of days ago?" and the memory
holds several cooking notes; the one written about two days before the question is
the one it means. :func:`window` reads such a phrase and gives the span of time it
points at, generously wide (people round: "a week ago" is anything from four days
to ten and a half). The ranking then lifts the records written inside that span
(:data:`core.services.recall.engine.WHEN_BOOST`); it never leaves any record out,
since the phrase may be about the event, not the note that tells of it.

Read, in English:

* *N hours / days / weeks / fortnights / months / years ago*, N in digits or words (*a*,
  *an*, *one* to *twelve*, *a couple of*, *a few*, *several*), and with a half (*a week
  and a half ago*, *one and a half weeks ago*, *half a year ago*);
* *yesterday*, *last night*, *the day before yesterday* (as a date), *today*, *this
  morning*, *earlier today*, *tonight*, *the other day* (within the week);
* *last week / weekend* (or *this past* …, *the previous* …), *over* or *at the
  weekend*, *the week / weekend before last*, and *last Monday* … *last Sunday*; *since
  Monday* (from the last one before today, up to now); *last month*, *the month before
  last* and *last year* are the calendar's, read as a month or a year named (below);
* any of the days, months or spans here after *since* (*since March 3*, *since
  yesterday*, *since last week*, *since March*, *since 2022*, *since Christmas*): from
  where that span begins up to now;
* *in the past / last week*, *month*, *year*, *few days*, *3 weeks* … and *the past few
  days* (up to now, from a quarter again as far back), and *this week / month / year*
  (*earlier this week*: since it began);
* a day by its date: *2026-11-28*, *November 28*, *Nov 28th, 2026*, *28 November*, *the
  28th of November* (without a year, the last such day up to now), *on the 28th* (the
  last 28th up to now) and *on Monday* … *on Sunday* (the last such day, today
  included). A note about a day is written on it or soon after: the span runs from the
  day before to the end of the day after;
* a day with a name and a fixed date, *on* / *over* / *last Christmas*, *Christmas Eve*,
  *New Year's Eve*, *New Year's (Day)*, *Halloween*, *Valentine's Day*, as its date
  ("what should I buy for Christmas" names the day as a subject: no span);
* a month: *in March*, *during March 2026* (without a year, the last such month up to
  now), from the day before it begins to a week after it ends; a year, *in 2025*, the
  same way.

A day's date is read first, then a month, then the other phrases in the order they
come: a date anchors the question ("the weekend before 10 April").

*How many days ago …* asks for a count, not about a time: with no count before its
unit it gives no window. A
question with two phrases gives the first.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from ...base.lazy_regex import LazyPattern

DAY = 86_400.0
_UNITS = {
    "hour": 1 / 24,
    "day": 1.0,
    "week": 7.0,
    "fortnight": 14.0,
    "month": 30.44,
    "year": 365.25,
}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
    "several": 3,
}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: Months by the first three letters of their names.
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_ORDINAL = r"(?:st|nd|rd|th)?"
#: Days with a name and a fixed date (month, day), written without apostrophes: "on
#: Christmas Eve", "over New Year's", "on Valentine's Day".
_HOLIDAYS = {
    "christmas eve": (12, 24),
    "christmas day": (12, 25),
    "christmas": (12, 25),
    "new years eve": (12, 31),
    "new years day": (1, 1),
    "new years": (1, 1),
    "halloween": (10, 31),
    "valentines day": (2, 14),
    "valentines": (2, 14),
}
_HOLIDAY = "|".join(
    name.replace("years", "year['\u2019]?s")
    .replace("valentines", "valentine['\u2019]?s")
    .replace(" ", r"\s+")
    for name in sorted(_HOLIDAYS, key=len, reverse=True)
)
_UNIT = "hour|day|week|fortnight|month|year"
_YEAR = r"(?:19|20)\d\d"
_COUNT = "|".join(sorted((re.escape(n) for n in _NUMBERS), key=len, reverse=True))
# The phrase below is compiled by the first question that may hold one (most never do:
# a CLI search should not pay for it). These small patterns tell, in a microsecond or
# two, which questions may: a word of a relative phrase, or an ISO date's start ...
_HINTS = LazyPattern(
    r"ago|day|tonight|this |last |past |weekend|\d{4}-\d"  # "day": yesterday, today, Monday
    r"|(?:in|during|since) (?:19|20)\d\d|on the \d|before last|previous"
    r"|christmas|new year|halloween|valentine"
)
# ... or a month's name beside a digit (a date), or after "in" or "during" (a month).
_MONTH_HINT = LazyPattern("|".join(_MONTHS))
_MONTH_BESIDE = LazyPattern(r"\d|in |during |since ")
_PHRASE = LazyPattern(
    # "The past" needs no word before it; "the last" does ("the last day of the trip").
    rf"\b(?:(?:(?:in|over|during|within|for)\s+the\s+(?:past|last)|the\s+past)\s+"
    rf"(?:(?P<pn>\d{{1,3}}|{_COUNT})\s+)?(?P<punit>{_UNIT})s?"
    rf"|(?:earlier\s+)?this\s+(?P<this>week|month|year)"
    # "A week and a half ago", "one and a half weeks ago", "half a year ago".
    rf"|(?:(?P<n>\d{{1,3}}|{_COUNT})(?P<and1>\s+and\s+a\s+half)?|(?P<half>half\s+an?))"
    rf"\s+(?P<unit>{_UNIT})s?(?P<and2>\s+and\s+a\s+half)?\s+ago"
    rf"|(?P<yesterday>(?P<dby>the\s+day\s+before\s+)?yesterday|last\s+night)"
    rf"|(?P<other>the\s+other\s+day)"
    rf"|(?:over|during|at)\s+the\s+(?P<weekend>weekend)"
    rf"|(?P<today>today|tonight|this\s+morning|this\s+afternoon|this\s+evening)"
    rf"|the\s+(?P<before>week|weekend|month)\s+before\s+last"
    rf"|(?:last|this\s+past|the\s+previous)\s+(?P<last>week|weekend|month|year|{'|'.join(_WEEKDAYS)})"
    rf"|since\s+(?P<since>{'|'.join(_WEEKDAYS)})"
    rf"|(?:on|over|last|since)\s+(?P<holiday>{_HOLIDAY})"
    rf"|(?P<iso>(?P<iso_y>\d{{4}})-(?P<iso_m>\d{{1,2}})-(?P<iso_d>\d{{1,2}}))"
    rf"|(?P<m1>{_MONTH})\.?\s+(?P<d1>\d{{1,2}}){_ORDINAL}(?:(?:,\s*|\s+)(?P<y1>{_YEAR}))?"
    rf"|(?:the\s+)?(?P<d2>\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?(?P<m2>{_MONTH})"
    rf"(?:(?:,\s*|\s+)(?P<y2>{_YEAR}))?"
    rf"|on\s+(?P<on>{'|'.join(_WEEKDAYS)})"
    # "On the 28th" ends its clause: "on the 2nd attempt" names no day.
    rf"|on\s+the\s+(?P<d3>\d{{1,2}})(?:st|nd|rd|th)(?=\s*(?:[?.!,;:)]|$))"
    # Not a date's year ("2025-03-04") nor a number ("2025.5", "2025 10").
    rf"|(?:in|during|since)\s+(?P<yr>{_YEAR})(?![-/.]\d|\s*\d)"
    rf"|(?:in|during|since)\s+(?:early\s+|late\s+|mid-?)?(?P<mo>{_MONTH})(?:\s+(?P<my>{_YEAR}))?"
    rf"(?!\s*\d))\b",
    # Matched against the query in lower case, not case-blind: a passage of a thousand
    # characters is read in half the time, and every group is lowered where it is read.
)


def window(query: str, now: datetime) -> tuple[float, float] | None:
    """The span of time (seconds since the epoch, from, to) that ``query`` points at,
    seen from ``now``; None when it names none."""
    lowered = query.lower()
    if not _HINTS.search(lowered) and not (
        _MONTH_HINT.search(lowered) and _MONTH_BESIDE.search(lowered)
    ):
        return None
    # A date anchors the question ("the weekend before 10 April"): a day's date goes
    # first, then a month, then the rest in the order they come.
    for found in sorted(_PHRASE.finditer(lowered), key=_rank):
        try:
            span = _bounds(found, now)
        except (OverflowError, ValueError):
            # Past the calendar's ends (a year before 1 or after 9999): only a clock
            # set there meets one, and such a phrase points nowhere rather than fail.
            continue
        if span is None:
            continue  # a day or month still to come, or a date no calendar has
        if _after_since(found, lowered):
            return span[0], now.timestamp()  # "since March 3": from then up to now
        return span
    return None


def _after_since(found: re.Match[str], lowered: str) -> bool:
    """Whether the phrase ``found`` follows *since* (or begins with it: "since March")."""
    return found[0].lower().startswith("since") or lowered[: found.start()].rstrip().endswith(
        "since"
    )


def _bounds(found: re.Match[str], now: datetime) -> tuple[float, float] | None:
    """The span one phrase points at (see :func:`window`); None for a day or month
    still to come, or a date no calendar has."""
    calendar = _calendar(found, now)
    if found["mo"] or found["yr"] or calendar is not None:
        if calendar is not None:
            bounds: tuple[datetime, datetime] | None = calendar
        else:
            bounds = _month(found, now) if found["mo"] else _year(found, now)
        if bounds is None:
            return None  # a month (or year) still to come
        # From the day before it begins to a week after it ends (never past now).
        began, ended = bounds
        return began.timestamp() - DAY, min(now.timestamp(), ended.timestamp() + 7 * DAY)
    if found["on"] or found["since"] or found["dby"] or _rank(found) == 0:
        day = _day(found, now)
        if day is None or day > now:
            return None  # a date no calendar has, or one still to come
        # The day before to the end of the day after (never past now).
        began_at = day.timestamp()
        return began_at - DAY, min(now.timestamp(), began_at + 2 * DAY)
    start, end = _span(found, now)
    at = now.timestamp()
    return at - start * DAY, at - end * DAY


def _rank(found: re.Match[str]) -> int:
    """Which phrase of a question is read first: a day's date (0), a month (1), the rest
    (2)."""
    if found["iso"] or found["m1"] or found["m2"] or found["d3"] or found["holiday"]:
        return 0
    return 1 if found["mo"] or found["yr"] else 2


def _month(found: re.Match[str], now: datetime) -> tuple[datetime, datetime] | None:
    """The start of the month ``found`` names and of the month after, in ``now``'s time
    zone: without a year, the last such month up to now; None for one still to come."""
    month = _MONTHS.index(found["mo"][:3].lower()) + 1
    first = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    if found["my"]:
        first = first.replace(year=int(found["my"]), month=month)
    else:
        first = first.replace(month=month)
        if first > now:
            first = first.replace(year=first.year - 1)  # not yet this year: the last one
    if first > now:
        return None
    after = (
        first.replace(year=first.year + 1, month=1)
        if month == 12
        else first.replace(month=month + 1)
    )
    return first, after


def _calendar(found: re.Match[str], now: datetime) -> tuple[datetime, datetime] | None:
    """The month or year *last month*, *the month before last* or *last year* names (the
    calendar's, before the one ``now`` is in); None for any other phrase."""
    unit = (found["last"] or found["before"] or "").lower()
    if unit not in ("month", "year"):
        return None
    first = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    if unit == "year":
        this = first.replace(month=1)
        return this.replace(year=this.year - 1), this
    for _ in range(2 if found["before"] else 1):
        after, first = first, (first - timedelta(days=1)).replace(day=1)
    return first, after


def _year(found: re.Match[str], now: datetime) -> tuple[datetime, datetime] | None:
    """The start of the year ``found`` names and of the year after, in ``now``'s time
    zone; None for one still to come."""
    first = now.replace(
        year=int(found["yr"]), month=1, day=1, hour=0, minute=0, second=0, microsecond=0
    )
    return None if first > now else (first, first.replace(year=first.year + 1))


def _day(found: re.Match[str], now: datetime) -> datetime | None:
    """The start of the day ``found`` names by its date or weekday, in ``now``'s time
    zone; None for a phrase of another kind, or a date no calendar has (February 30)."""
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if found["on"]:
        back = (now.weekday() - _WEEKDAYS.index(found["on"].lower())) % 7
        return midnight - timedelta(days=back)
    if found["since"]:
        # "Since Monday": the last one before today (window() runs the span up to now).
        back = (now.weekday() - _WEEKDAYS.index(found["since"].lower())) % 7 or 7
        return midnight - timedelta(days=back)
    if found["dby"]:
        return midnight - timedelta(days=2)  # the day before yesterday
    if found["iso"]:
        year, month, day = int(found["iso_y"]), int(found["iso_m"]), int(found["iso_d"])
    elif found["d3"]:
        # "On the 28th": this month's, or the last month's that has one, up to today.
        day, first = int(found["d3"]), midnight.replace(day=1)
        for _ in range(3):  # a 31st is at most two months back
            try:
                named = first.replace(day=day)
            except ValueError:
                named = None
            if named is not None and named <= midnight:
                return named
            first = (first - timedelta(days=1)).replace(day=1)
        return None
    elif found["m1"] or found["m2"] or found["holiday"]:
        if found["holiday"]:
            name = " ".join(found["holiday"].lower().replace("'", "").replace("\u2019", "").split())
            month, day = _HOLIDAYS[name]
        else:
            month = _MONTHS.index((found["m1"] or found["m2"])[:3].lower()) + 1
            day = int(found["d1"] or found["d2"])
        written = None if found["holiday"] else found["y1"] or found["y2"]
        year = int(written) if written else now.year
        if not written:
            try:
                if midnight.replace(month=month, day=day) > midnight:
                    year -= 1  # not yet this year: the last one
            except ValueError:
                return None
    else:
        return None
    try:
        return midnight.replace(year=year, month=month, day=day)
    except ValueError:
        return None


def _span(found: re.Match[str], now: datetime) -> tuple[float, float]:
    """(days back to the span's start, days back to its end)."""
    if found["punit"]:
        # "In the past month": up to now, from a quarter again as far back (and a day).
        raw = (found["pn"] or "one").lower()
        count = int(raw) if raw.isdigit() else _NUMBERS[" ".join(raw.split())]
        return count * _UNITS[found["punit"].lower()] * 1.25 + 1.0, 0.0
    if found["this"]:
        # "This week": since it began (Monday, the 1st, 1 January), and a day before.
        unit = found["this"].lower()
        midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
        if unit == "week":
            began = midnight - timedelta(days=now.weekday())
        elif unit == "month":
            began = midnight.replace(day=1)
        else:
            began = midnight.replace(month=1, day=1)
        return (now - began).total_seconds() / DAY + 1.0, 0.0
    if found["unit"]:
        amount: float = 0.5
        if not found["half"]:
            raw = found["n"].lower()
            amount = int(raw) if raw.isdigit() else _NUMBERS[" ".join(raw.split())]
            if found["and1"] or found["and2"]:
                amount += 0.5
        back = amount * _UNITS[found["unit"].lower()]
        # Half as wide again on either side, but never under a day and a half: "two
        # days ago" is not to the hour, and "a week ago" may be four days or ten.
        slack = max(1.5, back / 2)
        return back + slack, max(0.0, back - slack)
    if found["yesterday"]:
        return 2.5, 0.0
    if found["other"]:
        return 8.0, 0.0  # "the other day": a few days back, within the week
    if found["today"]:
        return 1.0, 0.0
    before = (found["before"] or "").lower()  # "the week before last": one more back
    last = (found["last"] or "").lower() or before
    if last == "week":
        return (21.0, 10.0) if before else (14.0, 3.0)
    if last == "weekend" or found["weekend"]:
        # The last Saturday and Sunday before today, a day to spare on either side.
        back = ((now.weekday() - 5) % 7 or 7) + (7 if before else 0)
        return back + 1.0, max(0.0, back - 2.0)
    back = (now.weekday() - _WEEKDAYS.index(last)) % 7 or 7
    return back + 1.0, max(0.0, back - 1.0)
