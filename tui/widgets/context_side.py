"""The Context pane's side panel and the names it gives sections and sources.

Kept apart from the pane: it renders plain data (the JSON ``memwork context
--format json`` prints) into the panel's text, shaped to the panel's width.
"""

from __future__ import annotations

import textwrap
from typing import Any

from rich.text import Text

from .bars import plural

#: Names for sections the budget removed entirely (their headings are gone with them).
SECTION_NAMES = {
    "slots": "Pinned memory",
    "task_rules": "Rules for the task",
    "global": "General rules and lessons",
    "global_rules": "General rules",
    "mistakes": "Mistakes to avoid",
    "mistake_cards": "Mistake cards",
    "failures": "Past failures to avoid",
    "episodes": "Recent episodes",
    "mean_score": "Mean score",
}


def source_name(ref: dict[str, Any]) -> str:
    """``slot persona``, ``rule rule_…``, ``episode #12``, ``task deploy-api``."""
    if ref["kind"] == "slot" and ref.get("label"):
        return f"slot {ref['label']}"
    if ref["kind"] == "episode" and ref.get("index") is not None:
        return f"episode #{ref['index']}"
    return f"{ref['kind']} {ref['id']}"


def section_title(name: str, heading: str | None) -> str:
    """``## Pinned memory`` → ``Pinned memory``; ``Rules for x:`` → ``Rules for x``."""
    if heading:
        return heading.lstrip("#").strip().rstrip(":")
    return SECTION_NAMES.get(name, name.replace("_", " ").capitalize())


def render_side(data: dict[str, Any], width: int, theme: dict[str, str]) -> Text:
    """The side panel: the estimate against the budget, each section with its tokens,
    and what the budget dropped (lines shaped to the panel's ``width``)."""
    accent = theme.get("text-accent", "cyan")
    error = theme.get("text-error", "red")
    warning = theme.get("text-warning", "yellow")
    out = Text()
    tokens, budget = data["estimated_tokens"], data["budget_tokens"]
    out.append(f"~{tokens:,}", style=f"bold {error if tokens > budget else accent}")
    out.append(f" / {budget:,} tokens\n", style="bold")
    out.append("estimate: characters / 3\n", style="dim italic")
    if budget:
        used = min(1.0, tokens / budget)
        bar = max(10, min(30, width - 5))
        filled = round(used * bar)
        out.append("█" * filled, style=accent)
        out.append("░" * (bar - filled), style="dim")
        out.append(f" {used:.0%}\n", style="dim")
    out.append("\nSections\n", style=f"bold {accent}")
    if not data["sections"]:
        out.append("  (none)\n", style="dim")
    for section in data["sections"]:
        title = section_title(section["name"], section["heading"])
        line_count = len(section["lines"])
        count = plural(line_count, "line")
        one_line = len(title) + len(count) + 4 <= width
        out.append(f"  {title}")
        out.append(f"  {count}\n" if one_line else "\n", style="dim")
        out.append(f"    ~{section['estimated_tokens']:,} tokens", style=accent)
        out.append(" (estimate)\n", style="dim")
        if not one_line:
            out.append(f"    {count}\n", style="dim")
    dropped = data["dropped"]
    if not dropped:
        out.append("\nNothing dropped: ", style=f"bold {accent}")
        out.append("everything fits the budget.\n", style="dim")
        return out
    out.append(
        f"\nDropped by the budget ({plural(len(dropped), 'line')})\n", style=f"bold {warning}"
    )
    out.append("lowest priority first: episodes, lessons, cards, rules…\n", style="dim italic")
    if data.get("cut"):
        out.append(
            "Not one whole line fits: the first is cut short (…), so the agent still "
            "sees there is memory.\n",
            style=warning,
        )
    # Wrap by hand so a long dropped line keeps its indent (a hanging indent).
    by_section: dict[str, list[str]] = {}
    for item in dropped:
        by_section.setdefault(item["section"], []).append(item["line"])
    headings = {s["name"]: s["heading"] for s in data["sections"]}
    for name, lines in by_section.items():
        out.append(f"  {section_title(name, headings.get(name))}", style="bold")
        out.append(f"  −{len(lines)}\n", style=warning)
        for line in lines:
            wrapped = textwrap.wrap(
                line.strip(), width, initial_indent="    ", subsequent_indent="      "
            )
            out.append("\n".join(wrapped) + "\n", style="dim")
    return out
