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


def recall_scoring() -> Check:
    """Whether this install built recall's compiled scoring loops (an install goes on
    without them where no C compiler is found, and every search is then slower)."""
    from ..recall.engine import compiled_scoring

    if compiled_scoring():
        return Check("recall scoring", "ok", "compiled (searches sum postings in C)")
    return Check(
        "recall scoring",
        "warn",
        "in Python: this install built no scoring loops (no C compiler when it was "
        "installed?); searches of a big store take about twice as long. Install again where a C "
        "compiler (cc) is found to build them",
    )


def verdict(checks: list[Check], store: str) -> dict[str, Any]:
    """The checks as JSON, with an overall verdict: ``ok`` when none is a problem (the
    install's own check, :func:`recall_scoring`, comes last)."""
    checks = [*checks, recall_scoring()]
    return {
        "checks": [asdict(c) for c in checks],
        "ok": not any(c.status == "problem" for c in checks),
        "store": store,
    }
