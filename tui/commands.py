"""Command palette providers: every action of every pane, and a search over all memory."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher
from textual.markup import escape
from textual.worker import WorkerCancelled, WorkerFailed

from .messages import JumpTo

if TYPE_CHECKING:
    from .app import MemworkApp
    from .panes.base import Pane


def _actions(app: MemworkApp) -> Iterator[tuple[str, str, Any]]:
    """(title, help, callback) for every action reachable from a key, each once."""
    from .pane_list import PANES, pane_key

    for n, pane in enumerate(PANES, start=1):
        yield (
            f"Go to {pane.TITLE}",
            f"key {pane_key(n, pane)}",
            partial(app.action_show_pane, pane.PANE_ID),
        )
    # An action bound to two keys (q and ctrl+q) is one entry that names both.
    keys: dict[str, list[str]] = {}
    titles: dict[str, str] = {}
    for binding in app.BINDINGS:
        if (
            isinstance(binding, Binding)
            and binding.description
            and "show_pane" not in binding.action
        ):
            keys.setdefault(binding.action, []).append(binding.key_display or binding.key)
            titles.setdefault(binding.action, binding.description)
    for action, title in titles.items():
        yield (title, f"key {' / '.join(keys[action])}", partial(app.run_action, action))
    for pane_cls in PANES:
        for binding in getattr(pane_cls, "BINDINGS", []):
            if not isinstance(binding, Binding) or not binding.description:
                continue
            yield (
                f"{pane_cls.TITLE}: {binding.description}",
                f"key {binding.key_display or binding.key} in {pane_cls.TITLE}",
                partial(_run_in_pane, app, pane_cls, binding.action),
            )


def plain_highlight(matcher: Matcher, text: str) -> Content:
    """``text`` as typed (never markup: a rule's ``[AVOID]`` stays), its matched
    letters highlighted as the palette does."""
    content = Content(text)
    score, offsets = matcher.fuzzy_search.match(matcher.query, text)
    if score:
        for offset in offsets:
            if not text[offset].isspace():
                content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


def _run_in_pane(app: MemworkApp, pane_cls: type[Pane], action: str) -> None:
    pane_id = pane_cls.PANE_ID
    unseen = pane_id != app.active_pane
    app.action_show_pane(pane_id)
    if unseen and action.partition("(")[0] not in pane_cls.PALETTE_ANYWHERE:
        # The pane's selection was out of sight when the palette was opened (chosen
        # there some time before): an action on it would hit a record the user never
        # saw. Show the pane and let the user pick the record first.
        app.notify(
            f"Select one here, then press {pane_cls.key_name(action)}",
            title=pane_cls.TITLE,
            timeout=6,
        )
        return

    async def run() -> None:
        pane = await app.attached_pane(pane_id)
        # App.run_action says whether the action ran (Widget.run_action, which calls it
        # with the widget as namespace, returns None).
        if not await app.run_action(action, pane):
            # Not where the focus is (a lesson key with the rules list focused): say so.
            await pane.run_action(f"explain({action!r})")

    app.call_after_refresh(lambda: app.run_worker(run(), exclusive=False))


class ActionsProvider(Provider):
    """Every action, by the name the footer and help screen use."""

    @property
    def workbench(self) -> MemworkApp:
        return self.app  # type: ignore[return-value]

    async def discover(self) -> Hits:
        for title, help_text, callback in _actions(self.workbench):
            yield DiscoveryHit(Content(title), callback, help=escape(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in _actions(self.workbench):
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, plain_highlight(matcher, title), callback, help=escape(help_text))


class MemorySearchProvider(Provider):
    """Fuzzy search over all memory; choosing a hit jumps to the record."""

    @property
    def workbench(self) -> MemworkApp:
        return self.app  # type: ignore[return-value]

    async def startup(self) -> None:
        # Records written since the index was built (by an agent, or in the workbench)
        # must be found: the index is rebuilt first when the store has moved.
        worker = self.workbench.refresh_search_index(only_if_stale=True)
        try:
            await worker.wait()
        except (WorkerFailed, WorkerCancelled):
            pass  # the previous index still answers

    async def search(self, query: str) -> Hits:
        from ..core.models.kinds import pane_of

        index = self.workbench.search_index
        if index is None or len(query.strip()) < 2:
            return
        matcher = self.matcher(query)
        for hit in index.search(query, limit=12):
            doc = hit.doc
            yield Hit(
                hit.score / 100,
                plain_highlight(matcher, f"{doc.kind}: {doc.title}"),
                partial(self.workbench.post_message, JumpTo(pane_of(doc.kind), doc.ref)),
                text=f"{doc.kind}: {doc.title}",
                help="jump to the record",
            )
