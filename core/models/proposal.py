"""Proposals: agents' lesson adds and edits, card edits, slot edits and rule adds waiting
for a person's review, and the changes that would get around review (turning it off,
restoring a checkpoint taken while it was off)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .base import Record

ProposalKind = Literal["lesson", "slot", "card", "rule", "config", "checkpoint", "profile"]
ProposalOp = Literal["add", "set", "append", "replace", "edit", "restore"]
Status = Literal["pending", "approved", "rejected", "merged"]


class Proposal(Record):
    """One change an agent asked for, and what a person decided about it."""

    kind: str = Field(min_length=1)
    """What it changes (:data:`ProposalKind`, or the first CLI word of another operation
    declared ``review=True``)."""
    op: str = Field(min_length=1)
    """How (:data:`ProposalOp`, or the rest of that operation's CLI words)."""
    target: str = Field(min_length=1)
    """The lesson's or rule's scope (an add), the edited lesson's or card's id, the slot's
    label, the setting, the checkpoint, or the profile's project."""
    args: dict[str, Any]
    """The arguments of the write, checked and scrubbed (the operation's parameters, under
    the queue's names: ``core.services.review.SHOWN``)."""
    operation: str | None = None
    """The operation approving it runs (:mod:`core.ops.operations`), when ``kind`` and
    ``op`` do not name it (an operation the queue has no words of its own for: ``args``
    are its parameters). Left out of the stored record when None, so a proposal of a
    known write is stored as older memwork stores it."""
    status: Status = "pending"
    proposed_by: str
    decided_by: str | None = None
    decided_at: str | None = None
    why: str = ""
    """A rejection's reason."""
    edited: bool = False
    """Approved with the reviewer's own text instead of the agent's."""
    result_id: str | None = None
    """The lesson or slot the decision wrote (approved or merged)."""
    result: str = ""
    """What the decision did, in one line."""


OnOff = Literal["on", "off"]


class StoreConfig(BaseModel):
    """``meta/config``: the store settings (``core.ledger.config``); a key never set is absent."""

    model_config = ConfigDict(extra="forbid")

    id: Literal["config"]
    review: OnOff | None = None
    context_log: OnOff | None = None
    embedder: Literal["off", "wordllama"] | None = None
    #: ``off`` or whole seconds, as text (``core.ledger.config.NUMERIC``).
    wm_default_ttl: str | None = Field(default=None, pattern=r"^(off|[1-9][0-9]{0,9})$")
