"""Crash reports, as the failure loop writes them, and what memwork keeps per fingerprint."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .base import Identifier, Record, Timestamp
from .episode import TEXT_MAX
from .limits import MAX_INT

#: Other names a report may use for a field (the failure loop's and common ones).
ALIASES = {
    "error_class": ("error_type", "exception", "exception_class"),
    "friction_kind": ("friction",),
    "stack_signature": ("signature", "stack"),
    "message": ("error_message",),
    "task_id": ("task",),
    "exit_code": ("exit", "returncode"),
    "phase": ("rarv_phase",),
}
#: Frames of a stack signature given as a list that are kept (the failure loop's own cut).
SIGNATURE_FRAMES = 5
#: How a signature given as a list of frames is written: outermost first.
FRAME_JOIN = " > "


class CrashReport(BaseModel):
    """What ``memwork record-failure`` takes: one crash of an agent's run.

    ``error_class`` is required, unless the report names a ``friction_kind`` (a run
    that went round in circles rather than raising): that kind is then the error's
    type, as the failure loop reads its own friction records. ``stack_signature`` is
    text, or the list of normalised frames the failure loop writes (its first five are
    kept, joined ``a > b > c``). Without a ``fingerprint`` every report is a failure of
    its own. Unknown keys are kept in the episode's metadata, as for episodes.
    """

    model_config = ConfigDict(extra="allow")

    error_class: str = Field(min_length=1, max_length=200)
    friction_kind: str = Field(default="", max_length=200)
    stack_signature: str = Field(default="", max_length=TEXT_MAX)
    fingerprint: str = Field(default="", max_length=1000)
    message: str = Field(default="", max_length=TEXT_MAX)
    task_id: Identifier = Field(default="unknown", min_length=1, max_length=200)
    phase: str = Field(default="", max_length=200)
    exit_code: int | None = Field(default=None, ge=-MAX_INT, le=MAX_INT)
    session_id: Identifier | None = Field(default=None, max_length=200)
    recorded_at: Timestamp | None = None

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for name, others in ALIASES.items():
            for other in others:
                if name not in data and other in data:
                    data[name] = data.pop(other)
        kind = data.get("friction_kind")
        named = data.get("error_class")
        if (named is None or named == "") and isinstance(kind, str) and kind.strip():
            data["error_class"] = kind.strip()
        return data

    @field_validator("stack_signature", mode="before")
    @classmethod
    def _frames(cls, value: Any) -> Any:
        if value is None:
            return ""
        if isinstance(value, list):
            if not all(isinstance(f, str | int | float) for f in value):
                raise ValueError("must be text or a list of frames (each a string)")
            return FRAME_JOIN.join(str(f).strip() for f in value[:SIGNATURE_FRAMES])
        return value

    @field_validator("error_class", "task_id")
    @classmethod
    def _stripped(cls, value: str) -> str:
        stripped = value.strip()
        if not stripped:
            raise ValueError("must not be blank")
        return stripped

    @field_validator("phase", mode="before")
    @classmethod
    def _phase_text(cls, value: Any) -> Any:
        # Phases are names ("VERIFY") or step numbers; either is kept as text.
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("exit_code", mode="before")
    @classmethod
    def _exit_whole(cls, value: Any) -> Any:
        if isinstance(value, bool) or (value is not None and not isinstance(value, int)):
            raise ValueError(f"must be a whole number (got {value!r})")
        return value


class Crash(Record):
    """One fingerprint's record: the failed episode it became and how often it came."""

    crash_fingerprint: str
    episode_id: Identifier
    index: int = Field(ge=1, le=MAX_INT)
    task_id: Identifier
    error_type: str
    count: int = Field(ge=1, le=MAX_INT)
    first_seen_at: Timestamp
    last_seen_at: Timestamp
