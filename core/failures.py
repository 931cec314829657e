"""Failure memory: every failure carries an error; recent ones lead the context.

Described in docs/MEMORY.md, Failure memory.

The context's failure block must show the newest failures inside
``[now - 24 h, now]`` for whatever ``now`` it is built at, reading only the
global aggregate. Clocks are not to be trusted: an agent whose clock ran ahead
records failures stamped in the future, and a clock that later goes back makes
failures that were recent look old. So the aggregate does not keep "the newest
N by timestamp" (50 future-stamped records would push every real one out);
each write sorts the kept failures against the writer's clock into three
bands and keeps up to :data:`KEEP` of each:

- stamped after the writer's now: the *earliest* ones, the first to come due
  as the clock catches up;
- inside the writer's window: the newest ones;
- older than the writer's window: the newest ones, in case this writer's clock
  is the one that was ahead and the next reader's clock is behind it.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from typing import Any

from .clock import iso, parse_instant
from .text import cut, ellipsize, one_line

ENV_SWITCH = "MEMWORK_FAILURE_MEMORY"
WINDOW = timedelta(hours=24)
MAX_LINES = 3
KEEP = 50  # failures kept per band (see the module docstring)
TYPE_CAP = 80
MESSAGE_CAP = 160
_ISO_WIDTH = len("2026-01-01T00:00:00.000000Z")
#: Metadata keys that carry a process exit code, in the order they are tried.
EXIT_KEYS = ("exit_code", "exit", "returncode")
#: The type of an error made up for a failure reported without one (the failure loop
#: memwork follows names it so: the iteration failed, no exception was caught).
SYNTHESISED_TYPE = "IterationError"


def enabled() -> bool:
    """``MEMWORK_FAILURE_MEMORY=0`` turns synthesis and the context block off."""
    return os.environ.get(ENV_SWITCH, "1").strip() != "0"


def _joined(first: str, second: str, limit: int) -> str:
    """``first; second`` in at most ``limit`` characters, leaving ``second`` room to be read."""
    both = f"{first}; {second}"
    if len(both) <= limit:
        return both
    room = max(limit - 2 - len(second), limit // 2)
    return ellipsize(f"{ellipsize(first, room)}; {second}", limit)


def exit_code(metadata: dict[str, Any] | None) -> int | None:
    """The process exit code an episode's metadata reports (``exit_code``, ``exit`` or
    ``returncode``, the first that holds a whole number), or None."""
    for key in EXIT_KEYS:
        code = (metadata or {}).get(key)
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    return None


def crashed(metadata: dict[str, Any] | None) -> bool:
    """A non-zero exit code: the attempt crashed, whatever score it reported."""
    return exit_code(metadata) not in (None, 0)


def synthesise_error(episode: dict[str, Any]) -> dict[str, str]:
    """An ErrorEntry for a failure reported without one.

    ``phase=<phase>; exit=<code>`` when the metadata has them (a clean exit, 0, says
    nothing and is left out); otherwise the
    summary and the first mistake (both already scrubbed on the way in), so the
    line still tells the agent what went wrong; the score and step count only
    when the episode says nothing else. Other metadata (free text an agent put
    beside the known keys) is never copied. The message is cut to 160 characters.
    """
    meta = episode.get("metadata") or {}
    parts = []
    phase = meta.get("phase")
    if isinstance(phase, str | int) and not isinstance(phase, bool) and str(phase).strip():
        parts.append(f"phase={one_line(str(phase))[:40]}")
    if crashed(meta):
        parts.append(f"exit={exit_code(meta)}")
    if parts:
        message = "; ".join(parts)
    else:
        summary = one_line(episode.get("summary") or "")
        mistake = next((one_line(m) for m in episode.get("mistakes") or [] if m.strip()), "")
        if summary and mistake:
            message = _joined(summary, f"mistake: {mistake}", MESSAGE_CAP)
        elif summary or mistake:
            message = summary or f"mistake: {mistake}"
        else:
            message = f"score={episode['score']:.2f}; steps={episode['steps']}"
    return {
        "error_type": SYNTHESISED_TYPE,
        "message": ellipsize(message, MESSAGE_CAP),
        "resolution": "",
    }


def summary_of(episode: dict[str, Any]) -> dict[str, Any]:
    """What the failure aggregate keeps of a failed episode: its first three errors,
    already on one line and cut as the block shows them (long traces stay in the
    episode, not in the document every context build reads)."""
    return {
        "episode_id": episode["id"],
        "errors": [
            {
                "error_type": cut(one_line(e["error_type"]), TYPE_CAP),
                "message": cut(one_line(e.get("message", "")), MESSAGE_CAP),
            }
            for e in episode.get("errors", [])[:MAX_LINES]
        ],
        "index": episode["index"],
        "recorded_at": episode["created_at"],
        "task_id": episode["task_id"],
    }


def _stamp(text: str) -> str:
    """A recorded time in the store's one fixed-width UTC form, which sorts as text.

    Everything memwork writes is already in that form (``core.clock.iso``), so the
    hot path compares strings; anything else is parsed once and re-formatted.
    """
    if len(text) == _ISO_WIDTH and text.endswith("Z") and text[10] == "T":
        return text
    return iso(parse_instant(text))


def _key(failure: dict[str, Any]) -> tuple[str, int]:
    return _stamp(failure["recorded_at"]), int(failure["index"])


def add_to_recent(
    recent: list[dict[str, Any]], failure: dict[str, Any], now: datetime
) -> list[dict[str, Any]]:
    """The kept failures after recording ``failure`` at ``now`` (newest stamp first).

    Up to :data:`KEEP` are kept in each band around ``now`` (see the module
    docstring), so failures stamped in the future never crowd out the ones a
    reader at ``now`` needs, and the aggregate stays bounded.
    """
    until, since = iso(now), iso(now - WINDOW)
    future: list[tuple[tuple[str, int], dict[str, Any]]] = []
    inside: list[tuple[tuple[str, int], dict[str, Any]]] = []
    older: list[tuple[tuple[str, int], dict[str, Any]]] = []
    for item in [*recent, failure]:
        key = _key(item)
        band = future if key[0] > until else inside if key[0] >= since else older
        band.append((key, item))
    future.sort(key=_first)  # the earliest come due first
    inside.sort(key=_first, reverse=True)
    older.sort(key=_first, reverse=True)
    kept = [*future[:KEEP], *inside[:KEEP], *older[:KEEP]]
    kept.sort(key=_first, reverse=True)
    return [item for _, item in kept]


def _first(pair: tuple[tuple[str, int], dict[str, Any]]) -> tuple[str, int]:
    return pair[0]


def lines_for(failure: dict[str, Any]) -> list[str]:
    """``- <error_type>: <message>`` (``- <error_type>`` when the message is empty), one
    line per error of the failure, in its order."""
    lines = []
    for error in failure.get("errors") or []:
        error_type = cut(one_line(error["error_type"]), TYPE_CAP)
        message = cut(one_line(error.get("message", "")), MESSAGE_CAP)
        lines.append(f"- {error_type}: {message}" if message else f"- {error_type}")
    return lines


def lines_for_context(recent: list[dict[str, Any]], now: datetime) -> list[str]:
    """The block's lines: failures stamped inside ``[now - 24 h, now]``, newest first by
    recorded time (the later-recorded first on a tie), one line per error, at most 3."""
    return [line for line, _ in entries_for_context(recent, now)]


def entries_for_context(
    recent: list[dict[str, Any]], now: datetime
) -> list[tuple[str, dict[str, Any]]]:
    """:func:`lines_for_context`, each line with the failure (episode summary) it is from."""
    if not enabled():
        return []
    until, since = iso(now), iso(now - WINDOW)
    chosen = []
    for failure in recent:
        stamp = failure["recorded_at"]
        if len(stamp) != _ISO_WIDTH or stamp[-1] != "Z":
            stamp = _stamp(stamp)
        if since <= stamp <= until:
            chosen.append(((stamp, int(failure["index"])), failure))
    chosen.sort(key=_first, reverse=True)
    lines: list[tuple[str, dict[str, Any]]] = []
    for _, failure in chosen:
        lines.extend((line, failure) for line in lines_for(failure))
        if len(lines) >= MAX_LINES:
            break
    return lines[:MAX_LINES]
