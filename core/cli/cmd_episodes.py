"""``memwork record-episode`` and ``memwork consolidate``."""

from __future__ import annotations

from .. import consolidation, episodes
from .input import records
from .main import Context
from .output import emit_json, note, say


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
    for doc in recorded:  # what was read as the episodic library reads it
        for warning in doc["warnings"]:
            note(f"memwork: {warning}")
    if ctx.json:
        emit_json(recorded)
    else:
        for doc in recorded:
            say(doc["id"])
    return 0


def record_failure(ctx: Context) -> int:
    from ..crashes import record_failure as record_crash
    from ..errors import InvalidInput

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
