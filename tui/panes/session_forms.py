"""The Sessions pane's forms and confirmations: one function per action.

Each builds its screen from the selected session and runs the change through
the app's single write path (:meth:`tui.app.MemworkApp.write`): a refusal shows
in the open form, a success toasts and refreshes the panes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.base.errors import InvalidInput
from ..screens.confirm import ConfirmScreen
from ..screens.form import Field, FormScreen
from ..widgets.bars import plural, short_stamp
from ..widgets.working_memory import parse_ttl, value_text

if TYPE_CHECKING:
    from .sessions import SessionsPane

Doc = dict[str, Any]


def _optional_int(text: str, field: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise InvalidInput(field, f"must be a whole number (got {text!r})") from None


def _optional_float(text: str, field: str) -> float | None:
    text = text.strip().rstrip("%")
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise InvalidInput(field, f"must be a number from 0 to 100 (got {text!r})") from None


def _tags(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def new_session(pane: SessionsPane) -> None:
    """Start a session from the workbench."""

    async def submit(values: dict[str, str]) -> Any:
        session = await pane.workbench.write(
            "start_session",
            agent=values["agent"],
            project=values["project"],
            title=values["title"],
            done="Session started",
        )
        pane.select_after_load(session["id"] if session else None)
        return session

    pane.app.push_screen(
        FormScreen(
            "Start a session",
            [
                Field("title", "Title", placeholder="what this run is about"),
                Field("agent", "Agent", "tui"),
                Field("project", "Project", ""),
            ],
            submit,
            save_label="Start",
        )
    )


def end_session(pane: SessionsPane, session: Doc) -> None:
    """End a session with a summary."""

    async def submit(values: dict[str, str]) -> Any:
        return await pane.workbench.write(
            "end_session",
            session=session["id"],
            summary=values["summary"],
            done="Session ended",
        )

    pane.app.push_screen(
        FormScreen(
            f"End “{session['title'] or session['id']}”?",
            [
                Field(
                    "summary",
                    "Summary",
                    multiline=True,
                    help="It is marked ended; agents can still log late observations.",
                )
            ],
            submit,
            save_label="End session",
        )
    )


def observe(pane: SessionsPane, session: Doc) -> None:
    """Add an observation to the session's timeline."""

    async def submit(values: dict[str, str]) -> Any:
        result = await pane.workbench.write(
            "observe",
            session=session["id"],
            text=values["content"],
            kind=values["kind"].strip() or "note",
            tags=_tags(values["tags"]),
            done="Observation added",
        )
        pane.follow_once = True
        return result

    pane.app.push_screen(
        FormScreen(
            f"Observe in “{session['title'] or session['id']}”",
            [
                Field("content", "What happened", multiline=True),
                Field("kind", "Kind", "note", help="note, tool, decision, error, …"),
                Field("tags", "Tags", "", placeholder="comma separated"),
            ],
            submit,
            save_label="Add",
        )
    )


def set_key(pane: SessionsPane, session: Doc, current: Doc | None) -> None:
    """Set a working-memory key (``current``: the focused key, to edit it)."""

    async def submit(values: dict[str, str]) -> Any:
        ttl = parse_ttl(values["ttl"])
        return await pane.workbench.write(
            "wm_set",
            session=session["id"],
            key=values["key"],
            value=values["value"],
            ttl=ttl,
            done=f"Key {values['key']!r} set",
        )

    pane.app.push_screen(
        FormScreen(
            "Set a working-memory key",
            [
                Field("key", "Key", current["key"] if current else ""),
                Field("value", "Value", value_text(current["value"]) if current else ""),
                Field(
                    "ttl",
                    "TTL",
                    "",
                    placeholder="empty: never expires",
                    help="seconds, or 90s, 5m, 2h, 1d",
                ),
            ],
            submit,
            save_label="Set",
        )
    )


def delete_key(pane: SessionsPane, session: Doc, key: str, scope: str = "session") -> None:
    """Delete a working-memory key, after a confirmation: the session's own, or a shared
    key from the scope the session inherits it from."""

    async def answered(yes: bool | None) -> None:
        if not yes:
            return
        if scope == "session":
            await pane.workbench.write(
                "wm_delete",
                session=session["id"],
                key=key,
                done=f"Key {key!r} deleted",
                restore_point=f"deleting key {key!r}",
            )
        else:
            await pane.workbench.write(
                "wm_delete",
                session=None,
                key=key,
                scope=scope,
                done=f"Shared key {key!r} deleted from {scope}",
                restore_point=f"deleting shared key {key!r}",
            )

    if scope == "session":
        title = f"Delete key {key!r}?"
        body = "It leaves this session's working memory (a checkpoint that holds it keeps it)."
    else:
        kind, _, name = scope.partition(":")
        title = f"Delete shared key {key!r} from {scope}?"
        body = f"Every session of {kind} {name} stops seeing it, not only this one."
    pane.app.push_screen(ConfirmScreen(title, body), answered)


def _kept_copies(result: Doc) -> str:
    said = ""
    if quoting := result.get("lessons_quoting"):
        said = (
            f"; {plural(len(quoting), 'lesson')} still "
            f"{'says' if len(quoting) == 1 else 'say'} it word for word (Delete in Lessons)"
        )
    held = result.get("checkpoints_may_hold") or []
    if not held:
        return said
    return said + (
        f"; {plural(len(held), 'checkpoint')} taken since still "
        f"{'holds' if len(held) == 1 else 'hold'} a copy until deleted"
    )


def forget_session(pane: SessionsPane, session: Doc) -> None:
    """Forget a whole session (observations, working memory, links), after a confirmation."""
    count = int(session.get("observation_count", 0))

    async def answered(yes: bool | None) -> None:
        if yes:
            await pane.workbench.write(
                "delete_session",
                session=session["id"],
                done=lambda r: (
                    f"Session forgotten with {plural(r['observations'], 'observation')}"
                    + _kept_copies(r)
                ),
            )

    pane.app.push_screen(
        ConfirmScreen(
            f"Forget session {session['title'] or session['id']!r} for good?",
            f"Its {plural(count, 'observation')}, its working memory and its links leave "
            "the store, its search cache and the next context; this cannot be undone. The "
            "history keeps that it happened, not the words. A store checkpoint taken since "
            "keeps its copy until you delete it.",
        ),
        answered,
    )


def forget_observation(pane: SessionsPane, session: Doc, observation: Doc) -> None:
    """Forget one observation, after a confirmation."""

    async def answered(yes: bool | None) -> None:
        if yes:
            await pane.workbench.write(
                "delete_observations",
                observations=[f"{session['id']}/{observation['id']}"],
                done=lambda r: "Observation forgotten" + _kept_copies(r),
            )

    pane.app.push_screen(
        ConfirmScreen(
            f"Forget observation #{observation['seq']} for good?",
            "Its words leave the store, its search cache and the next context; this cannot "
            "be undone. The history keeps that it happened, not the words.",
        ),
        answered,
    )


def task(pane: SessionsPane, session: Doc, current: Doc | None) -> None:
    """Edit the session's task state; only the fields changed are sent."""
    state = current or {}

    def shown(name: str) -> str:
        value = state.get(name)
        return "" if value is None else (f"{value:g}" if isinstance(value, float) else str(value))

    before = {n: shown(n) for n in ("task_id", "description", "status", "current_step")}
    before["total_steps"] = shown("total_steps")
    before["progress"] = shown("progress_percent") if state else ""

    async def submit(values: dict[str, str]) -> Any:
        changed = {k: v for k, v in values.items() if v.strip() != before[k].strip()}
        if not changed:
            return True
        params: dict[str, Any] = {}
        for name in ("task_id", "description", "status"):
            if name in changed:
                params[name] = changed[name]
        # The form's fields, as the ``wm_task`` operation names them.
        for name, param in (("current_step", "step"), ("total_steps", "total")):
            if name in changed:
                params[param] = _optional_int(changed[name], name)
        if "progress" in changed:
            params["progress"] = _optional_float(changed["progress"], "progress")
        return await pane.workbench.write(
            "wm_task", session=session["id"], done="Task updated", **params
        )

    pane.app.push_screen(
        FormScreen(
            "Task state",
            [
                Field("task_id", "Task id", before["task_id"]),
                Field("description", "Description", before["description"]),
                Field("status", "Status", before["status"] or "in_progress"),
                Field("current_step", "Step", before["current_step"]),
                Field("total_steps", "Total steps", before["total_steps"]),
                Field(
                    "progress",
                    "Progress %",
                    before["progress"],
                    help="0–100; left alone it follows step / total",
                ),
            ],
            submit,
        )
    )


def scratch(pane: SessionsPane, session: Doc) -> None:
    """Add a note to the session's scratchpad."""

    async def submit(values: dict[str, str]) -> Any:
        return await pane.workbench.write(
            "scratch_add", session=session["id"], text=values["text"], done="Scratchpad note added"
        )

    pane.app.push_screen(
        FormScreen(
            "Scratchpad note", [Field("text", "Note", multiline=True)], submit, save_label="Add"
        )
    )


def create_wm_checkpoint(pane: SessionsPane, session: Doc) -> None:
    """Save the session's working memory as a working-memory checkpoint."""

    async def submit(values: dict[str, str]) -> Any:
        return await pane.workbench.write(
            "create_wm_checkpoint",
            session=session["id"],
            description=values["description"],
            done="Working-memory checkpoint created",
        )

    pane.app.push_screen(
        FormScreen(
            "Checkpoint this session's working memory",
            [
                Field(
                    "description",
                    "Description",
                    placeholder="e.g. before the risky step",
                    help="Keys, task and scratchpad are kept; r restores them later.",
                )
            ],
            submit,
            save_label="Create",
        )
    )


def restore_wm_checkpoint(pane: SessionsPane, session: Doc, checkpoint: Doc) -> None:
    """Put a working-memory checkpoint back, after a confirmation that says what it holds."""

    async def answered(yes: bool | None) -> None:
        if yes:
            await pane.workbench.write(
                "restore_wm_checkpoint",
                session=session["id"],
                checkpoint=checkpoint["id"],
                done="Working memory restored",
            )

    what = checkpoint["description"] or checkpoint["id"][:8]
    pane.app.push_screen(
        ConfirmScreen(
            f"Restore “{what}”?",
            f"This replaces the session's whole working memory (keys, task and "
            f"scratchpad) with the copy from {short_stamp(checkpoint['created_at'])}: "
            f"{plural(checkpoint['keys'], 'key')}, {plural(checkpoint['scratch_entries'], 'note')}"
            f"{', a task' if checkpoint['has_task'] else ''}. Keys whose TTL has run out "
            "since stay gone.",
            confirm="Restore",
        ),
        answered,
    )
