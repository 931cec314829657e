"""Consolidation: the heuristic, when it runs, and the external consolidator.

Described in docs/MEMORY.md, Consolidation.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from memwork.core.domain import aggregates, consolidation, episodes, rules
from memwork.core.ledger import audit
from memwork.core.storage.store import Store

ACTOR = "test"


def _record(store: Store, now: datetime, *items: dict) -> list[dict]:
    return episodes.record_episodes(store, list(items), now=now, actor=ACTOR)


def _ep(score: float, summary: str, task: str = "t") -> dict:
    return {"task_id": task, "score": score, "summary": summary}


def _global(store: Store, *, active_only: bool = True) -> list[str]:
    with store.reading():
        return [r["text"] for r in rules.in_scope(store, "global", active_only=active_only)]


def _global_docs(store: Store) -> list[dict]:
    with store.reading():
        return rules.in_scope(store, "global", active_only=False)


def _last_consolidated(store: Store) -> int:
    with store.reading():
        return int(aggregates.read_global(store)["last_consolidated_at"])


def _consolidate(store: Store, now: datetime) -> consolidation.Report:
    return consolidation.consolidate(store, now=now, actor=ACTOR)


def _py(code: str) -> str:
    """A shell command running ``code`` with this interpreter."""
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


# -- the heuristic -----------------------------------------------------------------------
def test_heuristic_rule_text(store: Store, now: datetime) -> None:
    long = "L" * 130
    _record(
        store,
        now,
        _ep(0.91, "used the staging cluster"),
        _ep(0.85, long),
        _ep(0.849, "almost"),
        _ep(1.0, ""),
        _ep(0.2, "failed"),
    )
    report = _consolidate(store, now)
    assert report.source == "heuristic" and report.fallback_reason is None
    expected = ["[HIGH SCORE 0.91] used the staging cluster", f"[HIGH SCORE 0.85] {'L' * 120}"]
    assert report.added == expected
    assert _global(store) == expected
    docs = _global_docs(store)
    assert {(d["source"], d["polarity"], d["scope"]) for d in docs} == {
        ("consolidated", "works", "global")
    }
    assert _last_consolidated(store) == 5


def test_heuristic_uses_the_last_hundred_episodes_oldest_first(store: Store, now: datetime) -> None:
    _record(store, now, *[_ep(0.9, f"ep{n}") for n in range(1, 106)])
    # Recording consolidated at 20, 40, ..., 100 already; start from a clean slate.
    with store.transaction():
        for name in store.table_names("rules"):
            store.drop(name)
    _consolidate(store, now)
    everything = _global(store, active_only=False)
    assert everything == [f"[HIGH SCORE 0.90] ep{n}" for n in range(6, 106)]
    assert _global(store) == [f"[HIGH SCORE 0.90] ep{n}" for n in range(86, 106)]


def test_appended_after_existing_global_rules(store: Store, now: datetime) -> None:
    rules.add_rule(store, "manual first", now=now, actor=ACTOR)
    _record(store, now, _ep(0.9, "a"), _ep(0.95, "b"))
    _consolidate(store, now)
    assert _global(store) == ["manual first", "[HIGH SCORE 0.90] a", "[HIGH SCORE 0.95] b"]


def test_exact_duplicates_keep_their_first_place(store: Store, now: datetime) -> None:
    _record(store, now, _ep(0.9, "a"), _ep(0.9, "b"))
    _consolidate(store, now)
    rules.add_rule(store, "manual", now=now, actor=ACTOR)
    _record(store, now, _ep(0.9, "c"), _ep(0.9, "a"), _ep(0.9, "c"))
    report = _consolidate(store, now)
    assert report.added == ["[HIGH SCORE 0.90] c"]
    assert _global(store) == [
        "[HIGH SCORE 0.90] a",
        "[HIGH SCORE 0.90] b",
        "manual",
        "[HIGH SCORE 0.90] c",
    ]
    assert len(_global(store, active_only=False)) == 4
    # Consolidating again with nothing new adds nothing.
    assert _consolidate(store, now).added == []
    assert len(_global(store, active_only=False)) == 4


def test_same_summary_with_another_score_is_another_rule(store: Store, now: datetime) -> None:
    _record(store, now, _ep(0.9, "same"), _ep(0.95, "same"))
    assert _consolidate(store, now).added == ["[HIGH SCORE 0.90] same", "[HIGH SCORE 0.95] same"]


def test_newest_twenty_global_rules_stay_active(store: Store, now: datetime) -> None:
    for n in range(5):
        rules.add_rule(store, f"manual {n}", now=now, actor=ACTOR)
    _record(store, now, *[_ep(0.9, f"s{n}") for n in range(18)])
    _consolidate(store, now)
    active = _global(store)
    assert len(active) == 20
    assert active[:2] == ["manual 3", "manual 4"]
    assert active[-1] == "[HIGH SCORE 0.90] s17"
    inactive = [d["text"] for d in _global_docs(store) if not d["active"]]
    assert inactive == ["manual 0", "manual 1", "manual 2"]


def test_a_fallen_out_rule_comes_back_as_newest_like_the_library(
    store: Store, now: datetime
) -> None:
    _record(store, now, *[_ep(0.9, f"s{n}") for n in range(19)])
    _consolidate(store, now)
    rules.add_rule(store, "m1", now=now, actor=ACTOR)
    rules.add_rule(store, "m2", now=now, actor=ACTOR)
    assert "[HIGH SCORE 0.90] s0" not in _global(store)
    # s0 is still among the last 100 episodes: the next consolidation brings it back last.
    _consolidate(store, now)
    assert _global(store)[-1] == "[HIGH SCORE 0.90] s0"
    assert "[HIGH SCORE 0.90] s1" not in _global(store)


def test_summary_in_the_rule_is_the_scrubbed_summary(store: Store, now: datetime) -> None:
    _record(store, now, _ep(0.9, "deployed as root@10.2.3.4"))
    assert _consolidate(store, now).added == ["[HIGH SCORE 0.90] deployed as root@[redacted:ipv4]"]


def test_consolidation_is_audited(store: Store, now: datetime) -> None:
    _record(store, now, _ep(0.9, "x"))
    _consolidate(store, now)
    with store.reading():
        entry = list(audit.entries(store))[0]
    assert (entry["action"], entry["table"]) == ("consolidate", "rules")
    assert entry["summary"] == "heuristic consolidation: 1 new global rules"


# -- when it runs -----------------------------------------------------------------------
def test_automatic_after_every_twenty_recorded_episodes(store: Store, now: datetime) -> None:
    for n in range(1, 20):
        _record(store, now, _ep(0.9, f"e{n}"))
    assert _global(store) == [] and _last_consolidated(store) == 0
    _record(store, now, _ep(0.1, "the twentieth"))
    assert _last_consolidated(store) == 20
    assert _global(store) == [f"[HIGH SCORE 0.90] e{n}" for n in range(1, 20)]
    for n in range(21, 40):
        _record(store, now, _ep(0.5, f"e{n}"))
    assert _last_consolidated(store) == 20
    _record(store, now, _ep(0.5, "e40"))
    assert _last_consolidated(store) == 40


def test_automatic_consolidation_counts_batches(store: Store, now: datetime) -> None:
    _record(store, now, *[_ep(0.9, f"b{n}") for n in range(20)])
    assert _last_consolidated(store) == 20
    assert len(_global(store)) == 20


def test_consolidate_every_can_be_changed(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_CONSOLIDATE_EVERY", "3")
    _record(store, now, _ep(0.9, "a"), _ep(0.9, "b"))
    assert _global(store) == []
    _record(store, now, _ep(0.9, "c"))
    assert len(_global(store)) == 3


def test_on_demand_through_the_cli(cli) -> None:  # noqa: ANN001
    cli("record-episode", stdin=json.dumps([_ep(0.9, "alpha"), _ep(0.3, "beta")]))
    done = cli("consolidate")
    assert done.code == 0 and done.err == ""
    assert done.out == "heuristic consolidation: 1 new global rules\n  + [HIGH SCORE 0.90] alpha\n"
    again = cli("consolidate", "--json").json()
    assert again == {
        "added": [],
        "engine": "heuristic",
        "fallback_reason": None,
        "proposed": [],
        "source": "heuristic",
    }
    listed = cli("rule", "list", "--json").json()
    assert [(r["text"], r["source"]) for r in listed] == [
        ("[HIGH SCORE 0.90] alpha", "consolidated")
    ]


def test_on_demand_on_an_empty_store(cli) -> None:  # noqa: ANN001
    done = cli("consolidate")
    assert done.code == 0 and done.out == "heuristic consolidation: 0 new global rules\n"


# -- the external consolidator -------------------------------------------------------
def test_external_success_adds_the_printed_rules(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen = tmp_path / "stdin.json"
    code = (
        "import sys, json; data = sys.stdin.read(); "
        f"open({str(seen)!r}, 'w').write(data); "
        "print(json.dumps(['Prefer  small\\nsteps', '', '[AVOID] mail ann@example.com']))"
    )
    monkeypatch.setenv("MEMWORK_CONSOLIDATE_CMD", _py(code))
    _record(store, now, _ep(0.9, "x"), _ep(0.2, "y", task="other"))
    report = _consolidate(store, now)
    assert (report.source, report.fallback_reason) == ("external", None)
    # Prefixed as the episodic library prefixes a consolidator's rules.
    assert report.added == [
        "[CONSOLIDATED] Prefer small steps",
        "[CONSOLIDATED] [AVOID] mail [redacted:email]",
    ]
    assert _global(store) == report.added
    assert [(d["source"], d["polarity"]) for d in _global_docs(store)] == [
        ("consolidated", "note"),
        ("consolidated", "avoid"),
    ]
    sent = json.loads(seen.read_text())
    assert [(e["index"], e["summary"], e["task_id"], e["score"]) for e in sent] == [
        (1, "x", "t", 0.9),
        (2, "y", "other", 0.2),
    ]
    assert _last_consolidated(store) == 2


FAILURES = {
    "exit code": ("import sys; sys.exit(3)", "exited with code 3"),
    "invalid JSON": ("print('not json')", "printed invalid JSON"),
    "an object": ("print('{\"rules\": []}')", "must print a JSON array of strings"),
    "numbers": ("print('[1, 2]')", "must print a JSON array of strings"),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_external_failures_fall_back_to_the_heuristic(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    code, reason = FAILURES[case]
    monkeypatch.setenv("MEMWORK_CONSOLIDATE_CMD", _py(code))
    _record(store, now, _ep(0.9, "kept by the heuristic"))
    report = _consolidate(store, now)
    assert report.source == "heuristic"
    assert report.added == ["[HIGH SCORE 0.90] kept by the heuristic"]
    assert report.fallback_reason is not None
    assert reason in report.fallback_reason
    assert report.fallback_reason.startswith("MEMWORK_CONSOLIDATE_CMD ")
    assert _global(store) == ["[HIGH SCORE 0.90] kept by the heuristic"]
    with store.reading():
        assert reason in list(audit.entries(store))[0]["summary"]


def test_external_timeout_falls_back(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_CONSOLIDATE_CMD", "sleep 5")
    monkeypatch.setenv("MEMWORK_CONSOLIDATE_TIMEOUT", "0.3")
    _record(store, now, _ep(0.9, "x"))
    started = time.monotonic()
    report = _consolidate(store, now)
    assert time.monotonic() - started < 4.5  # the command alone would take 5 s
    assert report.source == "heuristic"
    assert (
        report.fallback_reason
        == "MEMWORK_CONSOLIDATE_CMD timed out after 0.3 s; used the heuristic"
    )
    assert report.added == ["[HIGH SCORE 0.90] x"]


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child that its parent has not reaped yet is a zombie: dead for our purpose.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z"))


@pytest.mark.parametrize("tail", ["wait", "sleep 30"])
def test_external_timeout_leaves_no_process_behind(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tail: str
) -> None:
    # The shell starts a child that holds the output pipe; the shell itself waits or sleeps.
    pids = tmp_path / "pids"
    monkeypatch.setenv(
        "MEMWORK_CONSOLIDATE_CMD", f"sleep 30 & echo $! > {pids}; echo $$ >> {pids}; {tail}"
    )
    monkeypatch.setenv("MEMWORK_CONSOLIDATE_TIMEOUT", "0.5")
    _record(store, now, _ep(0.9, "x"))
    started = time.monotonic()
    report = _consolidate(store, now)
    assert time.monotonic() - started < 20  # the command alone would take 30 s
    assert report.fallback_reason and "timed out" in report.fallback_reason
    found = [int(x) for x in pids.read_text().split()]
    assert len(found) == 2
    deadline = time.monotonic() + 20  # a bound, not an expectation
    while any(_alive(p) for p in found) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in found if _alive(p)]


def test_external_command_that_does_not_exist_falls_back(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_CONSOLIDATE_CMD", "/nonexistent/consolidator --flag")
    _record(store, now, _ep(0.9, "x"))
    report = _consolidate(store, now)
    assert report.source == "heuristic" and "exited with code 127" in report.fallback_reason


def test_external_rule_that_no_rule_can_hold_falls_back(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_CONSOLIDATE_CMD", _py("print('[\"' + 'x' * 3000 + '\"]')"))
    _record(store, now, _ep(0.9, "x"))
    report = _consolidate(store, now)
    assert report.source == "heuristic"
    assert report.added == ["[HIGH SCORE 0.90] x"]


def test_cli_reports_the_fallback_on_stderr(cli, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    cli("record-episode", stdin=json.dumps(_ep(0.9, "x")))
    monkeypatch.setenv("MEMWORK_CONSOLIDATE_CMD", _py("print('nope')"))
    done = cli("consolidate")
    assert done.code == 0
    assert done.err.startswith("memwork: MEMWORK_CONSOLIDATE_CMD printed invalid JSON")
    assert done.err.endswith("; used the heuristic\n") and done.err.count("\n") == 1
    assert done.out.startswith("heuristic consolidation: 1 new global rules")
    report = cli("consolidate", "--json")
    assert report.json()["source"] == "heuristic"
    assert "printed invalid JSON" in report.json()["fallback_reason"]


def test_automatic_consolidation_never_fails_a_recording(
    cli,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMWORK_CONSOLIDATE_CMD", _py("import sys; sys.exit(1)"))
    done = cli("record-episode", stdin=json.dumps([_ep(0.9, f"n{n}") for n in range(20)]))
    assert done.code == 0 and len(done.out.splitlines()) == 20
    assert "MEMWORK_CONSOLIDATE_CMD exited with code 1" in done.err
    assert len(cli("rule", "list", "--json").json()) == 20
