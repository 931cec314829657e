"""The title line and the tab bar: which store this is, what waits for the curator,
and every pane's tab, in the room the terminal gives them.

The store's place comes first (where it is, so the person knows which memory they
are curating and can give the same path to an agent), then the counts with their
keys. When the line is too long for the header, the path is cut in the middle
(keeping its start and its last folder), then the counts shorten ("5 to review
(9)" → "5 review (9)"). The tabs name every pane in the room there is.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from textual.content import Content

if TYPE_CHECKING:
    from .panes.base import Pane

#: The key that opens the lint findings (shown beside their count).
LINT_KEY = "L"
#: The place is cut no shorter than this before the counts shorten their words.
PLACE_MIN = 24


def home_relative(path: str) -> str:
    """``/home/me/.local/share/memwork`` → ``~/.local/share/memwork``."""
    home = str(Path.home())
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path


def cut_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, an ellipsis in the middle (the end of a
    path, its folder's name, is what tells stores apart)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    tail = max(1, (width - 1) * 2 // 3)
    head = width - 1 - tail
    return text[:head] + "…" + text[len(text) - tail :]


def counts(pending: int, findings: int, *, short: bool) -> list[str]:
    """The waiting work with the keys that open it."""
    parts = []
    if pending:
        parts.append(f"{pending} review (9)" if short else f"{pending} to review (9)")
    if findings:
        noun = "lint" if short else f"lint finding{'' if findings == 1 else 's'}"
        parts.append(f"{findings} {noun} ({LINT_KEY})")
    return parts


def title_line(place: str, pending: int, findings: int, width: int) -> str:
    """The header's subtitle for a store at ``place`` in ``width`` characters: the place
    and the counts. Too long, the place is cut in the middle first (down to
    :data:`PLACE_MIN`, keeping its last folder), then the counts take their short
    words, then the place is cut further."""
    for short in (False, True):
        tail = counts(pending, findings, short=short)
        room = width - sum(len(part) + 3 for part in tail)
        if len(place) <= room or (room >= PLACE_MIN and len(place) > PLACE_MIN):
            return " · ".join([cut_middle(place, room), *tail])
    return " · ".join([cut_middle(place, max(room, 12)), *tail])


#: Cells a tab adds around its label: Textual's padding (one each side), or one in
#: the tight tab bar.
TAB_PADDING = {"full": 2, "short": 2, "tight": 1, "mini": 1}
#: Letters of a pane's name in the tightest tab bar (eleven panes in 80 columns).
MINI_LETTERS = 4


def tab_text(n: int, pane: type[Pane], fit: str) -> str:
    """A tab's label as plain text: ``1 Sessions``; ``3 Cards`` short; ``3Cards`` tight;
    ``1Sess`` mini."""
    name = pane.TITLE if fit == "full" else (pane.SHORT_TITLE or pane.TITLE)
    if fit == "mini":
        name = name[:MINI_LETTERS]
    return f"{pane.KEY or n}{'' if fit in ('tight', 'mini') else ' '}{name}"


def tab_labels(panes: Sequence[type[Pane]], width: int) -> str:
    """The widest way of naming the tabs ("full", "short", "tight", "mini") that fits
    ``width``."""
    for fit in ("full", "short", "tight"):
        need = sum(
            len(tab_text(n, p, fit)) + TAB_PADDING[fit] for n, p in enumerate(panes, start=1)
        )
        if need <= width:
            return fit
    return "mini"


def tab_label(n: int, pane: type[Pane], fit: str) -> Content:
    """The label of pane ``n``'s tab; in the tight bar its digit is set bold, so the key
    still reads apart from the name."""
    if fit not in ("tight", "mini"):
        return Content(tab_text(n, pane, fit))
    key = pane.KEY or str(n)
    return Content.assemble((key, "bold"), tab_text(n, pane, fit)[len(key) :])
