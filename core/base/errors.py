"""Errors that reach the user as a one-line message and an exit code.

The CLI maps :class:`UserError` to exit code 2 and anything else to 1, so a
user mistake never shows a traceback.
"""

from __future__ import annotations

PREFIX = "memwork: "


class MemworkError(Exception):
    """Base class of every error memwork raises on purpose."""


def worded(exc: BaseException) -> str:
    """The one line the CLI prints for ``exc``: ``memwork: <message>`` (never twice)."""
    text = str(exc)
    return text if text.startswith(PREFIX) else PREFIX + text


class UserError(MemworkError):
    """Invalid input, a missing record or a failed precondition (exit code 2)."""


class InvalidInput(UserError):
    """A value broke a rule; the message names the field and the rule."""

    def __init__(self, field: str, rule: str, *, item: int | None = None) -> None:
        self.field = field
        self.rule = rule
        self.item = item
        prefix = f"item {item}: " if item is not None else ""
        super().__init__(f"{prefix}{field}: {rule}")


class NotFound(UserError):
    """The record a command names does not exist."""

    def __init__(self, what: str, key: str) -> None:
        self.what = what
        self.key = key
        super().__init__(f"{what} not found: {key}")


class Conflict(UserError):
    """The operation would break a precondition (duplicate, read-only, over limit...)."""


class ReadOnlyView(Conflict):
    """A write through a read-only view of the store (``Memory.tinydb()``); nothing was
    written. The message (worded as the Python API words errors: ``memwork: ...``) names
    what writes instead: ``Memory``'s methods or the CLI."""

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(
            f"{PREFIX}{what}: Memory.tinydb() is a read-only view of the store and nothing was "
            "written; write through Memory's methods (record_episode, add_lesson, set_slot, "
            "forget, ...) or the memwork CLI, which keep the store's lock, log and audit"
        )


class StoreError(MemworkError):
    """The store cannot be used safely; nothing was written."""


class StoreUnreadable(StoreError, UserError):
    """The store or a file in it cannot be used as it is (unparseable, a symbolic link,
    a damaged journal, not a folder); it is left untouched."""


class StoreUnreachable(StoreUnreadable):
    """The store's server does not answer (a Redis store whose server is stopped or out of
    reach); nothing was written. Working memory in a long-lived process goes on in the
    process's memory (:mod:`core.ops.wm_fallback`); everything else is refused with this."""


class StoreTooNew(StoreError, UserError):
    """The store was written by a newer memwork; it is left untouched."""


class NoStore(StoreUnreadable):
    """A command that only reads names a path where no store exists; nothing was created."""

    def __init__(self, path: object) -> None:
        self.path = path
        super().__init__(f"no memwork store at {path}")


class CoercionWarning(UserWarning):
    """Input was read as the episodic library reads it (a missing score taken as 0.0, a
    number given as text…): accepted, and said (the Python API's form of the CLI's
    stderr notes and JSON ``warnings``)."""


class StoreWriteFailed(StoreError, UserError):
    """The store cannot be written (read-only, permissions, a full disk); nothing was written."""


class ModelFailed(MemworkError):
    """The configured model endpoint failed or answered something memwork cannot use
    (exit code 1); nothing was written. The message names the endpoint by its address
    without credentials and says what went wrong."""
