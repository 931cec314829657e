"""The Slots pane's rows and status line, built from plain data and theme colours."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from .virtual_table import Row

#: Short names of lint findings for the Flags column.
LINT_FLAGS = {"stale_slot": "stale", "duplicate": "dup"}


def slot_row(
    index: int,
    slot: dict[str, Any],
    *,
    draft: bool,
    findings: list[dict[str, Any]],
    error: str,
    warning: str,
) -> Row:
    """One slot: its position from 1, label, size against its limit, flags, description."""
    over = slot["over_limit"]
    flags = Text()
    if over:
        flags.append("over limit ", style=f"bold {error}")
    if slot.get("read_only"):
        flags.append("read-only ", style="dim")
    if draft:
        flags.append("✎ draft", style=f"bold {warning}")
    for kind in sorted({f["kind"] for f in findings}):
        if kind != "over_limit":  # already said, in red
            flags.append(f"⚑ {LINT_FLAGS.get(kind, kind)} ", style=warning)
    return Row(
        [
            str(index + 1),
            slot["label"],
            Text(f"{slot['chars']}/{slot['limit']}", style=f"bold {error}" if over else ""),
            flags,
            Text(slot.get("description", ""), style="dim"),
        ],
        key=slot["id"],
    )


def slots_status(slots: list[dict[str, Any]], drafts: int, *, error: str, warning: str) -> Text:
    """Counts above the list: slots, over their limit, read-only, unsaved drafts."""
    over = sum(1 for s in slots if s["over_limit"])
    locked = sum(1 for s in slots if s.get("read_only"))
    count = len(slots)
    return Text.assemble(
        (f"{count} slot{'' if count == 1 else 's'}", "bold"),
        (f" · {over} over limit", error) if over else "",
        f" · {locked} read-only" if locked else "",
        (f" · {drafts} unsaved draft{'' if drafts == 1 else 's'}", warning) if drafts else "",
        " · they lead every context, in this order",
    )
