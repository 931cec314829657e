"""Audit entries: one line per mutation, who did it and to what."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .base import Identifier, Timestamp
from .limits import MAX_INT


class AuditEntry(BaseModel):
    """What changed, when, and by whom (tui|cli|api|mcp, plus the agent id when known)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    seq: int = Field(ge=1, le=MAX_INT)
    ts: Timestamp
    actor: Identifier
    action: str
    table: str
    record_id: str
    summary: str
    #: What the scrubber redacted from the change's input, by kind (absent when nothing).
    redactions: dict[str, int] | None = None
    #: The import that brought this entry from another store's log (absent: it happened
    #: here).
    imported: str | None = None
