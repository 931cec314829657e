"""The Work view's forms: add a work item, edit one (title, priority, a note, more
dependencies).

Both write through the operation runner (``action add`` / ``action update``), as
the CLI does, so the audit log, isolation and review treat the workbench like
any other door. A refusal (an empty title, a priority that is not a number, a
dependency that is unknown or would close a cycle) shows under the fields and
the form stays open, nothing saved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.base.errors import InvalidInput
from ...core.base.text import clip
from .form import Field, FormScreen

if TYPE_CHECKING:
    from .work import WorkScreen

Doc = dict[str, Any]

AFTER_HELP = "titles or ids (or an id's last characters) of other work items, comma separated"


def priority_of(text: str) -> int:
    """The typed priority as a number (empty is 0)."""
    value = text.strip()
    if not value:
        return 0
    try:
        return int(value)
    except ValueError:
        raise InvalidInput("priority", f"must be a whole number (got {value!r})") from None


def after_refs(text: str, rows: list[Doc]) -> list[str]:
    """The typed dependencies as references the runner resolves: an exact title (any
    case) becomes that item's id; anything else goes on as typed (an id, or its start or
    end), so an unknown one is refused by name."""
    by_title: dict[str, list[str]] = {}
    for row in rows:
        by_title.setdefault(row["title"].casefold(), []).append(row["id"])
    refs = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        found = by_title.get(part.casefold(), [])
        refs.append(found[0] if len(found) == 1 else part)
    return refs


def add_item(screen: WorkScreen) -> None:
    """Ask for a new work item and add it (pending)."""
    rows = screen.rows

    async def submit(values: dict[str, str]) -> Any:
        params: dict[str, Any] = {
            "title": values["title"],
            "priority": priority_of(values["priority"]),
            "after": after_refs(values["after"], rows),
        }
        if values["project"].strip():
            params["project"] = values["project"].strip()
        made = await screen.workbench.write(
            "action_create",
            form=True,
            done=lambda r: f"Added “{clip(r.get('title', ''), 40)}”",
            **params,
        )
        if isinstance(made, dict) and made.get("id"):
            screen.select_after_load(made["id"])
        return made

    selected = screen.selected()
    screen.app.push_screen(
        FormScreen(
            "Add a work item",
            [
                Field("title", "Title", placeholder="what to do, in one line"),
                Field("priority", "Priority", "0", help="higher goes first"),
                Field("project", "Project", (selected or {}).get("project") or ""),
                Field("after", "Waits for", help=AFTER_HELP),
            ],
            submit,
            save_label="Add",
        )
    )


def edit_item(screen: WorkScreen, row: Doc) -> None:
    """Edit the selected work item: title, priority, a new note, more dependencies. Only
    what changed is sent (a note and dependencies are added, never replaced)."""
    rows = screen.rows

    async def submit(values: dict[str, str]) -> Any:
        params: dict[str, Any] = {}
        if values["title"].strip() != row["title"]:
            params["title"] = values["title"]
        priority = priority_of(values["priority"])
        if priority != (row.get("priority") or 0):
            params["priority"] = priority
        if values["note"].strip():
            params["note"] = values["note"]
        after = [a for a in after_refs(values["after"], rows) if a not in row["after"]]
        if after:
            params["after"] = after
        if not params:
            screen.app.notify("Nothing changed", timeout=3)
            return True
        return await screen.workbench.write(
            "action_update",
            action=row["id"],
            form=True,
            done=f"“{clip(values['title'].strip() or row['title'], 40)}” updated",
            **params,
        )

    waits = ", ".join(
        next((r["title"] for r in rows if r["id"] == dep), dep) for dep in row["after"]
    )
    screen.app.push_screen(
        FormScreen(
            f"Edit “{clip(row['title'], 60)}”",
            [
                Field("title", "Title", row["title"]),
                Field("priority", "Priority", str(row.get("priority") or 0)),
                Field("note", "Add a note", multiline=True, help="kept with its time"),
                Field(
                    "after",
                    "Also waits for",
                    help=f"{AFTER_HELP}; now waits for: {clip(waits, 120) or 'nothing'}",
                ),
            ],
            submit,
        )
    )
