"""The ``set_config`` operation: a setting changed with the guards review and isolation need.

Kept apart from :mod:`core.ledger.config` (which reads and writes settings, and which
isolation and the curator read) so that the settings sit below what guards them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..storage.store import Store
from .config import check_key, is_on, set_value
from .curator import Curator, NotCurator, check, ensure_key_file, registered
from .isolation import viewer


def set_op(
    store: Store,
    key: str,
    new: str,
    *,
    now: datetime,
    actor: str,
    curator: Curator | None = None,
) -> dict[str, Any]:
    """The ``set_config`` operation: ``{"key", "value", "previous"}``.

    Turning review on registers a curator when the store has none: the key given, else
    the user's key file (made when missing; its path is in ``curator_key``), so that
    someone can decide. An isolated agent does not lift its own isolation (a person may).
    Turning review off is a decision the review queue holds (the operation's
    declaration says so; :mod:`core.ops.runner` applies it).
    """
    check_key(key)
    wanted = new.strip().lower() if isinstance(new, str) else new
    with store.transaction():
        if key == "isolation" and wanted == "shared" and viewer(store) is not None:
            raise NotCurator(
                "isolation: turning agent isolation off takes the store's curator key "
                "(--curator-key FILE); nothing was changed"
            )
        registration: dict[str, Any] | None = None
        if key == "review" and wanted == "on" and not is_on(store, "review"):
            if curator is None and registered(store) is None:
                curator, _ = ensure_key_file()
                registration = {"file": curator.source}
            if curator is not None:
                check(store, curator, now=now, actor=actor, what="turning review on")
        done = set_value(store, key, new, now=now, actor=actor)
        if registration is not None:
            done["curator_key"] = registration
        return done
