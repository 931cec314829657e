"""The footer: the focused pane's keys, with Help and Search always in view.

Textual's footer lists the focused widget's keys first and the app's last, so in
an 80-column terminal the app's own keys (``?`` Help, ``/`` Search) were the
first to fall off the right edge. Here they sit at the right, in one group with
the command palette's key, and the pane's keys fill the room left of them.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import HorizontalGroup
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: App actions whose keys never leave the footer, in the order they are shown.
ALWAYS_SHOWN = ("help", "search")


class WorkbenchFooter(Footer):
    """A compact footer whose Help and Search keys stay on screen at any width."""

    DEFAULT_CSS = """
    WorkbenchFooter > #footer-right {
        dock: right;
        width: auto;
        height: 1;
        border-left: vkey $foreground 20%;
    }
    WorkbenchFooter > #footer-right > FooterKey {
        margin-right: 1;
    }
    WorkbenchFooter > #footer-right > FooterKey.-palette {
        margin-right: 0;
        padding-right: 1;
    }
    """

    def compose(self) -> ComposeResult:
        widgets: list[Widget] = list(super().compose())
        kept = [w for w in widgets if isinstance(w, FooterKey) and w.action in ALWAYS_SHOWN]
        kept.sort(key=lambda w: ALWAYS_SHOWN.index(w.action))
        palette = [w for w in widgets if w.has_class("-command-palette")]
        for widget in palette:
            # Textual docks this key at the right on its own; here the group does.
            widget.remove_class("-command-palette")
            widget.add_class("-palette")
        yield from (w for w in widgets if w not in kept and w not in palette)
        if kept or palette:
            yield HorizontalGroup(*kept, *palette, id="footer-right")
