"""Consolidation: distil recent high-scoring episodes into global rules.

Described in docs/MEMORY.md, Consolidation.

The heuristic turns each of the last 100 episodes with score >= 0.85 and a
summary into ``[HIGH SCORE 0.91] <summary>``. An external consolidator
(``MEMWORK_CONSOLIDATE_CMD``) may replace it; its rules read ``[CONSOLIDATED]
<rule>``, as the episodic library writes them. Whatever goes wrong with it —
exit code, bad JSON, timeout — falls back to the heuristic and is reported,
never raised. On demand, a configured model endpoint may write the rules instead
(``core/services/llm/consolidate.py``, through :func:`apply_rules`).
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..ledger import audit
from ..models.plain import RULE_TEXT_CAP as TEXT_CAP
from ..privacy import scrub
from ..storage.store import Store
from . import aggregates, rules

if TYPE_CHECKING:
    import subprocess

ENV_CMD = "MEMWORK_CONSOLIDATE_CMD"
ENV_TIMEOUT = "MEMWORK_CONSOLIDATE_TIMEOUT"
ENV_EVERY = "MEMWORK_CONSOLIDATE_EVERY"
HIGH_SCORE = 0.85
SUMMARY_CAP = 120
#: What an external consolidator's rules start with (the episodic library's prefix).
CONSOLIDATED_PREFIX = "[CONSOLIDATED] "


def every() -> int:
    """Episodes between automatic consolidations (default 20)."""
    try:
        return max(1, int(os.environ.get(ENV_EVERY, "20")))
    except ValueError:
        return 20


def due(glob: dict[str, Any]) -> bool:
    """Whether enough episodes were recorded since the last consolidation."""
    return int(glob["total_episodes"]) - int(glob["last_consolidated_at"]) >= every()


def heuristic_texts(recent: list[dict[str, Any]]) -> list[str]:
    """``[HIGH SCORE x.xx] <summary[:120]>`` for each qualifying episode, oldest first."""
    return list(heuristic_sources(recent))


def heuristic_sources(recent: list[dict[str, Any]]) -> dict[str, list[str]]:
    """:func:`heuristic_texts`, each with the ids of the episodes that give it."""
    found: dict[str, list[str]] = {}
    for ep in recent[-aggregates.RECENT :]:
        if ep["score"] >= HIGH_SCORE and ep.get("summary"):
            text = f"[HIGH SCORE {ep['score']:.2f}] {ep['summary'][:SUMMARY_CAP]}"
            found.setdefault(text, []).append(ep["id"])
    return found


class Report:
    """What a consolidation did.

    A plain class, not a dataclass: recording imports this module on every agent
    step, and ``dataclasses`` brings ``inspect`` and ``ast`` with it (~8 ms).
    """

    __slots__ = ("source", "added", "fallback_reason", "proposed")

    def __init__(self, source: str, fallback_reason: str | None = None) -> None:
        self.source = source  # "heuristic", "external" or "llm" (a model endpoint)
        self.added: list[str] = []
        self.fallback_reason = fallback_reason
        #: Ids of the review proposals a model's rules became (review on, an agent asking).
        self.proposed: list[str] = []

    def __repr__(self) -> str:
        return (
            f"Report(source={self.source!r}, added={self.added!r}, "
            f"fallback_reason={self.fallback_reason!r})"
        )

    def to_json(self) -> dict[str, Any]:
        """What ``consolidate --json`` prints."""
        return {
            "added": self.added,
            "engine": self.source,
            "fallback_reason": self.fallback_reason,
            "proposed": self.proposed,
            "source": self.source,
        }


def _run_in_group(command: str, stdin: str, timeout: float) -> tuple[str, str, int]:
    """Run ``command`` through the shell in its own process group.

    At the timeout the whole group is killed: killing only the shell would leave
    its children running, and they would keep the output pipes open so that
    collecting the output would wait for them too.
    """
    # Imported here: recording an episode loads this module on every agent step.
    import signal
    import subprocess

    proc = subprocess.Popen(
        command,
        shell=True,  # the command is the user's own setting, like $EDITOR
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a new session is a new process group led by the shell
    )
    try:
        stdout, stderr = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc, signal.SIGKILL)
        proc.communicate()
        raise
    except BaseException:
        _kill_group(proc, signal.SIGKILL)
        proc.wait()
        raise
    # Children the command left behind in the background would outlive memwork.
    _kill_group(proc, signal.SIGKILL)
    return stdout, stderr, proc.returncode


def _kill_group(proc: subprocess.Popen[str], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone


def run_external(command: str, recent: list[dict[str, Any]]) -> list[str]:
    """Run the external consolidator; raise ValueError with a reason when it fails."""
    # Imported here: recording an episode loads this module on every agent step.
    import json
    import subprocess

    try:
        timeout = float(os.environ.get(ENV_TIMEOUT, "30"))
    except ValueError:
        timeout = 30.0
    try:
        stdout, stderr, returncode = _run_in_group(command, json.dumps(recent), timeout)
    except subprocess.TimeoutExpired:
        raise ValueError(f"timed out after {timeout:g} s") from None
    except OSError as exc:
        raise ValueError(f"could not start: {exc}") from None
    if returncode != 0:
        tail = (stderr or "").strip().splitlines()[-1:] or [""]
        raise ValueError(f"exited with code {returncode} {tail[0]}".strip())
    try:
        parsed = json.loads(stdout)
    except json.JSONDecodeError as exc:
        raise ValueError(f"printed invalid JSON ({exc.msg})") from None
    if not isinstance(parsed, list) or not all(isinstance(x, str) for x in parsed):
        raise ValueError("must print a JSON array of strings")
    texts = [_prefixed(t) for t in (" ".join(scrub(x).split()) for x in parsed) if t]
    # A rule the store would refuse must not make consolidation raise.
    too_long = [t for t in texts if len(t) > TEXT_CAP]
    if too_long:
        raise ValueError(f"printed a rule of {len(too_long[0])} characters (at most {TEXT_CAP})")
    return texts


def _prefixed(text: str) -> str:
    """``[CONSOLIDATED] <rule>`` (a rule that already says so is left as it is)."""
    if text.startswith(CONSOLIDATED_PREFIX.strip()):
        return text
    return CONSOLIDATED_PREFIX + text


def external_command() -> str:
    """The external consolidator's command line, or ``""``."""
    return os.environ.get(ENV_CMD, "").strip()


def apply_rules(
    store: Store,
    texts: list[str],
    report: Report,
    glob: dict[str, Any],
    *,
    now: datetime,
    actor: str,
) -> None:
    """Inside a transaction: add the rules, keep the newest 20 active, mark ``glob``
    consolidated (the caller stores it) and write the audit entry."""
    # Heuristic rules name the recent episodes they came from; an external
    # consolidator's rules come from the recent episodes as a whole and name none.
    origins = heuristic_sources(glob["recent"])
    for text in texts:
        doc, _ = rules.upsert(
            store,
            text,
            "global",
            polarity=rules.polarity_of(text),
            source="consolidated",
            now=now,
            episode_ids=origins.get(text) if report.source == "heuristic" else None,
        )
        if doc is not None:
            report.added.append(text)
    rules.enforce_window(store, "global", now)
    glob["last_consolidated_at"] = glob["total_episodes"]
    summary = f"{report.source} consolidation: {len(report.added)} new global rules"
    if report.proposed:
        summary += f", {len(report.proposed)} proposed for review"
    if report.fallback_reason:
        summary += f" ({report.fallback_reason})"
    audit.record(
        store,
        actor=actor,
        action="consolidate",
        table=rules.TABLE,
        record_id="global",
        summary=summary,
        now=now,
    )


def consolidate_within(store: Store, glob: dict[str, Any], *, now: datetime, actor: str) -> Report:
    """The heuristic, inside the recording transaction, right after the episode that
    made it due — so a batch consolidates after every 20th episode, as one-by-one
    recording (and the episodic library) would."""
    report = Report("heuristic")
    apply_rules(store, heuristic_texts(glob["recent"]), report, glob, now=now, actor=actor)
    return report


def consolidate(store: Store, *, now: datetime, actor: str) -> Report:
    """Consolidate now (on demand, or after recording when an external command is set).

    The external command runs outside the store lock (it may take seconds).
    """
    with store.reading():
        recent = aggregates.read_global(store)["recent"]
    command = external_command()
    report: Report
    if command:
        try:
            texts = run_external(command, recent)
            report = Report("external")
        except ValueError as exc:
            texts = heuristic_texts(recent)
            report = Report("heuristic", fallback_reason=f"{ENV_CMD} {exc}; used the heuristic")
    else:
        texts = heuristic_texts(recent)
        report = Report("heuristic")
    with store.transaction():
        glob = aggregates.read_global(store)
        apply_rules(store, texts, report, glob, now=now, actor=actor)
        aggregates.write_global(store, glob)
    return report


def consolidate_op(store: Store, *, now: datetime, actor: str) -> dict[str, Any]:
    """The ``consolidate`` operation: what it added, and why it fell back if it did."""
    return consolidate(store, now=now, actor=actor).to_json()
