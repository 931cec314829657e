"""The MCP server: memwork's agent verbs as tools, the context and slots as resources.

Built on the official ``mcp`` SDK (:class:`mcp.server.MCPServer`); the SDK
speaks the protocol, this module only maps tools to :class:`core.memory.Memory`
methods. So a tool call runs the same core function, under the same lock and
journal, as the CLI verb of the same name, and the workbench and CLI agents see
MCP writes at once. One :class:`Memory` stays open for the server's life: a
call reads only what changed since the last one (including what other
processes committed).

Results are JSON text (compact, sorted keys), except ``get_context`` with
``format="text"``, which returns the context itself. A user error (invalid
input, an unknown id, a failed precondition) comes back as a tool error whose
text is exactly the line the CLI prints for it on exit code 2, and nothing is
written. Audit entries name the actor ``mcp`` (``mcp:<agent>`` with
``--agent`` or ``MEMWORK_AGENT``).

Tools run inline on the server's event loop, one at a time: a stdio server has
one client, each call takes a few milliseconds, and a worker-thread hop per
call would cost more than it saves.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, Literal, ParamSpec, TypeVar

import orjson
from mcp.server import MCPServer
from mcp.server.mcpserver import server as _sdk_server
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp_types import CallToolResult, Resource, TextContent, ToolAnnotations

from .. import __version__
from ..errors import MemworkError, NotFound, UserError
from ..memory import Memory

P = ParamSpec("P")
#: A tool body: a plain function whose parameters become the tool's input schema.
Tool = TypeVar("Tool", bound=Callable[..., object])

log = logging.getLogger("memwork.mcp")

INSTRUCTIONS = """\
memwork is this agent's long-term memory. At the start of every task call \
get_context(task=...) and put the text at the top of your working context. \
After an attempt, call record_episode with the task id, a score from 0 to 1, \
the steps taken, a summary, and the mistakes and successes. Save durable \
knowledge with add_lesson; reinforce_lesson / weaken_lesson when it proves \
right or wrong. Use search to recall anything remembered (lessons, rules, \
mistake cards, episodes, observations, slots, working memory). Within one run, \
start_session, observe what happens, and keep short-lived state in working \
memory (wm_set, wm_task, scratch_add). When the store's review is on, the \
lessons and slot edits you save wait for a person: the result says \
"proposed": true, and they reach your context once approved (do not save \
them again)."""

JsonValue = str | int | float | bool | list[Any] | dict[str, Any] | None
_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
_DELETE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)


def _plain_logging(level: str = "WARNING") -> None:
    # The SDK's default logging renders with rich; core never imports rich, and a
    # stdio server's stderr is read by the client's log, so plain lines it is.
    logging.basicConfig(level=level, format="memwork mcp: %(levelname)s %(message)s")


# The SDK's server module calls the configure_logging it imported (not re-exported, hence
# the ignore); replacing that module global is the only way to keep its rich handler out.
_sdk_server.configure_logging = _plain_logging  # type: ignore[attr-defined]


def _dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _text(text: str, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


def _guarded(fn: Callable[..., object]) -> Callable[..., Awaitable[CallToolResult]]:
    """Run a tool body; user errors become the CLI's one-line message as a tool error."""

    @wraps(fn)
    async def tool(**kwargs: Any) -> CallToolResult:
        try:
            value = fn(**kwargs)
        except UserError as exc:
            return _text(f"memwork: {exc}", error=True)
        except MemworkError as exc:
            log.warning("%s failed: %s", fn.__name__, exc)
            return _text(f"memwork: {exc}", error=True)
        except Exception as exc:  # noqa: BLE001 - one line to the agent, the trace to stderr
            log.exception("%s raised", fn.__name__)
            return _text(f"memwork: internal error: {type(exc).__name__}: {exc}", error=True)
        return value if isinstance(value, CallToolResult) else _text(_dumps(value))

    return tool


class MemworkServer(MCPServer):
    """MCPServer that also lists every slot as a resource (read through its template)."""

    def __init__(self, memory: Memory) -> None:
        super().__init__(
            "memwork",
            title="memwork",
            description="Long-term memory for agents: context, episodes, lessons, slots.",
            instructions=INSTRUCTIONS,
            version=__version__,
            log_level="WARNING",
        )
        self.memory = memory

    async def list_resources(self) -> list[Resource]:
        """The static resources, then one per slot, in context order."""
        listed = await super().list_resources()
        try:
            slots = self.memory.list_slots()
        except MemworkError as exc:
            log.warning("listing slots failed: %s", exc)
            slots = []
        listed.extend(
            Resource(
                uri=f"memwork://slot/{slot['label']}",
                name=f"slot {slot['label']}",
                title=slot["label"],
                description=slot.get("description") or f"The pinned slot {slot['label']!r}.",
                mime_type="text/plain",
            )
            for slot in slots
        )
        return listed


def _read(fn: Callable[P, str], *args: P.args, **kwargs: P.kwargs) -> str:
    """A resource's text; user errors become protocol errors with the CLI's message."""
    try:
        return fn(*args, **kwargs)
    except NotFound as exc:
        raise ResourceNotFoundError(f"memwork: {exc}") from None
    except MemworkError as exc:
        raise ResourceError(f"memwork: {exc}") from None


def build_server(memory: Memory) -> MemworkServer:
    """The server with every tool and resource registered on ``memory``."""
    server = MemworkServer(memory)
    m = memory

    def tool(annotations: ToolAnnotations) -> Callable[[Tool], Tool]:
        def register(fn: Tool) -> Tool:
            server.add_tool(
                _guarded(fn), name=fn.__name__, annotations=annotations, structured_output=False
            )
            return fn

        return register

    # -- context and episodes -----------------------------------------------------------
    @tool(_READ)
    def get_context(
        task: str | None = None,
        project: str | None = None,
        budget: int = 2000,
        style: Literal["default", "episodic"] = "default",
        format: Literal["text", "json"] = "text",  # noqa: A002 - the CLI's flag name
        query: str | None = None,
    ) -> Any:
        """Call at the start of every task (and whenever the task changes): the memory to
        put at the top of your working context — pinned slots, rules for the task, general
        rules and lessons, the top mistakes, recent failures, your recent episodes and mean
        score on the task. `project` ranks that project's lessons as matching. `budget` is in
        estimated tokens (characters / 4). `format="json"` returns the sections and what the
        budget dropped, each line with the records it came from. `query` (what you are about
        to do, in words) adds the most relevant past observations, episodes and lessons.
        An empty string means there is nothing to remember yet."""
        if format == "text":
            return _text(m.context(task, project=project, budget=budget, style=style, query=query))
        return m.context(
            task, project=project, budget=budget, style=style, format="json", query=query
        )

    @tool(_WRITE)
    def record_episode(
        episode: dict[str, Any] | None = None, episodes: list[dict[str, Any]] | None = None
    ) -> Any:
        """Call after every attempt at a task, success or failure. `episode` is one object:
        task_id, score (0.0-1.0, required), steps, summary, mistakes [str], successes [str],
        errors [{error_type, message, resolution}], mistake_cards [{mistake_type,
        bad_decision, correct_decision, evidence, lesson}], outcome
        (success|failure|partial, derived from the score when absent), session_id,
        worker_id; other keys are kept as metadata. `episodes` records a batch
        all-or-nothing. Returns {"ids": [...]}. Recording derives rules and mistake cards
        that later contexts show."""
        from ..errors import InvalidInput

        if episode is not None and episodes is None:
            batch = [episode]
        elif episodes is not None and episode is None:
            batch = episodes
        else:
            raise InvalidInput("episode", "give either episode (one object) or episodes (a list)")
        return {"ids": m.record_episodes(batch)}

    # -- sessions -----------------------------------------------------------------------
    @tool(_WRITE)
    def start_session(agent: str = "", project: str = "", title: str = "") -> Any:
        """Call when a run begins: returns the session (its `id` is what observe and the
        working-memory tools take)."""
        return m.start_session(agent=agent, project=project, title=title)

    @tool(_WRITE)
    def end_session(session: str, summary: str = "") -> Any:
        """Call when a run ends, with a one-paragraph summary of what happened."""
        return m.end_session(session, summary=summary)

    @tool(_WRITE)
    def observe(session: str, text: str, kind: str = "note", tags: list[str] | None = None) -> Any:
        """Note something seen or done during a session (kind: tool, note, error, decision,
        ...). Secrets and personal details are redacted before anything is stored."""
        return m.observe(session, text, kind=kind, tags=tags or ())

    # -- lessons ------------------------------------------------------------------------
    @tool(_WRITE)
    def add_lesson(
        text: str,
        scope: str = "global",
        confidence: float | None = None,
        tags: list[str] | None = None,
        on_duplicate: Literal["reinforce", "supersede", "keep-both"] = "reinforce",
    ) -> Any:
        """Save durable knowledge worth carrying to future tasks, as one imperative line.
        scope: global, task:<task id> or project:<project>. Saving a lesson that is already
        known (or a near-duplicate) reinforces it instead; `action` in the result says
        which (created, reinforced, superseded, kept-both). While the store's review is on,
        the lesson waits for a person: the result is the proposal ("proposed": true)."""
        return m.add_lesson(
            text, scope=scope, confidence=confidence, tags=tags or (), on_duplicate=on_duplicate
        )

    @tool(_WRITE)
    def reinforce_lesson(lesson: str) -> Any:
        """Call when a lesson proved right again (id or unique id prefix): raises its
        confidence and restarts its decay."""
        return m.reinforce_lesson(lesson)

    @tool(_WRITE)
    def weaken_lesson(lesson: str) -> Any:
        """Call when a lesson misled you (id or unique id prefix): lowers its confidence."""
        return m.weaken_lesson(lesson)

    @tool(_READ)
    def list_lessons(all: bool = False) -> Any:  # noqa: A002 - the CLI's flag name
        """Live lessons, best first, with effective (decayed) confidence; `all` adds
        forgotten, deleted and superseded ones."""
        return m.list_lessons(all=all)

    @tool(_READ)
    def search(
        query: str,
        kinds: list[str] | None = None,
        limit: int = 10,
        since: str | None = None,
        until: str | None = None,
        session: str | None = None,
    ) -> Any:
        """Recall what you remember about something: ask in plain words or a question
        ("when did the staging deploy fail?"); records with more of its rarer words rank
        first, and a typo in a word the memory never used is tolerated. kinds narrows it:
        lesson, rule, card, episode, observation, slot, wm, session, checkpoint. since/until
        bound when the record was made (ISO instant or date, or 12h, 7d back from now);
        session keeps one session's records. Returns [{kind, id, title, score}]."""
        return m.search(query, kinds=kinds, limit=limit, since=since, until=until, session=session)

    # -- slots --------------------------------------------------------------------------
    @tool(_READ)
    def list_slots() -> Any:
        """The pinned slots (labels, sizes against their limits); they lead every context."""
        return m.list_slots()

    @tool(_READ)
    def get_slot(label: str) -> Any:
        """Read one pinned slot with its content, size and limit before editing it."""
        return m.get_slot(label)

    @tool(_WRITE)
    def set_slot(
        label: str, text: str, limit: int | None = None, description: str | None = None
    ) -> Any:
        """Create or overwrite a pinned slot: text that leads every context (persona,
        user preferences, standing instructions). An edit past the slot's limit is refused.
        While the store's review is on, the edit waits for a person ("proposed": true)."""
        return m.set_slot(label, text, limit=limit, description=description)

    @tool(_WRITE)
    def append_slot(label: str, text: str) -> Any:
        """Add a line to the end of a pinned slot (e.g. a new user preference you learned).
        While the store's review is on, the edit waits for a person ("proposed": true)."""
        return m.append_slot(label, text)

    @tool(_WRITE)
    def replace_in_slot(label: str, old: str, new: str) -> Any:
        """Replace text in a pinned slot (`old` must occur; `replaced` counts occurrences).
        While the store's review is on, the edit waits for a person ("proposed": true)."""
        return m.replace_in_slot(label, old, new)

    # -- working memory -----------------------------------------------------------------
    @tool(_WRITE)
    def wm_set(session: str, key: str, value: JsonValue, ttl: float | None = None) -> Any:
        """Keep short-lived state for this session under `key` (`ttl` in seconds: the key
        disappears after it). Keys starting with "_" are reserved."""
        return m.wm_set(session, key, value, ttl=ttl)

    @tool(_READ)
    def wm_get(session: str, key: str) -> Any:
        """Read back state kept for this session under `key` (an expired key is not
        found)."""
        return m.wm_get(session, key)

    @tool(_DELETE)
    def wm_delete(session: str, key: str) -> Any:
        """Call when state kept under `key` no longer applies: removes the key."""
        return m.wm_delete(session, key)

    @tool(_READ)
    def wm_list(session: str) -> Any:
        """Every live working-memory key of the session, with the seconds each has left."""
        return m.wm_list(session)

    @tool(_WRITE)
    def wm_task(
        session: str,
        task_id: str | None = None,
        description: str | None = None,
        step: int | None = None,
        total: int | None = None,
        progress: float | None = None,
        status: str | None = None,
    ) -> Any:
        """Track the session's current task: only the fields given change (progress is
        clamped to 0-100). With no field, returns the task state (null when none)."""
        return m.wm_task(
            session,
            task_id=task_id,
            description=description,
            step=step,
            total=total,
            progress=progress,
            status=status,
        )

    @tool(_WRITE)
    def scratch_add(session: str, text: str) -> Any:
        """Append a timestamped note to the session's scratchpad (oldest dropped past
        capacity)."""
        return m.scratch_add(session, text)

    @tool(_READ)
    def stats() -> Any:
        """Counts per table, per-task episode counts and mean scores, the top mistake cards."""
        return m.stats()

    # -- resources ----------------------------------------------------------------------
    @server.resource(
        "memwork://context",
        name="context",
        title="Context",
        description="The prompt context with no task: slots, general rules and lessons.",
        mime_type="text/plain",
    )
    def context_resource() -> str:
        return _read(m.context)

    @server.resource(
        "memwork://context/{+task}{?project,budget}",
        name="task-context",
        title="Context of a task",
        description="The prompt context for a task (optionally ?project=P&budget=N).",
        mime_type="text/plain",
    )
    def task_context_resource(task: str, project: str | None = None, budget: int = 2000) -> str:
        return _read(m.context, task, project=project, budget=budget)

    @server.resource(
        "memwork://slot/{+label}",
        name="slot",
        title="Pinned slot",
        description="The content of one pinned slot.",
        mime_type="text/plain",
    )
    def slot_resource(label: str) -> str:
        return _read(lambda: m.get_slot(label)["content"])

    return server


def serve(path: str | os.PathLike[str] | None = None, *, agent: str | None = None) -> int:
    """Serve the store over stdio until the client closes the connection."""
    memory = Memory(path, agent=agent, actor="mcp")
    build_server(memory).run("stdio")
    return 0
