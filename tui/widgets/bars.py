"""Small renderables: confidence bars, score colours, relative times and durations.

Colours are the terminal's named ANSI colours: Textual maps them through the
theme's ANSI palette, so they stay readable on the dark and the light theme.
"""

from __future__ import annotations

from datetime import datetime

from rich.console import Console
from rich.text import Text

from ...core.base.clock import parse_instant

BLOCKS = " ▏▎▍▌▋▊▉█"


def bar(value: float, width: int = 10) -> str:
    """A horizontal bar of ``width`` cells for a value in 0–1 (eighths of a cell)."""
    value = max(0.0, min(1.0, value))
    eighths = round(value * width * 8)
    full, rest = divmod(eighths, 8)
    return ("█" * full + (BLOCKS[rest] if rest else "")).ljust(width)


def confidence_style(value: float) -> str:
    """Colour a confidence: strong, fair, weak, about to be forgotten."""
    if value >= 0.7:
        return "green"
    if value >= 0.4:
        return "yellow"
    if value > 0.1:
        return "red"
    return "bold red"


def confidence_bar(value: float, width: int = 10) -> Text:
    """``███▌       0.35`` coloured by level."""
    return Text.assemble((bar(value, width), confidence_style(value)), f" {value:.2f}")


def outcome_style(outcome: str) -> str:
    """Colour of an episode outcome."""
    return {"success": "green", "failure": "red", "partial": "yellow"}.get(outcome, "")


def score_text(score: float, outcome: str) -> Text:
    """A score coloured by its outcome."""
    return Text(f"{score:.2f}", style=outcome_style(outcome))


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 group`` / ``3 groups`` / ``1,204 episodes`` (``nouns`` for an irregular plural)."""
    return f"{count:,} {noun if count == 1 else (nouns or noun + 's')}"


def ago(stamp: str | None, now: datetime) -> str:
    """``3d ago`` / ``in 2h`` / ``just now`` — short, for tables."""
    if not stamp:
        return ""
    seconds = (now - parse_instant(stamp)).total_seconds()
    future = seconds < 0
    seconds = abs(seconds)
    if seconds < 1:
        return "just now"
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            amount = f"{int(seconds // size)}{unit}"
            break
    else:
        amount = f"{int(seconds)}s"
    return f"in {amount}" if future else f"{amount} ago"


def short_time(stamp: str | None) -> str:
    """``2026-11-20 12:00`` from a stored timestamp."""
    return stamp[:16].replace("T", " ") if stamp else ""


def short_stamp(stamp: str | None) -> str:
    """``11-20 11:10`` from a stored timestamp (month-day, for narrow columns)."""
    return f"{stamp[5:10]} {stamp[11:16]}" if stamp else ""


def duration(seconds: float | None) -> str:
    """``2h 05m`` / ``4m 10s`` / ``12s`` (two units at most)."""
    if seconds is None:
        return ""
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def clip_to_lines(console: Console, text: Text, width: int, lines: int) -> Text:
    """``text`` wrapped to ``width``, at most ``lines`` lines; a cut ends with an ellipsis
    (a box of fixed height would otherwise drop the rest without a sign)."""
    if width <= 1 or lines <= 0:
        return text
    wrapped = text.wrap(console, width)
    if len(wrapped) <= lines:
        return text
    kept = list(wrapped)[:lines]
    last = kept[-1]
    last.rstrip()
    if last.cell_len >= width:
        last.truncate(width - 1)
    last.append("…")
    return Text("\n").join(kept)
