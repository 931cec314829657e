"""A read-only text area whose soft wrap always follows the width it is shown at."""

from __future__ import annotations

from textual.geometry import Size
from textual.widgets import TextArea


class WrappedTextArea(TextArea):
    """A :class:`TextArea` that keeps its lines wrapped to its width.

    Textual wraps again on a Resize event, and sends none for some of the sizes a
    layout passes through (the same gap :mod:`.virtual_table` closes): text loaded
    while its pane was hidden (no width: nothing wrapped) could be shown with its
    lines cut at the edge. After every size a layout gives it, once the layout has
    landed, the text is wrapped again if the width it was wrapped at is not the one
    it has.
    """

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        changed = super()._size_updated(size, virtual_size, container_size, layout)
        self.call_after_refresh(self._keep_wrap)
        return changed

    def _keep_wrap(self) -> None:
        # The region a wrap width comes from is the new one only after the refresh.
        if self.soft_wrap and self.wrapped_document._width != self.wrap_width:
            self._rewrap_and_refresh_virtual_size()
