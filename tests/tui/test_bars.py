"""Small wording helpers: relative times and counted nouns read as a person writes them."""

from __future__ import annotations

from datetime import timedelta

from memwork.core.base.clock import iso, parse_instant
from memwork.tui.widgets.bars import ago, plural

NOW = parse_instant("2026-11-20T12:00:00Z")


def test_no_time_at_all_reads_just_now() -> None:
    assert ago(iso(NOW), NOW) == "just now"  # it used to say "0s ago"
    assert ago(iso(NOW - timedelta(seconds=45)), NOW) == "45s ago"
    assert ago(iso(NOW + timedelta(hours=2)), NOW) == "in 2h"


def test_counts_agree_with_their_noun() -> None:
    assert plural(1, "group") == "1 group"  # it used to say "1 groups"
    assert plural(3, "episode") == "3 episodes"
    assert plural(1204, "entry", "entries") == "1,204 entries"
    assert plural(0, "line") == "0 lines"
