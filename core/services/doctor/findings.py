"""What ``memwork doctor`` finds, whatever the backend: one :class:`Check` per finding,
and the report every backend's checks make (:func:`verdict`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Check:
    """One finding."""

    name: str
    status: str  # ok | warn | problem
    detail: str


def verdict(checks: list[Check], store: str) -> dict[str, Any]:
    """The checks as JSON, with an overall verdict: ``ok`` when none is a problem."""
    return {
        "checks": [asdict(c) for c in checks],
        "ok": not any(c.status == "problem" for c in checks),
        "store": store,
    }
