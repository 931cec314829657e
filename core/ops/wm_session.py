"""One session's working memory with the working-memory library's plain answers.

``Memory``'s working-memory methods answer as the CLI's ``--json`` does: entries with
where they came from, errors for what is missing. Code written against the Redis-backed
working-memory library expects plainer answers, and :class:`SessionMemory` gives them
on the same operations (so the same checks, audit, fallback and scopes apply):

- ``get(key, default=None)``: the value, or ``default`` when the key is missing or expired;
- ``delete(key)``: True when a key was deleted, False when there was none;
- ``update_progress(...)``: the task state, or None when the session has no task (nothing
  is written, no task named ``unknown`` appears);
- ``SessionMemory(memory, "run-42", project="web")``: a session id of the caller's own
  with a project, so the keys that project shares are seen.

    wm = memory.working_memory("run-42", project="web")
    wm.set("plan", "ship friday")
    wm.get("missing", "none yet")      # "none yet"
    wm.delete("missing")               # False
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base.errors import NotFound, StoreUnreachable

if TYPE_CHECKING:
    from .memory import Memory


class SessionMemory:
    """The working memory of session ``session`` of ``memory``.

    ``project`` (and ``title``) start the session under that id of the caller's own
    (``Memory.start_session(session=…)``: a session working memory already made is
    adopted). While a Redis store does not answer, working memory goes on in the
    process (``using_fallback``) and the start is made on a later call, once it answers.
    """

    def __init__(
        self, memory: Memory, session: str, *, project: str | None = None, title: str = ""
    ) -> None:
        self.memory = memory
        self.session = session
        self._start: dict[str, str] | None = None
        if project is not None or title:
            self._start = {"project": project or "", "title": title}
            self._started()

    def _started(self) -> None:
        """Start the session with its project, if still to do (a Redis store that does not
        answer now is asked again on the next call)."""
        if self._start is None:
            return
        try:
            self.memory.start_session(session=self.session, **self._start)
        except StoreUnreachable:
            return
        self._start = None

    @property
    def using_fallback(self) -> bool:
        """Whether working memory is kept in this process now (Redis does not answer)."""
        return self.memory.using_fallback

    # -- keys ----------------------------------------------------------------------------
    def set(self, key: str, value: Any, ttl: float | None = None) -> bool:
        """Keep ``value`` under ``key`` (``ttl``: seconds until it disappears); True."""
        self._started()
        self.memory.wm_set(self.session, key, value, ttl=ttl)
        return True

    def get(self, key: str, default: Any = None) -> Any:
        """The live value of ``key`` (the session's own, else the one it inherits), or
        ``default`` when there is none."""
        self._started()
        try:
            return self.memory.wm_get(self.session, key)["value"]
        except NotFound as exc:
            if exc.what != "working-memory key":
                raise
            return default

    def delete(self, key: str) -> bool:
        """Delete the session's own ``key``: True when it was there, False when not."""
        self._started()
        deleted: bool = self.memory.wm_delete(self.session, key, missing_ok=True)["deleted"]
        return deleted

    def exists(self, key: str) -> bool:
        """Whether ``key`` is live (inherited keys count)."""
        self._started()
        found: bool = self.memory.wm_exists(self.session, key)["exists"]
        return found

    def keys(self, pattern: str = "*") -> list[str]:
        """The live key names matching ``pattern`` (a glob), sorted."""
        self._started()
        return [str(name) for name in self.memory.wm_keys(self.session, pattern)]

    def get_all(self) -> dict[str, Any]:
        """Every live value by key (inherited ones included), and nothing else."""
        self._started()
        values = self.memory.wm_get_all(self.session)
        return {k: v for k, v in values.items() if not k.startswith("_")}

    def clear(self) -> int:
        """Delete every key of the session's own; how many went."""
        self._started()
        return len(self.memory.wm_clear(self.session)["cleared"])

    # -- task state ----------------------------------------------------------------------
    def task(self) -> dict[str, Any] | None:
        """The task state, or None when the session has none."""
        self._started()
        return self.memory.wm_task(self.session)

    def start_task(
        self, task_id: str, description: str = "", total_steps: int | None = None
    ) -> dict[str, Any]:
        """Start task ``task_id`` (a new id starts afresh); the task state."""
        self._started()
        started = self.memory.wm_task(
            self.session, task_id=task_id, description=description or None, total=total_steps
        )
        assert started is not None  # an update always answers the task it wrote
        return started

    def update_progress(
        self,
        *,
        step: int | None = None,
        total: int | None = None,
        progress: float | None = None,
        status: str | None = None,
    ) -> dict[str, Any] | None:
        """Update the task's progress (only what is given changes); None, and nothing
        written, when the session has no task."""
        self._started()
        return self.memory.wm_task(
            self.session,
            step=step,
            total=total,
            progress=progress,
            status=status,
            if_exists=True,
        )

    # -- scratchpad ----------------------------------------------------------------------
    def note(self, text: str) -> dict[str, Any]:
        """Append ``text`` to the scratchpad; the entry (its ``ts``)."""
        self._started()
        return self.memory.scratch_add(self.session, text)

    def notes(self) -> list[str]:
        """The scratchpad's texts, oldest first."""
        self._started()
        return [entry["text"] for entry in self.memory.scratch_list(self.session)]
