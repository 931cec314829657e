"""Store checkpoints: named snapshots of every table."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .base import Timestamp


class Checkpoint(BaseModel):
    """A snapshot's header; the tables themselves live in its own folder."""

    model_config = ConfigDict(extra="forbid")

    id: str
    description: str = ""
    created_at: Timestamp
    counts: dict[str, int] = Field(default_factory=dict)
    automatic: bool = False
