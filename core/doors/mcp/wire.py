"""The stdio wire of ``memwork mcp``: one JSON-RPC message a line, each one answered.

The SDK's own stdio transport drops a line it cannot read (JSON cut short, a lone
surrogate such as ``"\\ud83d"`` from half an emoji, nesting past its parser's depth, an
object that is no JSON-RPC message) without a word, so the client waits for an answer
that never comes; and it reads bytes that are not UTF-8 as U+FFFD, so the text is
stored changed. Here each line is read strictly: a line the protocol cannot take gets
a JSON-RPC error on the same wire (with the request's id whenever the line still shows
one, so the client's call ends), and one line on stderr, the client's log. The error
names the rule the line broke in memwork's words (the field and what it must be, as a
tool error would), and the store is never touched. A notification the server cannot
read gets no answer (JSON-RPC answers none), only the log line.

While serving, descriptors 0 and 1 point at the null device and at stderr, as the
SDK's transport arranges, so a stray print or a child process never writes into the
conversation; they are put back when the conversation ends.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any, BinaryIO, NamedTuple

import anyio
import mcp_types as types

# The SDK's own stream pair (pinned in pyproject.toml): the server reads the sender's
# context from it, as it does from its own stdio transport.
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ...base.errors import InvalidInput
from ...models.limits import MAX_DEPTH, check_value

log = logging.getLogger(__name__)

#: The envelope's own levels above a tool's arguments (message, params, arguments).
_ENVELOPE = 3
_SPACE = re.compile(r"[ \t\n\r]*")
#: A JSON string (skipped whole) or a bracket: enough to walk nesting without parsing.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class Refused(NamedTuple):
    """A line the protocol cannot take: the error to answer with, and to whom."""

    id: int | str | None
    code: int
    message: str
    #: A notification (a method, no id): logged, never answered.
    notification: bool = False

    def reply(self) -> SessionMessage:
        """The JSON-RPC error message that answers the line."""
        error = types.ErrorData(code=self.code, message=self.message)
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=self.id, error=error))


def read_line(raw: bytes) -> types.JSONRPCMessage | Refused | None:
    """The message one line of the wire holds, the refusal that answers it, or None for
    a blank line."""
    line = raw.strip()
    if not line:
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        top = _top_members(line.decode("utf-8", "replace"))
        return _refused(
            top,
            types.PARSE_ERROR,
            f"a message must be UTF-8 text: byte 0x{line[exc.start]:02X} at offset "
            f"{exc.start:,} is not",
        )
    try:
        message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except (ValidationError, ValueError) as exc:
        return explain(text, exc)
    if isinstance(message, types.JSONRPCNotification) and '"id"' in text:
        # A request whose id is no JSON-RPC id (null, 1.5, true) reads as a notification,
        # which is never answered: its client would wait for ever.
        ident = json.loads(text).get("id", message)
        if ident is not message:
            return Refused(
                None,
                types.INVALID_REQUEST,
                f"memwork: id: must be a string or a whole number (got {json.dumps(ident):.40})",
            )
    return message


def explain(text: str, exc: Exception) -> Refused:
    """Why the SDK refused ``text``, in the words of memwork's own checks."""
    top = _top_members(text)
    depth = _depth(text)
    if depth > MAX_DEPTH + _ENVELOPE:
        return _refused(
            top, types.INVALID_PARAMS, f"nests deeper than {MAX_DEPTH} levels", _where(top)
        )
    try:
        message = json.loads(text)
    except ValueError as bad:
        detail = getattr(bad, "msg", str(bad))
        if isinstance(bad, json.JSONDecodeError):
            detail += f"{'' if detail.endswith(' at') else ' at'} character {bad.pos + 1:,}"
        return _refused(top, types.PARSE_ERROR, f"a message must be JSON: {detail}")
    if not isinstance(message, dict):
        return _refused(
            {}, types.INVALID_REQUEST, "a message must be one JSON object (batches are not taken)"
        )
    params = message.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    try:
        if isinstance(arguments, dict):
            for name, value in arguments.items():
                check_value(value, str(name))
        check_value(message, "message")
    except InvalidInput as fault:
        return _refused(top, types.INVALID_PARAMS, str(fault))
    return _refused(top, types.INVALID_REQUEST, _first_fault(exc))


def _refused(top: dict[str, Any], code: int, message: str, where: str = "") -> Refused:
    ident = top.get("id")
    if isinstance(ident, bool) or not isinstance(ident, int | str):
        ident = None
    notification = "method" in top and "id" not in top
    return Refused(ident, code, f"memwork: {where}{message}", notification)


def _where(top: dict[str, Any]) -> str:
    return "params.arguments: " if top.get("method") == "tools/call" else "message: "


def _first_fault(exc: Exception) -> str:
    """The first thing a request lacks, as pydantic found it (a request is what a client
    sends; its other readings, as a response or a notification, say the same or less)."""
    if isinstance(exc, ValidationError):
        for error in exc.errors(include_url=False):
            loc = [str(part) for part in error["loc"]][1:]  # past the union member's name
            where = ".".join(loc) or "message"
            return f"not a JSON-RPC 2.0 message: {where}: {error['msg']}"
    return f"not a JSON-RPC 2.0 message: {exc}"


def _depth(text: str) -> int:
    """How deep ``text``'s brackets nest, strings skipped (no parse: a parser would
    recurse as deep)."""
    depth = deepest = 0
    for token in _TOKEN.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif mark in "]}":
            depth -= 1
    return deepest


def _top_members(text: str) -> dict[str, Any]:
    """The members of ``text``'s outer object whose values are plain (a string, a number,
    true, false, null), read up to the first fault; nested values are stepped over by
    their brackets. It finds a request's ``id`` and ``method`` however the rest of the
    line is broken, nested or cut."""
    found: dict[str, Any] = {}
    decoder = json.JSONDecoder()
    at = _skip(text, 0)
    if text[at : at + 1] != "{":
        return found
    at += 1
    try:
        while True:
            at = _skip(text, at)
            if text[at : at + 1] != '"':
                return found
            key, at = decoder.raw_decode(text, at)
            at = _skip(text, at)
            if text[at : at + 1] != ":":
                return found
            at = _skip(text, at + 1)
            nested = text[at : at + 1] in ("{", "[")
            if nested:
                at = _past_nested(text, at)
            else:
                value, at = decoder.raw_decode(text, at)
            at = _skip(text, at)
            ends = text[at : at + 1]
            if ends not in (",", "}"):
                return found  # a number cut short ("id":1 of "id":12) is no id
            if not nested:
                found[key] = value
            if ends == "}":
                return found
            at += 1
    except (ValueError, RecursionError):
        return found


def _skip(text: str, at: int) -> int:
    """Where the blanks at ``at`` end (a pattern that matches the empty run too)."""
    blanks = _SPACE.match(text, at)
    return blanks.end() if blanks else at


def _past_nested(text: str, at: int) -> int:
    depth = 0
    for token in _TOKEN.finditer(text, at):
        mark = token.group()
        if mark in "[{":
            depth += 1
        elif mark in "]}":
            depth -= 1
            if depth == 0:
                return token.end()
    raise ValueError("cut short")


# -- the transport ----------------------------------------------------------------------------
@contextmanager
def _claimed_wire() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The client's two pipes, on descriptors of the transport's own; 0 and 1 diverted
    meanwhile. Where descriptors cannot be moved, the standard streams serve in place."""
    try:
        import fcntl

        wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    except (ImportError, OSError):
        yield sys.stdin.buffer, sys.stdout.buffer
        return
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    try:
        with os.fdopen(wire_in, "rb", closefd=False) as reading:
            with os.fdopen(wire_out, "wb", closefd=False) as writing:
                yield reading, writing
    finally:
        with suppress(OSError):
            os.dup2(wire_in, 0)
            os.dup2(wire_out, 1)
        # A worker thread may still be blocked reading the client's pipe: its
        # descriptor is left open (the process is ending) rather than reused under it.


@asynccontextmanager
async def stdio() -> AsyncIterator[tuple[Any, Any]]:
    """The read and write streams of a server conversing over this process's stdio."""
    with _claimed_wire() as (reading, writing):
        wire_in = anyio.wrap_file(reading)
        wire_out = anyio.wrap_file(writing)
        read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
        write_stream, write_reader = create_context_streams[SessionMessage](0)

        async def reader() -> None:
            async with read_writer:
                async for raw in wire_in:
                    read = read_line(raw)
                    if read is None:
                        continue
                    if isinstance(read, Refused):
                        log.warning("refused a message: %s", read.message.removeprefix("memwork: "))
                        if not read.notification:
                            try:
                                await write_stream.send(read.reply())
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                return
                        continue
                    await read_writer.send(SessionMessage(read))

        async def writer() -> None:
            async with write_reader:
                async for message in write_reader:
                    line = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await wire_out.write(line.encode("utf-8") + b"\n")
                    await wire_out.flush()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(reader)
            tasks.start_soon(writer)
            yield read_stream, write_stream
