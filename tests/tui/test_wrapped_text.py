"""The Context pane's preview keeps its text wrapped to its width, even when a layout
gives it a size without a Resize event (text loaded while its pane was hidden)."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult

from memwork.tui.widgets.wrapped_text import WrappedTextArea

LONG = "You are Atlas, a careful SRE agent. You explain what you changed and why. " * 3


class _Shown(App[None]):
    def compose(self) -> ComposeResult:
        yield WrappedTextArea(LONG, read_only=True, soft_wrap=True)


def test_text_wrapped_at_no_width_is_wrapped_again_by_the_next_layout() -> None:
    asyncio.run(_wrapped_again())


async def _wrapped_again() -> None:
    app = _Shown()
    async with app.run_test(size=(60, 10)) as pilot:
        area = app.query_one(WrappedTextArea)
        await pilot.pause()
        wrapped_lines = area.wrapped_document.height
        assert wrapped_lines > 1
        # As if loaded while hidden: wrapped at no width, so one long line.
        area.wrapped_document.wrap(0)
        assert area.wrapped_document.height == 1
        area.refresh(layout=True)  # a layout, no Resize: the size did not change
        await pilot.pause()
        await pilot.pause()
        assert area.wrapped_document.height == wrapped_lines
