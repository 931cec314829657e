"""A session's working memory: keys with optional TTL, task state, scratchpad, checkpoints.

All of a session's working memory lives in one physical table,
``working_memory.<session_id>``: one ``state`` document and one document per
working-memory checkpoint.
"""

from __future__ import annotations

import math
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .base import Identifier, Record, Timestamp
from .limits import MAX_INT
from .session import SessionId

STATE_ID: Final = "state"
SCRATCH_CAPACITY = 1000
KEY_MAX = 200
DEFAULT_TASK_ID = "unknown"
DEFAULT_TASK_STATUS = "in_progress"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class WMEntry(_Strict):
    """One key's value; ``expires_at`` is None for keys without a TTL."""

    value: Any
    set_at: Timestamp
    expires_at: Timestamp | None = None


class TaskState(_Strict):
    """What the agent is doing now; ``progress_percent`` is always within 0–100."""

    task_id: Identifier = Field(default=DEFAULT_TASK_ID, min_length=1, max_length=200)
    description: str = Field(default="", max_length=2000)
    status: str = Field(default=DEFAULT_TASK_STATUS, min_length=1, max_length=50)
    current_step: int | None = Field(default=None, ge=0, le=MAX_INT)
    total_steps: int | None = Field(default=None, ge=1, le=MAX_INT)
    progress_percent: float = Field(default=0.0, ge=0.0, le=100.0)
    #: The caller set ``progress_percent`` itself: step updates no longer re-derive
    #: it. None on tasks stored before this was recorded (it is then inferred).
    progress_given: bool | None = None
    started_at: Timestamp
    updated_at: Timestamp

    @field_validator("progress_percent", mode="before")
    @classmethod
    def _finite(cls, value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"must be a finite number (got {value})")
        return value


class ScratchEntry(_Strict):
    """One timestamped scratchpad line."""

    ts: Timestamp
    text: str = Field(min_length=1)


class WMState(_Strict):
    """The ``state`` document of a session's working memory."""

    id: Literal["state"] = STATE_ID
    session_id: SessionId
    kv: dict[str, WMEntry] = Field(default_factory=dict)
    task: TaskState | None = None
    scratchpad: list[ScratchEntry] = Field(default_factory=list)
    scratch_capacity: int = Field(default=SCRATCH_CAPACITY, ge=1, le=MAX_INT)
    created_at: Timestamp
    updated_at: Timestamp

    def to_doc(self) -> dict[str, Any]:
        """The JSON-ready document the store keeps."""
        return self.model_dump(mode="json")


class WMSnapshot(_Strict):
    """What a working-memory checkpoint keeps."""

    kv: dict[str, WMEntry] = Field(default_factory=dict)
    task: TaskState | None = None
    scratchpad: list[ScratchEntry] = Field(default_factory=list)


class WMCheckpoint(Record):
    """A working-memory checkpoint: a copy of one session's working memory (id: a full uuid4)."""

    session_id: SessionId
    kind: Literal["checkpoint"] = "checkpoint"
    description: str = Field(default="", max_length=2000)
    seq: int = Field(ge=1, le=MAX_INT)
    state: WMSnapshot


class WMScope(_Strict):
    """Keys shared above the session: one document per scope (``project:<P>`` or
    ``agent:<A>``) in the ``wm_scopes`` table, its id the scope."""

    id: str = Field(min_length=1, max_length=220)
    scope: str = Field(min_length=1, max_length=220)
    kv: dict[str, WMEntry] = Field(default_factory=dict)
    created_at: Timestamp
    updated_at: Timestamp

    @field_validator("scope")
    @classmethod
    def _scope(cls, value: str) -> str:
        kind, sep, name = value.partition(":")
        if not sep or kind not in ("project", "agent") or not name.strip():
            raise ValueError(f"must be project:<project> or agent:<agent> (got {value[:60]!r})")
        return value

    @model_validator(mode="after")
    def _keyed_by_scope(self) -> WMScope:
        if self.id != self.scope:
            raise ValueError(f"id must be the scope {self.scope!r} (got {self.id[:60]!r})")
        return self

    def to_doc(self) -> dict[str, Any]:
        """The JSON-ready document the store keeps."""
        return self.model_dump(mode="json")
