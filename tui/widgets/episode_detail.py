"""The selected episode in full: outcome, summary, mistakes, successes, errors, the
mistake cards it touched and its metadata."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.console import Group
from rich.text import Text

from ...core.domain.episodes import EpisodeRow
from ...core.domain.failures import SYNTHESISED_TYPE
from .bars import ago, outcome_style, plural, short_time
from .episode_rows import GLYPH


def _title(text: str) -> Text:
    return Text(f"\n{text}", style="bold")


def _list_section(title: str, items: list[str], style: str) -> list[Text]:
    if not items:
        return []
    body = Text()
    for number, item in enumerate(items):
        if number:
            body.append("\n")
        body.append("• ", style=style)
        body.append(item)
    return [_title(f"{title} ({len(items)})"), body]


def render_episode(
    row: EpisodeRow,
    doc: dict[str, Any] | None,
    touched: list[dict[str, Any]],
    now: datetime,
) -> Group:
    """What the list row knows at once; the rest once ``doc`` (the full episode) is read."""
    head = Text.assemble(
        (f"Episode #{row.index}", "bold"),
        "  ",
        (f"{row.score:.2f} {GLYPH.get(row.outcome, '')} {row.outcome}", outcome_style(row.outcome)),
        "\n",
        (f"{row.task_id}", "bold"),
        f" · {plural(row.steps, 'step')}\n",
        (f"{short_time(row.recorded_at)} ({ago(row.recorded_at, now)})", "dim"),
        "\n\n",
        row.summary or Text("(no summary)", style="dim italic"),
        "\n",
    )
    if doc is None:
        return Group(head, Text("\nloading…", style="dim italic"))
    parts: list[Any] = [head]
    who = []
    if doc.get("agent_id"):
        who.append(f"agent {doc['agent_id']}")
    if doc.get("worker_id"):
        who.append(f"worker {doc['worker_id']}")
    if doc.get("session_id"):
        who.append(f"session {doc['session_id']}")
    if who:
        parts.append(Text(" · ".join(who), style="dim"))
    parts += _list_section("Mistakes", doc.get("mistakes", []), "red")
    parts += _list_section("Successes", doc.get("successes", []), "green")
    errors = doc.get("errors", [])
    if errors:
        parts.append(_title(f"Errors ({len(errors)})"))
        for error in errors:
            text = Text.assemble(
                (f"{error.get('error_type', 'Error')}", "bold red"),
                f": {error.get('message', '')}",
            )
            if error.get("error_type") == SYNTHESISED_TYPE:
                # The agent reported a failure without an error: memwork names it so the
                # context's past failures can warn of it, and the person should know
                # the class is memwork's word, not the agent's.
                text.append("\n  named by memwork (no error reported)", style="dim")
            if error.get("resolution"):
                text.append(f"\n  → {error['resolution']}", style="green")
            parts.append(text)
    if touched:
        parts.append(_title(f"Mistake cards ({len(touched)}) · c opens"))
        for card in touched:
            line = Text.assemble(
                (f"[{card['mistake_type']}]", "magenta"),
                f" seen {card['seen_count']}×",
            )
            if card.get("correct_decision"):
                line.append(f"\n  do: {card['correct_decision']}")
            line.append(f"\n  {card.get('lesson', '')}", style="italic")
            if card.get("merged_from_id"):
                line.append(f"\n  (merged into {card['id']})", style="dim")
            parts.append(line)
    elif doc.get("card_ids"):
        parts.append(_title("Mistake cards"))
        parts.append(Text("no longer in the store", style="dim italic"))
    metadata = doc.get("metadata") or {}
    if metadata:
        parts.append(_title("Metadata"))
        parts.append(Text("\n".join(f"{key}: {value}" for key, value in sorted(metadata.items()))))
    parts.append(Text(f"\n{doc['id']}", style="dim"))
    return Group(*parts)
