"""The slot editor: the slot's label and description, a live character count against
its limit, one line that says what state the text is in, and the text area.

The Slots pane owns the drafts and the saving; this widget shows the state it is
handed (:meth:`SlotEditor.show_info`) and updates a line only when its content
changes, so typing stays cheap.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static, TextArea


class SlotEditor(Vertical):
    """Title, counter, state line and text area of the slot being edited."""

    DEFAULT_CSS = """
    SlotEditor {
        height: 1fr;
    }
    SlotEditor > #slot-editor-bar {
        height: 1;
        padding: 0 1;
        margin-top: 1;
    }
    SlotEditor #slot-title {
        width: 1fr;
        color: $text-accent;
    }
    SlotEditor #slot-counter {
        width: auto;
        color: $text-muted;
    }
    SlotEditor #slot-counter.over {
        color: $error;
        text-style: bold;
    }
    SlotEditor > #slot-note {
        height: auto;
        padding: 0 1;
        color: $text-muted;
        text-style: italic;
    }
    SlotEditor > #slot-note.warning {
        color: $warning;
    }
    SlotEditor > #slot-note.error {
        color: $error;
        text-style: bold;
    }
    SlotEditor > #slot-editor {
        height: 1fr;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._shown: dict[str, str | Text] = {}

    def compose(self) -> ComposeResult:
        with Horizontal(id="slot-editor-bar"):
            yield Static("", id="slot-title")
            yield Static("", id="slot-counter")
        yield Static("", id="slot-note", markup=False)
        yield TextArea(
            "",
            id="slot-editor",
            soft_wrap=True,
            read_only=True,
            placeholder="Select a slot to edit its text",
        )

    @property
    def text_area(self) -> TextArea:
        """Where the text is edited."""
        return self.query_one("#slot-editor", TextArea)

    def show_info(
        self,
        slot: dict[str, Any] | None,
        *,
        base: str,
        save_error: str,
        findings: list[dict[str, Any]] | tuple[dict[str, Any], ...] = (),
        agent: str = "",
    ) -> None:
        """Title, count and state line for ``slot`` (None: no slot selected).

        ``base`` is the slot's stored text when editing began; ``save_error`` the
        core's refusal of the last save ("" when none); ``findings`` its lint
        findings, said on the state line while nothing else needs saying; ``agent`` the
        Letta agent whose memory block the slot was imported from ("" when none).
        """
        title = self.query_one("#slot-title", Static)
        counter = self.query_one("#slot-counter", Static)
        note = self.query_one("#slot-note", Static)
        if slot is None:
            self._put(title, "")
            self._put(counter, "")
            self._put(note, "")
            return
        text = self.text_area.text
        self._put(
            title,
            Text.assemble(
                (slot["label"], "bold"),
                ("  " + slot["description"], "italic") if slot.get("description") else "",
                (f"  · Letta agent {agent} (a)", "dim") if agent else "",
            ),
        )
        size, limit = len(text), int(slot["limit"])
        over = size > limit
        self._put(counter, f"{size} / {limit}" + (f"  ({size - limit} over)" if over else ""))
        counter.set_class(over, "over")
        dirty = text != slot["content"]
        parts: list[str] = []
        kind = "muted"
        if save_error:
            parts.append(f"Not saved: {save_error}")
            kind = "error"
        elif slot.get("read_only"):
            parts.append("Read-only: set by the team; agents cannot change it. l unlocks it.")
        elif slot["over_limit"] and not dirty:
            parts.append(
                f"Imported over its limit: kept whole. Trim it to {limit} characters "
                "(an edit may shrink it but not make it longer)."
            )
        if findings and not dirty and not save_error:
            parts.append("Lint: " + "; ".join(f["message"] for f in findings))
            kind = "warning" if kind == "muted" else kind
        if dirty and not save_error:
            if slot["content"] != base:
                parts.append("Changed in the store since you started editing; ctrl+s overwrites.")
                kind = "warning"
            else:
                parts.append("Unsaved changes: ctrl+s saves, Esc keeps them as a draft.")
                kind = "warning" if kind == "muted" else kind
        # The note keeps its line even when empty, so the editor does not jump.
        self._put(note, " ".join(parts))
        note.set_class(kind == "error", "error")
        note.set_class(kind == "warning", "warning")

    def _put(self, widget: Static, content: str | Text) -> None:
        """Update a Static only when its content changes (typing must stay cheap)."""
        if self._shown.get(widget.id or "") != content:
            self._shown[widget.id or ""] = content
            widget.update(content)
