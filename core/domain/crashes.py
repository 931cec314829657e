"""Crash reports: a crash of an agent's run becomes a failed episode, once per fingerprint.

Described in docs/MEMORY.md, Failure memory.

The failure loop memwork follows writes a crash report (error class, friction
kind, stack signature, fingerprint, message, task, phase, exit code) when a run
dies. :func:`record_failure` scrubs it and records it as a failed episode whose
error is the report's class and message, so its line reaches the context's
failure block. A report whose fingerprint was seen before is counted on the
episode it first became (``occurrences``, the crash record's ``count``) and
brought back to the top of the block at its new time, instead of being recorded
again: a crash that repeats every step must not fill the history, nor push every
other failure out of the block.

Fingerprints are matched by a hash of the raw text (the crash record's id); the
record and the episode keep it only scrubbed, like every text from an agent.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..base.clock import iso, parse_instant
from ..base.errors import InvalidInput
from ..base.text import clip, one_line
from ..ledger import audit
from ..models.base import validate
from ..models.crash import Crash, CrashReport
from ..privacy import scrub
from ..storage import shards
from ..storage.store import Store
from . import aggregates, episodes, failures

TABLE = "crashes"
#: What the failed episode's summary starts with (its errors carry the report's class).
SUMMARY_PREFIX = "crash"
#: Characters of a fingerprint a composed message shows (enough to tell crashes apart).
FINGERPRINT_SHOWN = 12


def crash_id(fingerprint: str) -> str:
    """The crash record's id: a hash of the raw fingerprint (which is never stored)."""
    import hashlib

    return "crash_" + hashlib.sha256(fingerprint.encode("utf-8")).hexdigest()[:24]


def parse_report(report: Any) -> CrashReport:
    """Validate a crash report; ``InvalidInput`` names the field and the rule."""
    if not isinstance(report, dict):
        raise InvalidInput(
            "report", f"must be one JSON object, a crash report (got {type(report).__name__})"
        )
    named = report.get("error_class", report.get("error_type"))
    kind = report.get("friction_kind", report.get("friction"))
    if (named is None or named == "") and not (isinstance(kind, str) and kind.strip()):
        raise InvalidInput("error_class", "is required (or a friction_kind, which then names it)")
    return validate(CrashReport, report, outside=True)


def composed_message(report: CrashReport) -> str:
    """The error's message when the report gives none, as the failure loop composes it
    from its crash file: ``phase=ACT; friction=retry_loop; signature: a > b > c;
    fp=<first 12 characters>`` (the parts it has), else ``iteration failed``."""
    parts = []
    if report.phase.strip():
        parts.append(f"phase={one_line(report.phase)}")
    if report.friction_kind.strip():
        parts.append(f"friction={one_line(report.friction_kind)}")
    if report.stack_signature.strip():
        parts.append(f"signature: {one_line(report.stack_signature)}")
    if report.fingerprint.strip():
        parts.append(f"fp={report.fingerprint.strip()[:FINGERPRINT_SHOWN]}")
    return "; ".join(parts) or "iteration failed"


def _episode_of(report: CrashReport) -> dict[str, Any]:
    """The failed episode a new crash becomes (``record-episode`` input)."""
    known = set(CrashReport.model_fields)
    extra = {k: v for k, v in (report.model_extra or {}).items() if k not in known}
    metadata: dict[str, Any] = {
        **extra,
        "source": "crash_report",
        "occurrences": 1,
        "friction_kind": report.friction_kind,
        "stack_signature": report.stack_signature,
        "crash_fingerprint": report.fingerprint,
    }
    if report.phase:
        metadata["phase"] = report.phase
    if report.exit_code is not None:
        metadata["exit_code"] = report.exit_code
    # A report without a message still tells the agent where it broke: the failure
    # loop's own line (phase, signature, short fingerprint), never a bare type.
    message = report.message if report.message.strip() else composed_message(report)
    summary = f"{SUMMARY_PREFIX}: {report.error_class}: {message}"
    return {
        "task_id": report.task_id,
        "score": 0.0,
        "steps": 0,
        "summary": summary,
        "errors": [{"error_type": report.error_class, "message": message}],
        "outcome": "failure",
        "session_id": report.session_id,
        "recorded_at": report.recorded_at,
        "metadata": metadata,
    }


def _stored_episode(store: Store, crash: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    table = shards.shard_of(episodes.BASE, int(crash["index"]))
    doc = store.docs(table).get(crash["episode_id"])
    return (table, dict(doc)) if doc else None


def record_failure(store: Store, report: Any, *, now: datetime, actor: str) -> dict[str, Any]:
    """Record a crash report (see the module docstring); what ``record-failure --json``
    prints: the episode, the fingerprint's count and whether it was ``repeated``."""
    parsed = parse_report(report)
    stamp = iso(parse_instant(parsed.recorded_at)) if parsed.recorded_at else iso(now)
    key = crash_id(parsed.fingerprint) if parsed.fingerprint.strip() else None
    with store.transaction():
        known = store.docs(TABLE).get(key) if key else None
        found = _stored_episode(store, known) if known else None
        if known is not None and found is not None:
            crash = _repeat(store, dict(known), found, stamp, now=now, actor=actor)
            repeated = True
        else:
            (doc,) = episodes.record_episodes(store, [_episode_of(parsed)], now=now, actor=actor)
            crash = {
                "id": key or f"crash_{doc['id']}",
                "crash_fingerprint": scrub(parsed.fingerprint),
                "episode_id": doc["id"],
                "index": doc["index"],
                "task_id": doc["task_id"],
                "error_type": doc["errors"][0]["error_type"],
                "count": 1,
                "first_seen_at": doc["created_at"],
                "last_seen_at": doc["created_at"],
                "created_at": iso(now),
                "updated_at": iso(now),
            }
            repeated = False
        if key is not None:
            store.put(TABLE, key, validate(Crash, crash).to_doc())
    return {
        "count": crash["count"],
        "episode_id": crash["episode_id"],
        "error_type": crash["error_type"],
        "fingerprint": crash["crash_fingerprint"] or None,
        "first_seen_at": crash["first_seen_at"],
        "index": crash["index"],
        "last_seen_at": crash["last_seen_at"],
        "repeated": repeated,
        "task_id": crash["task_id"],
    }


def _repeat(
    store: Store,
    crash: dict[str, Any],
    found: tuple[str, dict[str, Any]],
    stamp: str,
    *,
    now: datetime,
    actor: str,
) -> dict[str, Any]:
    """Count a fingerprint seen again on its episode, and bring the episode's failure
    back to the top of the block at ``stamp`` (inside the caller's transaction)."""
    table, episode = found
    crash["count"] = int(crash["count"]) + 1
    crash["last_seen_at"] = max(crash["last_seen_at"], stamp)
    crash["updated_at"] = iso(now)
    episode["metadata"] = {
        **(episode.get("metadata") or {}),
        "occurrences": crash["count"],
        "last_seen_at": crash["last_seen_at"],
    }
    episode["updated_at"] = iso(now)
    store.put(table, episode["id"], episode)
    summary = {**failures.summary_of(episode), "recorded_at": stamp}
    glob = aggregates.read_global(store)
    glob["recent_failures"] = failures.add_to_recent(glob["recent_failures"], summary, now)
    failures.note_prior(glob, summary, now)
    aggregates.write_global(store, glob)
    audit.record(
        store,
        actor=actor,
        action="repeat",
        table=episodes.BASE,
        record_id=episode["id"],
        summary=f"crash seen again ({crash['count']}x): {clip(crash['error_type'], 80)}",
        now=now,
    )
    return crash
