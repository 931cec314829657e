"""A session's task state: what the agent is doing, its status, steps and progress."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base.clock import iso
from ...base.errors import InvalidInput, NotFound
from ...base.numbers import is_finite
from ...models.base import validate
from ...models.working_memory import DEFAULT_TASK_ID, DEFAULT_TASK_STATUS, TaskState
from ...privacy import scrub
from ...storage.store import Store
from .state import audit_change, load_for_write, save_state, session_id_for_read, stored_state

TASK_FIELDS = (
    "task_id",
    "description",
    "status",
    "current_step",
    "total_steps",
    "progress_percent",
)


def clamp_progress(value: float) -> float:
    """Progress is a percentage: values outside 0–100 are clamped, not refused."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not is_finite(value):
        raise InvalidInput("progress_percent", f"must be a finite number (got {value!r})")
    return float(min(100.0, max(0.0, value)))


def derived_progress(current_step: int, total_steps: int) -> float:
    """Progress from steps: ``current_step / total_steps`` as a clamped percentage."""
    return clamp_progress(round(100.0 * current_step / total_steps, 2))


def progress_is_given(task: dict[str, Any]) -> bool:
    """Whether the task's progress was set by the caller rather than derived from steps.

    Tasks stored before this was recorded are judged by their numbers: a progress
    that is not what the steps give (or not 0 before any steps) was set by hand.
    """
    recorded = task.get("progress_given")
    if recorded is not None:
        return bool(recorded)
    progress = float(task.get("progress_percent") or 0.0)
    step, total = task.get("current_step"), task.get("total_steps")
    if step is not None and total:
        return progress != derived_progress(int(step), int(total))
    return progress != 0.0


def get_task(store: Store, session: str) -> dict[str, Any] | None:
    """The session's task state, or None when no task was set."""
    with store.reading():
        state = stored_state(store, session_id_for_read(store, session)) or {}
    task = state.get("task")
    return dict(task) if task else None


def update_task(
    store: Store,
    session: str,
    *,
    now: datetime,
    actor: str,
    task_id: str | None = None,
    description: str | None = None,
    status: str | None = None,
    current_step: int | None = None,
    total_steps: int | None = None,
    progress_percent: float | None = None,
) -> dict[str, Any]:
    """Create or partially update the task state; returns it.

    Only the fields given change. A ``task_id`` different from the current one
    starts a new task (fresh ``started_at``; fields not given take defaults).
    ``progress_percent`` is clamped to 0–100. Until the caller gives a progress,
    it follows the steps: an update that changes ``current_step`` or
    ``total_steps`` re-derives it as ``current_step / total_steps``. Once the
    caller has given a progress it is theirs (``progress_given``): step updates
    leave it alone until the caller gives another or starts a new task.
    """
    if all(
        v is None
        for v in (task_id, description, status, current_step, total_steps, progress_percent)
    ):
        raise InvalidInput("task", f"give at least one of {', '.join(TASK_FIELDS)}")
    # A word the agent chose is its text: scrubbed like any (status first, then description).
    status = scrub(str(status).strip()).strip() if status is not None else None
    given: dict[str, object] = {}
    if task_id is not None:
        given["task_id"] = str(task_id).strip()
    if description is not None:
        given["description"] = scrub(description).strip()
    if status is not None:
        given["status"] = status
    if current_step is not None:
        given["current_step"] = current_step
    if total_steps is not None:
        given["total_steps"] = total_steps
    if progress_percent is not None:
        given["progress_percent"] = clamp_progress(progress_percent)
    for name in ("current_step", "total_steps"):
        value = given.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise InvalidInput(name, f"must be a whole number (got {value!r})")
    stamp = iso(now)
    with store.transaction():
        sid, state, purged = load_for_write(store, session, now, actor)
        current = state.get("task")
        new_task = current is None or (
            "task_id" in given and given["task_id"] != current["task_id"]
        )
        task = (
            {"task_id": DEFAULT_TASK_ID, "status": DEFAULT_TASK_STATUS, "started_at": stamp}
            if new_task or current is None
            else dict(current)
        )
        owned = progress_is_given(task)
        task.update(given)
        if "progress_percent" in given:
            owned = True
        elif ("current_step" in given or "total_steps" in given) and not owned:
            step, total = task.get("current_step"), task.get("total_steps")
            if step is not None and total:
                task["progress_percent"] = derived_progress(int(step), int(total))
        task["progress_given"] = owned
        task["updated_at"] = stamp
        state["task"] = validate(TaskState, task).model_dump(mode="json")
        save_state(store, state, now)
        what = "start" if new_task else "update"
        summary = (
            f"{what} task {state['task']['task_id']!r}: "
            f"{state['task']['status']} {state['task']['progress_percent']:g}%"
        )
        audit_change(store, actor, "wm-task", sid, summary, purged, now)
    return dict(state["task"])


def clear_task(store: Store, session: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Remove the task state (NotFound when there is none); returns what was removed."""
    with store.transaction():
        sid, state, purged = load_for_write(store, session, now, actor)
        task = state.get("task")
        if not task:
            raise NotFound("working-memory task", sid)
        state["task"] = None
        save_state(store, state, now)
        audit_change(store, actor, "wm-task", sid, f"clear task {task['task_id']!r}", purged, now)
    return dict(task)


def task_op(
    store: Store,
    session: str,
    *,
    now: datetime,
    actor: str,
    task_id: str | None = None,
    description: str | None = None,
    step: int | None = None,
    total: int | None = None,
    progress: float | None = None,
    status: str | None = None,
    if_exists: bool = False,
) -> dict[str, Any] | None:
    """The ``wm_task`` operation: update the fields given, or read the task state when none
    is (``None`` when the session has none). ``if_exists``: update only a task the session
    has; without one nothing is written (not even the session) and the answer is None."""
    if all(v is None for v in (task_id, description, step, total, progress, status)):
        return get_task(store, session)
    if if_exists:
        with store.transaction():  # the check and the update see the same state
            if get_task(store, session) is None:
                return None
            return _update(
                store, session, now, actor, task_id, description, step, total, progress, status
            )
    return _update(store, session, now, actor, task_id, description, step, total, progress, status)


def _update(
    store: Store,
    session: str,
    now: datetime,
    actor: str,
    task_id: str | None,
    description: str | None,
    step: int | None,
    total: int | None,
    progress: float | None,
    status: str | None,
) -> dict[str, Any]:
    return update_task(
        store,
        session,
        now=now,
        actor=actor,
        task_id=task_id,
        description=description,
        status=status,
        current_step=step,
        total_steps=total,
        progress_percent=progress,
    )
