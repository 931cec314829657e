"""The clock a setting may fix (``MEMWORK_NOW``): at either end of what it may name,
every command still answers; past them, the setting is refused with its rule."""

from __future__ import annotations

import pytest

from memwork.core.base.clock import EARLIEST, LATEST, iso

COMMANDS = [
    ("context",),
    ("context", "--task", "deploy-api", "--query", "what failed yesterday"),
    ("search", "keys rotated last month"),
    ("search", "keys", "--since", "7d"),
    ("wm", "--session", "s1", "set", "k", "v", "--ttl", "3153600000"),  # 100 years
    ("lesson", "list"),
    ("lint",),
    ("stats",),
    ("history",),
]


@pytest.mark.parametrize("now", [iso(EARLIEST), iso(LATEST)])
def test_at_the_clocks_ends_every_command_answers(cli, now: str) -> None:  # noqa: ANN001
    # Found by running the commands with the clock at year 1 and 9999: context, a TTL,
    # a search's window and lint ended in OverflowError.
    assert cli("session", "start", "--id", "s1", now=now).code == 0
    assert cli("observe", "--session", "s1", "rotated the staging keys", now=now).code == 0
    assert cli("lesson", "add", "run the smoke tests first", now=now).code == 0
    for command in COMMANDS:
        done = cli(*command, now=now)
        assert done.code == 0, (command, done.err)


@pytest.mark.parametrize(
    "now", ["1969-12-31T23:59:59Z", "9001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"]
)
def test_past_the_clocks_ends_the_setting_is_refused(cli, now: str) -> None:  # noqa: ANN001
    assert cli("session", "start", "--id", "s1", now="2026-11-01T12:00:00Z").code == 0
    done = cli("context", now=now)
    assert done.code == 2
    assert "MEMWORK_NOW: must be an instant from 1970-01-01 to 9000-12-31" in done.err
