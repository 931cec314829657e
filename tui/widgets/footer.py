"""The footer: the focused pane's most useful keys, whole, with Help, Search and Quit
always in view.

Textual's footer lists the focused widget's keys first and the app's last, and cuts
the row at the right edge: in an 80-column terminal the Sessions footer ended
"c Checkpoint e", hiding End, New, Work, Forget and Quit. Here Help, Search and
Quit sit at the right, in one group with the command palette's key, and the
pane's keys fill the room left of them in the order the pane declares them (its
most useful first). A key that would not fit whole is left out, with every key
after it: ``?`` lists them all.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.containers import HorizontalGroup
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: App actions whose keys never leave the footer, in the order they are shown.
ALWAYS_SHOWN = ("help", "search", "quit_safely")
#: Columns the right-hand group takes besides its keys (its left border).
RIGHT_BORDER = 1


def key_width(key: FooterKey) -> int:
    """Columns a compact footer key takes: its key, a space and its name, then a gap."""
    width = cell_len(key.key_display)
    if key.description:
        width += 1 + cell_len(key.description)
    return width + 1


def fitting(widgets: list[Widget], room: int) -> list[Widget]:
    """The leading ``widgets`` that fit whole in ``room`` columns (order kept: a pane
    declares its most useful keys first)."""
    kept: list[Widget] = []
    for widget in widgets:
        if isinstance(widget, FooterKey):
            room -= key_width(widget)
            if room < 0:
                break
        kept.append(widget)
    return kept


class WorkbenchFooter(Footer):
    """A compact footer whose keys are never cut and whose Help, Search and Quit keys
    stay on screen at any width."""

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

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        #: The width the keys were last fitted to (a resize to another one refits them).
        self.fitted_width = 0
        #: What the keys shown were made from (:meth:`keys_wanted` when last composed).
        self.shown: tuple[object, ...] | None = None

    def keys_wanted(self) -> tuple[object, ...]:
        """Everything the footer's keys are made from: the screen's shown bindings (key,
        name, action, whether enabled, tooltip), the palette's, and the width."""
        active = self.screen.active_bindings
        shown = tuple(
            (b.key, self.app.get_key_display(b), b.description, b.action, on, tip, b.group)
            for (_, b, on, tip) in active.values()
            if b.show
        )
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        return (shown, palette[2] if palette else None, self.size.width or self.app.size.width)

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Refit the keys when the bindings changed what they show.

        Textual's footer recomposes on every change of the focus or of an action's
        state, mounting and styling a dozen keys again (a form's field moving the focus,
        a list's cursor refreshing the bindings); mostly the same keys.
        """
        self._bindings_ready = True
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self.call_after_refresh(self._refit)

    async def _refit(self) -> None:
        if self.is_attached and self.keys_wanted() != self.shown:
            await self.recompose()

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self.shown = self.keys_wanted()
        widgets: list[Widget] = list(super().compose())
        kept = [w for w in widgets if isinstance(w, FooterKey) and w.action in ALWAYS_SHOWN]
        kept.sort(key=lambda w: ALWAYS_SHOWN.index(w.action))
        palette = [
            w for w in widgets if isinstance(w, FooterKey) and w.has_class("-command-palette")
        ]
        for widget in palette:
            # Textual docks this key at the right on its own; here the group does.
            widget.remove_class("-command-palette")
            widget.add_class("-palette")
        right: list[Widget] = [*kept, *palette]
        left = [w for w in widgets if w not in right]
        width = self.size.width or self.app.size.width
        self.fitted_width = width
        if width:
            room = width - RIGHT_BORDER - sum(key_width(w) for w in kept)
            room -= sum(key_width(w) + 1 for w in palette)  # its padding for the margin
            left = fitting(left, room)
        yield from left
        if right:
            yield HorizontalGroup(*right, id="footer-right")

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self.fitted_width:
            self.call_after_refresh(self.recompose)
