"""Failure memory: every failure carries an error; recent ones lead the context.

Described in docs/MEMORY.md, Failure memory.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from typing import Any

from core.clock import parse_instant
from core.text import cut, one_line

ENV_SWITCH = "MEMWORK_FAILURE_MEMORY"
WINDOW = timedelta(hours=24)
MAX_LINES = 3
KEEP = 50  # failures kept in the aggregate, newest by recorded time
TYPE_CAP = 80
MESSAGE_CAP = 160


def enabled() -> bool:
    """``MEMWORK_FAILURE_MEMORY=0`` turns synthesis and the context block off."""
    return os.environ.get(ENV_SWITCH, "1").strip() != "0"


def synthesise_error(episode: dict[str, Any]) -> dict[str, str]:
    """An ErrorEntry for a failure reported without one, from non-sensitive fields only.

    Only the phase and the exit code are taken from the metadata; free text
    (summaries, messages) is never copied, so nothing private can leak here.
    """
    meta = episode.get("metadata") or {}
    parts = []
    phase = meta.get("phase")
    if isinstance(phase, str | int) and str(phase).strip():
        parts.append(f"phase={one_line(str(phase))[:40]}")
    for key in ("exit_code", "exit", "returncode"):
        code = meta.get(key)
        if isinstance(code, int) and not isinstance(code, bool):
            parts.append(f"exit={code}")
            break
    if not parts:
        parts = [f"score={episode['score']:.2f}", f"steps={episode['steps']}"]
    return {"error_type": "Failure", "message": "; ".join(parts), "resolution": ""}


def summary_of(episode: dict[str, Any]) -> dict[str, Any]:
    """What the failure aggregate keeps of a failed episode."""
    return {
        "episode_id": episode["id"],
        "errors": [
            {"error_type": e["error_type"], "message": e.get("message", "")}
            for e in episode.get("errors", [])
        ],
        "index": episode["index"],
        "recorded_at": episode["created_at"],
        "task_id": episode["task_id"],
    }


def add_to_recent(recent: list[dict[str, Any]], failure: dict[str, Any]) -> list[dict[str, Any]]:
    """Keep the newest failures by recorded time (ties: the later index first)."""
    merged = [*recent, failure]
    merged.sort(key=lambda f: (f["recorded_at"], f["index"]), reverse=True)
    return merged[:KEEP]


def line_for(failure: dict[str, Any]) -> str | None:
    """``- <error_type>: <message>`` for the failure's first error."""
    errors = failure.get("errors") or []
    if not errors:
        return None
    first = errors[0]
    error_type = cut(one_line(first["error_type"]), TYPE_CAP)
    message = cut(one_line(first.get("message", "")), MESSAGE_CAP)
    return f"- {error_type}: {message}"


def lines_for_context(recent: list[dict[str, Any]], now: datetime) -> list[str]:
    """The context block's lines: within 24 h, newest first, at most 3."""
    if not enabled():
        return []
    since = now - WINDOW
    chosen = [
        f for f in recent if since <= parse_instant(f["recorded_at"]) <= now + timedelta(seconds=1)
    ]
    chosen.sort(key=lambda f: (f["recorded_at"], f["index"]), reverse=True)
    lines = [line for f in chosen if (line := line_for(f))]
    return lines[:MAX_LINES]
