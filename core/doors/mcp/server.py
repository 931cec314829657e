"""The MCP server: operations as tools, the context and slots as resources, and prompts.

It lists the operations of the tool sets it is asked for (:mod:`core.ops.toolsets`:
the ``agent`` set unless ``--tools`` or ``MEMWORK_MCP_TOOLS`` says otherwise).

Built on the official ``mcp`` SDK (:class:`mcp.server.MCPServer`); the SDK
speaks the protocol, this module maps the operations' declarations
(:mod:`core.ops.operations`) onto it. Each tool's description, input schema (every
parameter described) and output schema (:mod:`core.ops.shapes`) are generated
from the operation; a call is checked by :func:`core.ops.runner.check` and run by
:func:`core.ops.runner.call`, the same core function, lock and journal as the CLI
verb of the same name, so the workbench and CLI agents see MCP writes at once.

Results are JSON text (compact, sorted keys), except ``get_context`` with
``format="text"``, which returns the context itself; every result also comes
as structured content (an object as it is, anything else as
``{"result": …}``). A user error (invalid input, a wrong argument type, an
unknown id, a failed precondition) comes back as a tool error whose text is
exactly the line the CLI prints for it on exit code 2, and nothing is written.
Audit entries name the actor ``mcp`` (``mcp:<agent>`` with ``--agent`` or
``MEMWORK_AGENT``; over HTTP, an ``X-Memwork-Agent`` header names the caller).

Tools run in worker threads, over stdio as over HTTP (``memwork serve``): one
long call (the first search of a big store, a wait for the store's lock held by
another process) never holds up the others, from the same client or another (the
store's lock orders their writes). A tool that only reads a store on disk and whose
last few calls were quick runs on the event loop instead, never waiting there
(:mod:`core.doors.quick_calls`). Every call takes the limits of every door (a
value at most 16 MB, a query at most 4 KB: :func:`core.ops.runner.check`). A client
that hangs up, even mid-call, ends a stdio server cleanly (exit 0); the call it
made is all-or-nothing as always.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, ParamSpec

import anyio
import orjson
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver import server as _sdk_server
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    ContentBlock,
    Resource,
    TextContent,
    ToolAnnotations,
)
from mcp_types import Tool as MCPTool
from pydantic import Field

from ... import __version__
from ...base.errors import InvalidInput, MemworkError, NotFound, UserError, worded
from ...ops import runner as invoke
from ...ops.json_schemas import input_schema, output_schema
from ...ops.memory import Memory
from ...ops.operations import Op, by_name, door_ops
from ...ops.shapes import SHAPES, is_object
from ...ops.toolsets import chosen_tools, tool_name
from ...ops.wm_fallback import used_fallback
from ..quick_calls import QuickCalls, answered

P = ParamSpec("P")

log = logging.getLogger("memwork.mcp")

#: The header an HTTP client names its agent with (the audit actor becomes ``mcp:<agent>``).
AGENT_HEADER = "x-memwork-agent"

INSTRUCTIONS = """\
memwork is this agent's long-term memory. At the start of every task call \
get_context(task=...) and put the text at the top of your working context. \
After an attempt, call record_episode with the task id, a score from 0 to 1, \
the steps taken, a summary, and the mistakes and successes. Save durable \
knowledge with add_lesson; reinforce_lesson / weaken_lesson when it proves \
right or wrong. Use search to recall anything remembered (lessons, rules, \
mistake cards, episodes, observations, slots, working memory) and get_record \
to read a hit whole. Within one run, start_session, observe what happens, and \
keep short-lived state in working memory (wm_set, wm_task, scratch_add). When \
the store's review is on, the lessons and slot edits you save wait for a \
person: the result says "proposed": true, and they reach your context once \
approved (do not save them again)."""

_REVIEWED = (
    " While the store's review is on, the change waits for a person: the result is the "
    'proposal ("proposed": true), and it reaches your context once approved.'
)


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


def description(op: Op) -> str:
    """What an agent reads about a tool: when to call it, what it does, review."""
    parts = [op.when, op.doc or op.summary]
    text = " ".join(p for p in parts if p)
    return text + (_REVIEWED if op.review else "")


def tool_of(op: Op) -> MCPTool:
    """The MCP tool of an operation."""
    return MCPTool(
        name=tool_name(op),
        title=op.summary[0].upper() + op.summary[1:],
        description=description(op),
        input_schema=input_schema(op, "mcp"),
        output_schema=output_schema(op),
        annotations=ToolAnnotations(
            read_only_hint=not op.writes,
            destructive_hint=op.destructive if op.writes else None,
            open_world_hint=False,
        ),
    )


#: The second line of a working-memory answer given from the server's memory.
FALLBACK_NOTE = (
    "using_fallback: true (the Redis store does not answer: working memory is kept in the "
    "server's memory and written back when it answers again)"
)


def structured(op: Op, value: Any) -> dict[str, Any]:
    """``value`` as structured content (MCP wants an object)."""
    if is_object(SHAPES[op.result]) and isinstance(value, dict):
        return value
    return {"result": value}


# -- the server --------------------------------------------------------------------------------
class MemworkServer(MCPServer):
    """MCPServer whose tools are memwork's operations (the chosen ones), and which lists
    every slot as a resource (read through its template)."""

    def __init__(
        self, memory: Memory, *, threaded: bool = False, tools: Sequence[Op] | None = None
    ) -> None:
        """``tools``: the operations it lists and runs (default: every MCP operation)."""
        super().__init__(
            "memwork",
            title="memwork",
            description="Long-term memory for agents: context, episodes, lessons, slots.",
            instructions=INSTRUCTIONS,
            version=__version__,
            log_level="WARNING",
        )
        self.memory = memory
        self.threaded = threaded
        chosen = door_ops("mcp") if tools is None else tools
        self.operations = {tool_name(op): op for op in chosen}
        # A tool that reads a store on disk may be answered on the event loop once its
        # last calls were quick (see core/doors/quick_calls.py).
        local = threaded and memory.wm_fallback is None
        self._quick = {
            name: QuickCalls() for name, op in self.operations.items() if local and not op.writes
        }
        self._tools = [tool_of(op) for op in self.operations.values()]

    async def run_stdio_async(self) -> None:
        """Converse over stdio through memwork's wire (:mod:`core.doors.mcp.wire`): every
        line the protocol cannot read is answered with an error, never dropped."""
        from .wire import stdio

        lowlevel = self._lowlevel_server
        async with stdio() as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        context: Context[Any, Any] | None = None,
    ) -> Any:
        """The prompt ``name`` rendered; an unknown prompt or argument, a missing one or
        one that is not text is the client's error (invalid params, in memwork's words),
        where the SDK would log it as the server's own."""
        prompt = self._prompt_manager.get_prompt(name)
        if prompt is None:
            known = ", ".join(sorted(p.name for p in self._prompt_manager.list_prompts()))
            raise MCPError(INVALID_PARAMS, f"memwork: no prompt named {name!r} (known: {known})")
        declared = {a.name: a for a in prompt.arguments or []}
        given = arguments or {}
        for key, value in given.items():
            if key not in declared:
                taken = ", ".join(declared) or "none"
                raise MCPError(
                    INVALID_PARAMS,
                    f"memwork: {key}: is not an argument of {name} (it takes: {taken})",
                )
            if not isinstance(value, str):
                raise MCPError(INVALID_PARAMS, f"memwork: {key}: must be text (got {value!r:.40})")
        for arg in declared.values():
            if arg.required and arg.name not in given:
                raise MCPError(INVALID_PARAMS, f"memwork: {arg.name}: is required")
        return await super().get_prompt(name, arguments, context)

    async def list_tools(self) -> list[MCPTool]:
        """A tool per chosen operation, in declaration order."""
        return list(self._tools)

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        op = self.operations.get(name)
        return None if op is None else input_schema(op, "mcp")

    def actor(self, context: Context[Any, Any] | None) -> str:
        """The audit actor of a call: the server's, or the agent an HTTP header names."""
        headers: Mapping[str, str] | None = None
        if context is not None:
            try:
                headers = context.headers
            except (AttributeError, ValueError):
                headers = None
        agent = (headers or {}).get(AGENT_HEADER, "").strip() if headers else ""
        if not agent:
            return self.memory.actor
        from ...privacy import identifier_problem
        from ..header_text import header_text

        agent = header_text(agent, "agent")

        problem = identifier_problem(agent)
        if problem:
            raise InvalidInput("agent", problem)
        return f"mcp:{agent}"

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult:
        """Run the operation behind tool ``name``; errors come back as the CLI's line."""
        op = self.operations.get(name)
        if op is None:
            return _text(f"memwork: no tool named {name!r}", error=True)
        try:
            actor = self.actor(context)
            params = invoke.check(op, "mcp", arguments or {})

            def run() -> Any:
                if op.writes:
                    # As the Python API's: to the process that serves the store if one
                    # takes it (core/ops/hand_over.py), else here.
                    return self.memory.agents_write(
                        op, arguments or {}, params, now=self.memory.now(), actor=actor
                    )
                return invoke.call(
                    op,
                    self.memory.call_target(),
                    params,
                    now=self.memory.now(),
                    actor=actor,
                    fallback=self.memory.wm_fallback,
                )

            if not self.threaded:
                value = run()
            else:
                quick = None if invoke.writes(op, params) else self._quick.get(name)
                value = await answered(quick, run)
        except UserError as exc:
            return _text(worded(exc), error=True)
        except MemworkError as exc:
            log.warning("%s failed: %s", name, exc)
            return _text(worded(exc), error=True)
        except Exception as exc:  # noqa: BLE001 - one line to the agent, the trace to stderr
            log.exception("%s raised", name)
            return _text(f"memwork: internal error: {type(exc).__name__}: {exc}", error=True)
        text = value if op.name == "context" and isinstance(value, str) else _dumps(value)
        content: list[ContentBlock] = [TextContent(type="text", text=text)]
        shaped = structured(op, value)
        if used_fallback(value):
            # A list's answer cannot carry the field: its wrapper and a second line do.
            if shaped is not value:
                shaped = {**shaped, "using_fallback": True}
            content.append(TextContent(type="text", text=FALLBACK_NOTE))
        return CallToolResult(content=content, structured_content=shaped, is_error=False)

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
    """A resource's text; user errors become protocol errors with the CLI's message: a
    missing record or a bad parameter is the client's (invalid params), anything else
    the server's."""
    try:
        return fn(*args, **kwargs)
    except NotFound as exc:
        raise ResourceNotFoundError(worded(exc)) from None
    except UserError as exc:
        raise MCPError(INVALID_PARAMS, worded(exc)) from None
    except MemworkError as exc:
        raise ResourceError(worded(exc)) from None


def _whole_number(text: str | None, op: str, name: str) -> int | None:
    """A URI's parameter ``name`` of ``op`` as the integer it spells; anything else is
    refused in the words every door uses for that parameter."""
    if text is None:
        return None
    if re.fullmatch(r"[+-]?[0-9]{1,18}", text.strip()):
        return int(text)
    param = next(p for p in by_name(op).params if p.name == name)
    refused: int | None = invoke.coerce(param, text)  # text, not an integer: it raises
    return refused


def _hit_line(hit: dict[str, Any]) -> str:
    # A filled hit holds none of the topic's words: the model is told, not left to guess.
    related = "; related, without the topic's words" if hit.get("filled") else ""
    return f"- [{hit['kind']}] {hit['title']} (id {hit['id']}{related})"


def build_server(
    memory: Memory, *, threaded: bool = False, tools: Sequence[Op] | None = None
) -> MemworkServer:
    """The server with the chosen tools (default: all), every resource and prompt
    registered on ``memory``."""
    server = MemworkServer(memory, threaded=threaded, tools=tools)
    m = memory

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
    def task_context_resource(
        task: str, project: str | None = None, budget: str | None = None
    ) -> str:
        # A URI carries text: the budget is read here, so "?budget=lots" is refused as
        # every door refuses it (the SDK would call it an internal error).
        def read() -> str:
            words = _whole_number(budget, "context", "budget")
            return m.context(task, project=project, budget=words)

        return _read(read)

    @server.resource(
        "memwork://slot/{+label}",
        name="slot",
        title="Pinned slot",
        description="The content of one pinned slot.",
        mime_type="text/plain",
    )
    def slot_resource(label: str) -> str:
        return _read(lambda: m.get_slot(label)["content"])

    # -- prompts ------------------------------------------------------------------------
    @server.prompt(
        name="recall",
        title="Recall what you know about…",
        description="Search the memory for a topic and put what it holds in front of the model.",
    )
    def recall(
        topic: Annotated[str, Field(description="what to recall (a few words or a question)")],
    ) -> str:
        try:
            hits = m.search(topic, limit=8)
        except UserError as exc:
            return f"memwork could not search for {topic!r}: {exc}"
        if not hits:
            return (
                f"My memory (memwork) holds nothing about {topic!r} yet. Work it out, then "
                "save what is worth keeping with add_lesson."
            )
        lines = "\n".join(_hit_line(hit) for hit in hits)
        return (
            f"Here is what my memory (memwork) holds about {topic!r}, best first:\n{lines}\n\n"
            "Read any of them whole with get_record(id). Use what applies; if a lesson "
            "proves right or wrong, reinforce_lesson or weaken_lesson it."
        )

    @server.prompt(
        name="start_task",
        title="Start a task with memory",
        description="Open a session for a task and begin with everything memory holds for it.",
    )
    def start_task(
        task: Annotated[str, Field(description="the task's id, e.g. deploy-api")],
        project: Annotated[str, Field(description="the project it belongs to (optional)")] = "",
    ) -> str:
        try:
            context = m.context(task, project=project or None)
        except UserError as exc:
            context = f"(memwork could not build the context: {exc})"
        memory_text = context or "(nothing remembered for this task yet)"
        return (
            f"You are starting the task {task!r}"
            + (f" in project {project!r}" if project else "")
            + ". Your memory (memwork) for it:\n\n"
            + memory_text
            + "\n\nFirst call start_session"
            + (f" with project {project!r}" if project else "")
            + " and keep its id: observe what you do and keep short-lived state with wm_set "
            "and wm_task. When you are done, call record_episode with the task id, a score "
            "from 0 to 1, the steps, a summary and the mistakes and successes, save durable "
            "lessons with add_lesson, and end_session with a summary."
        )

    @server.prompt(
        name="wrap_up",
        title="Save what this task taught",
        description="Record the attempt, the lessons worth keeping, and close the session.",
    )
    def wrap_up(
        task: Annotated[str, Field(description="the task's id, e.g. deploy-api")],
        session: Annotated[str, Field(description="the session to end (optional)")] = "",
    ) -> str:
        end = (
            f" Then call end_session(session={session!r}) with a one-paragraph summary."
            if session
            else ""
        )
        return (
            f"Wrap up the task {task!r} for your memory (memwork). Call record_episode with "
            f"task_id {task!r}, a score from 0 to 1 (how well it went), the number of steps, a "
            "one-line summary, the mistakes you made and the successes worth repeating. For "
            "each thing a future attempt must know, call add_lesson with one imperative line "
            f"(scope task:{task} when it only applies here)." + end
        )

    return server


# -- stdio ------------------------------------------------------------------------------------
_HANGUPS: tuple[type[BaseException], ...] = (
    BrokenPipeError,
    ConnectionResetError,
    EOFError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
)


def is_hangup(exc: BaseException) -> bool:
    """Whether ``exc`` (an exception group too) only says the client went away."""
    if isinstance(exc, BaseExceptionGroup):
        return all(is_hangup(inner) for inner in exc.exceptions)
    return isinstance(exc, _HANGUPS)


def serve(
    path: str | os.PathLike[str] | None = None,
    *,
    agent: str | None = None,
    tools: str | None = None,
) -> int:
    """Serve the store over stdio until the client closes the connection (exit 0, also
    when it hangs up in the middle of a call). ``tools``: the sets and tool names to
    list (:mod:`core.ops.toolsets`; default ``$MEMWORK_MCP_TOOLS``, else ``agent``),
    checked before anything starts."""
    chosen = chosen_tools(tools)
    memory = Memory(path, agent=agent, actor="mcp")
    try:
        build_server(memory, threaded=True, tools=chosen).run("stdio")
    except BaseException as exc:  # noqa: BLE001 - a hang-up is the end of the conversation
        if not is_hangup(exc):
            raise
        # Nothing more can reach the client; keep Python's exit flush off the closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        log.info("the client hung up")
    finally:
        memory.close()  # saves the recall index if it changed since its last save
    return 0
