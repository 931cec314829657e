"""Panes stay small rooms: a pane that grows past 500 lines gets its widgets split out."""

from __future__ import annotations

from pathlib import Path

import memwork.tui.panes

LIMIT = 500


def test_no_pane_module_is_over_500_lines() -> None:
    folder = Path(memwork.tui.panes.__file__).parent
    sizes = {p.name: len(p.read_text().splitlines()) for p in folder.glob("*.py")}
    assert len(sizes) > 10, sizes  # the panes are where this test looks
    assert {name: n for name, n in sizes.items() if n > LIMIT} == {}
