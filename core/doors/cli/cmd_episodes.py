"""``memwork record-episode`` and ``record-failure`` (read a file or stdin) and how
``consolidate`` prints."""

from __future__ import annotations

from typing import Any

from ...domain import consolidation, episodes
from .input import records
from .main import Context
from .output import emit_json, emit_json_items, note, say


def _report_fallback(report: consolidation.Report) -> None:
    if report.fallback_reason:
        note(f"memwork: {report.fallback_reason}")


def record(ctx: Context) -> int:
    """The CLI streams its FILE (JSON Lines a line at a time) and prints the new ids, or
    with ``--json`` the recorded episodes."""
    recorded = episodes.record_episodes(
        ctx.store,
        records(ctx.args.file),
        now=ctx.now,
        actor=ctx.actor,
        on_consolidate=_report_fallback,
    )
    for doc in recorded:  # what was read as the episodic library reads it
        for warning in doc["warnings"]:
            note(f"memwork: {warning}")
    if ctx.json:
        emit_json_items(recorded)
    else:
        for doc in recorded:
            say(doc["id"])
    return 0


def record_failure(ctx: Context) -> int:
    """The CLI reads one crash report from FILE (or stdin) and prints the episode's id, or
    with ``--json`` the whole result; a fingerprint seen again is said on stderr."""
    from ...base.errors import InvalidInput
    from ...domain.crashes import record_failure as record_crash

    reports = list(records(ctx.args.file))
    if len(reports) != 1:
        raise InvalidInput("input", f"must be one crash report (got {len(reports)} records)")
    result = record_crash(ctx.store, reports[0], now=ctx.now, actor=ctx.actor)
    if result["repeated"]:
        note(
            f"memwork: crash seen again ({result['count']}x): counted on {result['episode_id']}, "
            "not recorded twice"
        )
    if ctx.json:
        emit_json(result)
    else:
        say(result["episode_id"])
    return 0


def consolidated(ctx: Context, report: dict[str, Any]) -> int:
    """``consolidate``: why it fell back (if it did), then the rules it added."""
    if report["fallback_reason"]:
        note(f"memwork: {report['fallback_reason']}")
    if ctx.json:
        emit_json(report)
    else:
        say(f"{report['source']} consolidation: {len(report['added'])} new global rules")
        for text in report["added"]:
            say(f"  + {text}")
        for proposal in report.get("proposed") or []:
            say(f"  ? proposed for review: {proposal}")
    return 0
