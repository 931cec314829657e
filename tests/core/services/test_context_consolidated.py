"""``[HIGH SCORE x] <summary>`` rules in the default context: each summary once, the
task's own first, other tasks' few and last; ``memwork lint`` names the repeats and the
stale ones. The episodic style keeps the library's layout, every copy included."""

from __future__ import annotations

import json

NOW = "2026-11-01T12:00:00Z"


def _record(cli, task: str, score: float, summary: str) -> None:  # noqa: ANN001
    episode = {"task_id": task, "score": score, "steps": 5, "summary": summary}
    assert cli("record-episode", stdin=json.dumps(episode), now=NOW).code == 0


def _store(cli) -> None:  # noqa: ANN001
    for score in (0.9, 0.95, 0.88):
        _record(cli, "deploy", score, "Canary, then promote")
    _record(cli, "deploy", 0.92, "Blue-green switch")
    for score, summary in (
        (0.9, "Reconcile invoices nightly"),
        (0.91, "Retry webhooks with backoff"),
        (0.93, "Idempotency keys on charges"),
        (0.96, "Log every refund"),
    ):
        _record(cli, "billing", score, summary)
    assert cli("consolidate", now=NOW).code == 0
    assert cli("lesson", "add", "Read the runbook first", now=NOW).code == 0


def _general(text: str) -> list[str]:
    block = text.split("## General rules and lessons\n", 1)[1].split("\n\n", 1)[0]
    return block.splitlines()


def test_each_summary_once_the_tasks_own_first(cli) -> None:  # noqa: ANN001
    _store(cli)
    general = _general(cli("context", "--task", "deploy", now=NOW).out)
    assert sum("Canary, then promote" in line for line in general) == 1
    assert "- [HIGH SCORE 0.88] Canary, then promote" in general  # the newest copy
    lesson = general.index("- Read the runbook first")
    own = [n for n, line in enumerate(general) if "Canary" in line or "Blue-green" in line]
    others = [n for n, line in enumerate(general) if "HIGH SCORE" in line and n not in own]
    # The task's own come before the lessons; at most three of another task's, after them.
    assert own and max(own) < lesson
    assert len(others) == 3 and min(others) > lesson


def test_an_unrelated_task_is_not_crowded_out(cli) -> None:  # noqa: ANN001
    _store(cli)
    general = _general(cli("context", "--task", "docs", now=NOW).out)
    assert general[0] == "- Read the runbook first"
    assert sum("HIGH SCORE" in line for line in general) == 3
    # Without a task every summary shows, each once.
    plain = _general(cli("context", now=NOW).out)
    assert sum("HIGH SCORE" in line for line in plain) == 6


def test_the_episodic_style_keeps_the_librarys_rules(cli) -> None:  # noqa: ANN001
    _store(cli)
    text = cli("context", "--task", "deploy", "--style", "episodic", now=NOW).out
    assert "General rules (all tasks):" in text
    rules = text.split("General rules (all tasks):\n", 1)[1].split("\n\n", 1)[0]
    # The last five global rules, whichever task gave them, as the library shows them.
    assert rules.splitlines() == [
        "  - [HIGH SCORE 0.92] Blue-green switch",
        "  - [HIGH SCORE 0.90] Reconcile invoices nightly",
        "  - [HIGH SCORE 0.91] Retry webhooks with backoff",
        "  - [HIGH SCORE 0.93] Idempotency keys on charges",
        "  - [HIGH SCORE 0.96] Log every refund",
    ]
    assert "(over 4 episodes)" in text


def test_lint_names_repeated_and_stale_consolidated_rules(cli) -> None:  # noqa: ANN001
    _store(cli)
    assert cli("rule", "add", "[HIGH SCORE 0.90] Deploy on Fridays", now=NOW).code == 0
    found = cli("--json", "lint", now=NOW).json()
    repeated = [f for f in found if f["kind"] == "duplicate_rule"]
    stale = [f for f in found if f["kind"] == "stale_rule"]
    assert len(repeated) == 2  # the two older copies of the Canary summary
    assert all("memwork rule deactivate" in f["message"] for f in repeated + stale)
    assert [f["message"].split("”")[0] for f in stale] == [
        "rule “[HIGH SCORE 0.90] Deploy on Fridays"
    ]
    # The fix the finding names clears it.
    for finding in repeated:
        assert cli("rule", "deactivate", finding["records"][0], now=NOW).code == 0
    found = cli("--json", "lint", now=NOW).json()
    assert not [f for f in found if f["kind"] == "duplicate_rule"]


def test_one_episode_is_one_episode(cli) -> None:  # noqa: ANN001
    _record(cli, "docs", 0.6, "Wrote the guide")
    assert "(over 1 episode)" in cli("context", "--task", "docs", now=NOW).out
    # The episodic style says what the library says.
    assert (
        "(over 1 episodes)" in cli("context", "--task", "docs", "--style", "episodic", now=NOW).out
    )
