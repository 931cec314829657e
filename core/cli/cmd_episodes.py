"""``memwork record-episode`` (reads a file or stdin) and how ``consolidate`` prints."""

from __future__ import annotations

from typing import Any

from .. import consolidation, episodes
from .input import records
from .main import Context
from .output import emit_json, note, say


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
    if ctx.json:
        emit_json(recorded)
    else:
        for doc in recorded:
            say(doc["id"])
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
    return 0
