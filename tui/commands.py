"""Command palette providers: every action of every pane, and a search over all memory."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.messages import JumpTo

if TYPE_CHECKING:
    from tui.app import MemworkApp


def _actions(app: MemworkApp) -> Iterator[tuple[str, str, Any]]:
    """(title, help, callback) for every action reachable from a key."""
    from tui.pane_list import PANES

    for n, pane in enumerate(PANES, start=1):
        yield (f"Go to {pane.TITLE}", f"key {n}", partial(app.action_show_pane, pane.PANE_ID))
    for binding in app.BINDINGS:
        if (
            isinstance(binding, Binding)
            and binding.description
            and "show_pane" not in binding.action
        ):
            yield (
                binding.description,
                f"key {binding.key_display or binding.key}",
                partial(app.run_action, binding.action),
            )
    for pane_cls in PANES:
        for binding in getattr(pane_cls, "BINDINGS", []):
            if not isinstance(binding, Binding) or not binding.description:
                continue
            yield (
                f"{pane_cls.TITLE}: {binding.description}",
                f"key {binding.key_display or binding.key} in {pane_cls.TITLE}",
                partial(_run_in_pane, app, pane_cls.PANE_ID, binding.action),
            )


def _run_in_pane(app: MemworkApp, pane_id: str, action: str) -> None:
    app.action_show_pane(pane_id)

    async def run() -> None:
        await app.pane(pane_id).run_action(action)

    app.call_after_refresh(lambda: app.run_worker(run(), exclusive=False))


class ActionsProvider(Provider):
    """Every action, by the name the footer and help screen use."""

    @property
    def workbench(self) -> MemworkApp:
        return self.app  # type: ignore[return-value]

    async def discover(self) -> Hits:
        for title, help_text, callback in _actions(self.workbench):
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in _actions(self.workbench):
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)


class MemorySearchProvider(Provider):
    """Fuzzy search over all memory; choosing a hit jumps to the record."""

    @property
    def workbench(self) -> MemworkApp:
        return self.app  # type: ignore[return-value]

    async def search(self, query: str) -> Hits:
        from core.kinds import pane_of

        index = self.workbench.search_index
        if index is None or len(query.strip()) < 2:
            return
        for hit in index.search(query, limit=12):
            doc = hit.doc
            yield Hit(
                hit.score / 100,
                f"{doc.kind}: {doc.title}",
                partial(self.workbench.post_message, JumpTo(pane_of(doc.kind), doc.ref)),
                help="jump to the record",
            )
