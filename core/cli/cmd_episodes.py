"""``memwork record-episode`` and ``memwork consolidate``."""

from __future__ import annotations

from .. import consolidation, episodes
from .input import records
from .main import Context
from .output import emit_json, emit_json_items, note, say


def _report_fallback(report: consolidation.Report) -> None:
    if report.fallback_reason:
        note(f"memwork: {report.fallback_reason}")


def record(ctx: Context) -> int:
    recorded = episodes.record_episodes(
        ctx.store,
        records(ctx.args.file),
        now=ctx.now,
        actor=ctx.actor,
        on_consolidate=_report_fallback,
    )
    if ctx.json:
        emit_json_items(recorded)
    else:
        for doc in recorded:
            say(doc["id"])
    return 0


def consolidate(ctx: Context) -> int:
    report = consolidation.consolidate(ctx.store, now=ctx.now, actor=ctx.actor)
    _report_fallback(report)
    if ctx.json:
        emit_json(
            {
                "added": report.added,
                "fallback_reason": report.fallback_reason,
                "source": report.source,
            }
        )
    else:
        say(f"{report.source} consolidation: {len(report.added)} new global rules")
        for text in report.added:
            say(f"  + {text}")
    return 0
