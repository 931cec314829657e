"""Project profiles: what a project is, kept once and shown in its context.

A profile is slot-like: one block of text per project, with a limit (2,000
characters by default, like a slot's). ``memwork context --project P`` shows
P's profile right after the pinned slots. An edit past the limit is refused,
never cut. The text is curated like a slot's: secrets are removed, personal
details a person wrote stay. While the store's review is on, an agent's
``profile set`` waits for a person (:mod:`core.services.review`), as a slot edit does.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..base import ids
from ..base.clock import iso
from ..base.errors import InvalidInput, NotFound
from ..base.text import one_line
from ..ledger import audit
from ..privacy import identifier_problem, scrub
from ..storage.store import Store

TABLE = "profiles"
DEFAULT_LIMIT = 2000
PROJECT_MAX = 200


def check_project(project: str) -> str:
    """A project name as profiles key it: trimmed, not empty, no secret."""
    name = project.strip() if isinstance(project, str) else ""
    if not name:
        raise InvalidInput("project", "must not be empty")
    if len(name) > PROJECT_MAX:
        raise InvalidInput("project", f"must be at most {PROJECT_MAX} characters")
    problem = identifier_problem(name)
    if problem:
        raise InvalidInput("project", problem)
    return name


def find(store: Store, project: str) -> dict[str, Any] | None:
    """The profile of ``project``, or None (call inside a read)."""
    if not store.has_table(TABLE):
        return None
    for doc in store.docs(TABLE).values():
        if doc["project"] == project:
            return dict(doc)
    return None


def view(doc: dict[str, Any]) -> dict[str, Any]:
    """The profile plus ``chars`` and ``over_limit``."""
    chars = len(doc.get("content", ""))
    return {**doc, "chars": chars, "over_limit": chars > int(doc["limit"])}


def show(store: Store, project: str) -> dict[str, Any]:
    """The ``get_profile`` operation: one project's profile (``NotFound`` when none)."""
    name = check_project(project)
    with store.reading():
        found = find(store, name)
    if found is None:
        raise NotFound("profile", name)
    return view(found)


def list_profiles(store: Store) -> list[dict[str, Any]]:
    """Every profile, by project."""
    with store.reading():
        docs = list(store.docs(TABLE).values()) if store.has_table(TABLE) else []
    return [view(d) for d in sorted(docs, key=lambda d: d["project"])]


def preview(store: Store, project: str, text: str, *, limit: int | None = None) -> dict[str, Any]:
    """What setting ``project``'s profile to ``text`` would do, checked as the write is:
    ``{"project", "before", "after", "limit", "exists"}`` (call inside a read)."""
    name = check_project(project)
    content = scrub(text, personal=False).strip() if isinstance(text, str) else ""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidInput("limit", f"must be a whole number >= 1 (got {limit!r})")
    existing = find(store, name)
    cap = limit if limit is not None else int(existing["limit"]) if existing else DEFAULT_LIMIT
    if len(content) > cap:
        raise InvalidInput(
            "text",
            f"{len(content)} characters is over the profile's limit of {cap} "
            "(shorten it, or raise --limit)",
        )
    return {
        "project": name,
        "before": existing["content"] if existing else "",
        "after": content,
        "limit": cap,
        "exists": existing is not None,
    }


def set_profile(
    store: Store,
    project: str,
    text: str,
    *,
    limit: int | None = None,
    now: datetime,
    actor: str,
) -> dict[str, Any]:
    """Create or replace ``project``'s profile (empty text keeps an empty profile)."""
    from ..models.base import validate
    from ..models.profile import Profile

    with store.transaction():
        plan = preview(store, project, text, limit=limit)
        existing = find(store, plan["project"])
        stamp = iso(now)
        doc = {
            "id": existing["id"] if existing else ids.new_id("prof"),
            "project": plan["project"],
            "content": plan["after"],
            "limit": plan["limit"],
            "created_at": existing["created_at"] if existing else stamp,
            "updated_at": stamp,
        }
        saved = validate(Profile, doc).to_doc()
        store.put(TABLE, saved["id"], saved)
        audit.record(
            store,
            actor=actor,
            action="set",
            table=TABLE,
            record_id=saved["id"],
            summary=f"set profile {plan['project']}: {one_line(plan['after'])[:100]}",
            now=now,
        )
    return view(saved)
