"""Failure memory: every failure carries an error; recent ones lead the context.

Described in docs/MEMORY.md, Failure memory.

The context's failure block shows the newest failures stamped inside the
reader's window, ``[now - 24 h, now + 5 min]`` (the upper edge rounded up to
the end of its minute: a reader whose clock is a little behind the writer's
still sees a failure just recorded), reading only the global aggregate.
Clocks are not to be trusted: an agent whose clock ran ahead records failures
stamped in the future, and a clock that later goes back makes failures that
were recent look old. So the aggregate never keeps "the newest N by
timestamp" (50 future-stamped records would push every real one out). What it
keeps is decided per minute of stamp and around each writer's clock:

- of the failures stamped in one minute, the newest three (the block shows at
  most three lines, at least one per failure, so no reader needs a fourth);
- every such minute within :data:`NEAR` (6 hours) of the writer's clock, however
  many there are: a reader whose clock is within 6 hours of every writer's sees
  exactly what it would see if every failure were kept;
- beyond that, the :data:`KEEP` (50) minutes nearest on either side: the
  earliest ones after (the first to come due as a clock catches up) and the
  newest ones before (for a reader whose clock is behind this writer's).

A reader's window ends at a minute's end, so a minute is either wholly inside
it or wholly after it: failures stamped after the window (however many, in the
same minute or not) never take the place of one inside it.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from typing import Any

from ..base.clock import iso, parse_instant
from ..base.text import cut, ellipsize, one_line

ENV_SWITCH = "MEMWORK_FAILURE_MEMORY"
WINDOW = timedelta(hours=24)
MAX_LINES = 3
#: Around a writer's clock, every minute with failures is kept (module docstring).
NEAR = timedelta(hours=6)
#: Minutes with failures kept beyond :data:`NEAR`, on either side of the writer's clock.
KEEP = 50
#: Failures kept per minute of stamp: the block never shows more than three.
PER_MINUTE = MAX_LINES
#: How far ahead of the reader's clock a failure may be stamped and still be shown (a
#: reader a little behind the writer), rounded up to the end of that minute.
AHEAD = timedelta(minutes=5)
#: Cross-run recall: "(prior)" lines under the block, each cut to this many characters.
PRIOR_LINES = 3
PRIOR_CAP = 120
#: Earlier failures kept per (task, kind) for the "(prior)" lines, on either side of the
#: writer's window start; and (task, kind) pairs kept in all (the least recently seen go).
PRIOR_KEEP = 3
PRIOR_KINDS = 100
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


def phase_of(metadata: dict[str, Any] | None) -> str | None:
    """The phase an episode's metadata names (``phase``), on one line and at most 40
    characters, or None."""
    phase = (metadata or {}).get("phase")
    if isinstance(phase, str | int) and not isinstance(phase, bool) and str(phase).strip():
        return one_line(str(phase))[:40]
    return None


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
    phase = phase_of(meta)
    if phase is not None:
        parts.append(f"phase={phase}")
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
    episode, not in the document every context build reads), its phase, and how many
    times a crash report with its fingerprint came in (``count``, when more than once)."""
    summary: dict[str, Any] = {
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
    if episode.get("agent_id"):
        summary["agent_id"] = episode["agent_id"]
    metadata = episode.get("metadata") or {}
    phase = phase_of(metadata)
    if phase is not None:
        summary["phase"] = phase
    count = metadata.get("occurrences")
    if isinstance(count, int) and not isinstance(count, bool) and count > 1:
        summary["count"] = count
    return summary


def _stamp(text: str) -> str:
    """A recorded time in the store's one fixed-width UTC form, which sorts as text.

    Everything memwork writes is already in that form (``core.base.clock.iso``), so the
    hot path compares strings; anything else is parsed once and re-formatted.
    """
    if len(text) == _ISO_WIDTH and text.endswith("Z") and text[10] == "T":
        return text
    return iso(parse_instant(text))


#: ``YYYY-MM-DDTHH:MM``: the minute a stamp falls in (stamps sort as text).
_MINUTE = len("2026-01-01T00:00")

Keyed = tuple[tuple[str, int], dict[str, Any]]


def _key(failure: dict[str, Any]) -> tuple[str, int]:
    return _stamp(failure["recorded_at"]), int(failure["index"])


def add_to_recent(
    recent: list[dict[str, Any]], failure: dict[str, Any], now: datetime
) -> list[dict[str, Any]]:
    """The kept failures after recording ``failure`` at ``now`` (newest stamp first).

    A failure already kept under the same episode (a crash report seen again) is
    replaced by the new summary. What is kept is decided per minute of stamp around
    ``now`` (see the module docstring), so failures stamped in the future never
    crowd out the ones a reader needs, and the aggregate stays bounded.
    """
    by_minute: dict[str, list[Keyed]] = {}
    for item in [*(x for x in recent if x["episode_id"] != failure["episode_id"]), failure]:
        key = _key(item)
        by_minute.setdefault(key[0][:_MINUTE], []).append((key, item))
    low, high = iso(now - NEAR)[:_MINUTE], iso(now + NEAR)[:_MINUTE]
    minutes = sorted(by_minute)
    before = [m for m in minutes if m < low][-KEEP:]
    near = [m for m in minutes if low <= m <= high]
    after = [m for m in minutes if m > high][:KEEP]
    kept: list[Keyed] = []
    for minute in (*before, *near, *after):
        group = sorted(by_minute[minute], key=_first, reverse=True)
        kept.extend(group[:PER_MINUTE])
    kept.sort(key=_first, reverse=True)
    return [item for _, item in kept]


def _first(pair: Keyed) -> tuple[str, int]:
    return pair[0]


def _error_line(error: dict[str, Any]) -> str:
    error_type = cut(one_line(error["error_type"]), TYPE_CAP)
    message = cut(one_line(error.get("message", "")), MESSAGE_CAP)
    return f"- {error_type}: {message}" if message else f"- {error_type}"


def lines_for(failure: dict[str, Any]) -> list[str]:
    """``- <error_type>: <message>`` (``- <error_type>`` when the message is empty), one
    line per error of the failure, in its order; `` (seen <n>x)`` after each when a crash
    with its fingerprint came in more than once."""
    seen = failure.get("count")
    suffix = f" (seen {seen}x)" if isinstance(seen, int) and seen > 1 else ""
    return [_error_line(error) + suffix for error in failure.get("errors") or []]


def in_window(recent: list[dict[str, Any]], now: datetime) -> list[dict[str, Any]]:
    """The kept failures a reader at ``now`` sees: stamped from ``now - 24 h`` up to the
    end of the minute :data:`AHEAD` of ``now``, newest first by recorded time (the
    later-recorded first on a tie)."""
    since, until = iso(now - WINDOW), iso(now + AHEAD)[:_MINUTE]
    chosen = []
    for failure in recent:
        stamp = failure["recorded_at"]
        if len(stamp) != _ISO_WIDTH or stamp[-1] != "Z":
            stamp = _stamp(stamp)
        if since <= stamp and stamp[:_MINUTE] <= until:
            chosen.append(((stamp, int(failure["index"])), failure))
    chosen.sort(key=_first, reverse=True)
    return [failure for _, failure in chosen]


def lines_for_context(recent: list[dict[str, Any]], now: datetime) -> list[str]:
    """The block's lines: the failures :func:`in_window` at ``now``, one line per error,
    at most 3 (without the "(prior)" lines, which need the tasks' aggregates)."""
    return [line for line, _ in entries_for_context(recent, now)]


def entries_for_context(
    recent: list[dict[str, Any]], now: datetime
) -> list[tuple[str, dict[str, Any]]]:
    """:func:`lines_for_context`, each line with the failure (episode summary) it is from."""
    if not enabled():
        return []
    lines: list[tuple[str, dict[str, Any]]] = []
    for failure in in_window(recent, now):
        lines.extend((line, failure) for line in lines_for(failure))
        if len(lines) >= MAX_LINES:
            break
    return lines[:MAX_LINES]


# -- cross-run recall: "(prior)" lines ---------------------------------------------------
def kinds_of(failure: dict[str, Any]) -> list[tuple[str, str]]:
    """(kind, its line) for each kind a failure summary is of: ``type:<error type>`` for
    each of its errors (that error's line), ``phase:<phase>`` (its first error's line)."""
    errors = failure.get("errors") or []
    kinds = {f"type:{e['error_type']}": _error_line(e) for e in reversed(errors)}
    if failure.get("phase") and errors:
        kinds.setdefault(f"phase:{failure['phase']}", _error_line(errors[0]))
    return sorted(kinds.items())


def note_prior(glob: dict[str, Any], failure: dict[str, Any], now: datetime) -> None:
    """Remember a failure summary per (task, kind) in the global aggregate (in place;
    ``failure_kinds``: task → kind → entries), for the "(prior)" lines of a later
    failure of that task. The context reads that aggregate anyway, so the lines cost
    it no other read.

    Per (task, kind) the newest :data:`PRIOR_KEEP` stamped before the window of the
    writer's clock are kept, and as many inside it or later (they become "before" as
    time moves on); the :data:`PRIOR_KINDS` most recently seen pairs are kept.
    """
    start = iso(now - WINDOW)
    every: dict[str, Any] = dict(glob.get("failure_kinds") or {})
    kinds: dict[str, Any] = dict(every.get(failure["task_id"]) or {})
    for kind, line in kinds_of(failure):
        entry = {
            "episode_id": failure["episode_id"],
            "index": failure["index"],
            "line": ellipsize(f"- (prior) {line[2:]}", PRIOR_CAP),
            "recorded_at": failure["recorded_at"],
        }
        if failure.get("agent_id"):
            entry["agent_id"] = failure["agent_id"]
        held = (kinds.get(kind) or {}).get("entries") or []
        items = [x for x in held if x["episode_id"] != entry["episode_id"]] + [entry]
        items.sort(key=_key, reverse=True)
        older = [x for x in items if _stamp(x["recorded_at"]) < start][:PRIOR_KEEP]
        newer = [x for x in items if _stamp(x["recorded_at"]) >= start][:PRIOR_KEEP]
        kinds[kind] = {"entries": newer + older, "seen": int(failure["index"])}
    every[failure["task_id"]] = kinds
    if sum(len(ks) for ks in every.values()) > PRIOR_KINDS:  # only then rank every pair
        _let_go(every)
    glob["failure_kinds"] = every


def _let_go(every: dict[str, Any]) -> None:
    """Keep the :data:`PRIOR_KINDS` most recently seen (task, kind) pairs (in place)."""
    pairs = [(int(k["seen"]), task, kind) for task, ks in every.items() for kind, k in ks.items()]
    for _, task, kind in sorted(pairs)[:-PRIOR_KINDS]:
        every[task] = {k: v for k, v in every[task].items() if k != kind}
        if not every[task]:
            del every[task]


def prior_entries(
    shown: list[dict[str, Any]], kinds_by_task: dict[str, Any], now: datetime
) -> list[tuple[str, dict[str, Any]]]:
    """Up to :data:`PRIOR_LINES` ``- (prior) …`` lines under the block, each with the
    earlier failure it recalls: failures of the same task as a shown one and of the
    same kind (error type or phase), stamped before the window, newest first, one line
    per earlier failure (its first matching kind's), no text twice, and none that
    repeats a line the block shows already (the same error again says nothing new)."""
    if not shown or not enabled():
        return []
    start = iso(now - WINDOW)
    shown_ids = {f["episode_id"] for f in shown}
    said = {_error_line(e) for f in shown for e in f.get("errors") or []}
    found: dict[str, tuple[tuple[str, int], str, dict[str, Any]]] = {}
    for failure in shown:
        held = kinds_by_task.get(failure["task_id"]) or {}
        for kind, _ in kinds_of(failure):
            for entry in (held.get(kind) or {}).get("entries") or []:
                episode = entry["episode_id"]
                if episode in shown_ids or episode in found:
                    continue
                key = _key(entry)
                if key[0] < start and "- " + entry["line"][len("- (prior) ") :] not in said:
                    found[episode] = (key, entry["line"], entry)
    lines: list[tuple[str, dict[str, Any]]] = []
    for _, line, entry in sorted(found.values(), key=lambda x: x[0], reverse=True):
        if all(line != kept for kept, _ in lines):
            lines.append((line, entry))
    return lines[:PRIOR_LINES]
