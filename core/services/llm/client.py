"""One chat-completions call, with a time-out per attempt and bounded retries.

Retried: a time-out, a connection that fails, HTTP 429 and 5xx (the server's
trouble, which may pass), after 0.5 s, 1 s, ... or the wait a ``Retry-After`` asks for
(10 s at most). Not retried: any other 4xx (the request itself is
wrong: a bad key, an unknown model), and an answer that is not a chat completion.
Every failure is one :class:`~core.base.errors.ModelFailed` whose message names the
endpoint without its credentials; the key is taken out of anything the server
said before it is shown.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ...base.errors import ModelFailed
from ...base.text import clip
from ...privacy import scrub
from .endpoint import Endpoint

_T = TypeVar("_T")

if TYPE_CHECKING:
    import httpx

#: Seconds before the first retry; each further one waits twice as long.
BACKOFF = 0.5
#: The longest wait a server's ``Retry-After`` may ask for, in seconds.
MAX_RETRY_AFTER = 10.0
#: The most of an error body a message quotes.
QUOTE = 200

Message = dict[str, str]


def _hidden(text: str, endpoint: Endpoint) -> str:
    """``text`` with the key (and anything else secret-looking) taken out, on one line."""
    if endpoint.key:
        text = text.replace(endpoint.key, "[key]")
    return clip(scrub(text), QUOTE)


def _said(response: httpx.Response, endpoint: Endpoint) -> str:
    """What an error answer says, briefly: its ``error.message`` or the start of its body."""
    text = response.text
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = error["message"]
        elif isinstance(error, str):
            text = error
    quoted = _hidden(text, endpoint)
    return f": {quoted}" if quoted else ""


def _quiet_request_log() -> None:
    """httpx logs each request's full URL at INFO, and a URL may carry a credential in its
    query: a process that logs at INFO (``memwork serve``) must not write it out. A level
    the operator set on purpose is left alone."""
    import logging

    for name in ("httpx", "httpcore"):
        log = logging.getLogger(name)
        if log.level == logging.NOTSET:
            log.setLevel(logging.WARNING)


def retry_after(value: str | None) -> float:
    """The seconds a ``Retry-After`` header asks for (0 when absent or a date), at most
    :data:`MAX_RETRY_AFTER`: a server must not make a CLI call hang for minutes."""
    try:
        seconds = float(value or 0)
    except ValueError:
        return 0.0
    return min(max(seconds, 0.0), MAX_RETRY_AFTER) if seconds == seconds else 0.0


def content_of(body: Any) -> str:
    """The first choice's message text of a chat completion (ValueError when there is
    none)."""
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("no choices[0].message.content in the answer") from None
    if not isinstance(content, str):
        raise ValueError("choices[0].message.content is not text")
    return content


def chat(
    endpoint: Endpoint,
    messages: list[Message],
    *,
    max_tokens: int = 1024,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """Ask ``endpoint`` for one completion of ``messages``; its text.

    Raises :class:`ModelFailed` when every attempt failed, a 4xx came back, or the
    answer was not a chat completion.
    """
    import httpx  # only the verbs that ask a model pay for it

    _quiet_request_log()

    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if endpoint.key:
        headers["Authorization"] = f"Bearer {endpoint.key}"
    payload = {
        "model": endpoint.model,
        "messages": messages,
        "temperature": 0.2,
        "max_tokens": max_tokens,
    }
    where = f"model endpoint {endpoint.shown}"
    attempts = endpoint.retries + 1
    last = ""
    asked_wait = 0.0
    with httpx.Client(timeout=endpoint.timeout, follow_redirects=False) as http:
        for attempt in range(attempts):
            if attempt:
                sleep(max(BACKOFF * 2 ** (attempt - 1), asked_wait))
                asked_wait = 0.0
            try:
                response = http.post(endpoint.url, headers=headers, json=payload)
            except httpx.TimeoutException:
                last = f"timed out after {endpoint.timeout:g} s"
                continue
            except httpx.TransportError as exc:
                last = f"could not be reached ({_hidden(str(exc) or type(exc).__name__, endpoint)})"
                continue
            status = response.status_code
            if status == 429 or status >= 500:
                last = f"answered HTTP {status}{_said(response, endpoint)}"
                asked_wait = retry_after(response.headers.get("Retry-After"))
                continue
            if status >= 400:
                raise ModelFailed(
                    f"{where} answered HTTP {status}{_said(response, endpoint)} "
                    "(not retried: the request was refused); nothing was written"
                )
            if status != 200:
                raise ModelFailed(f"{where} answered HTTP {status}, not 200; nothing was written")
            try:
                return content_of(response.json())
            except ValueError as exc:
                what = _hidden(str(exc), endpoint)
                raise ModelFailed(
                    f"{where} answered malformed: {what}; nothing was written"
                ) from None
    tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    raise ModelFailed(f"{where} {last} ({tries}); nothing was written")


def ask(where: Endpoint, messages: list[Message], read: Callable[[str], _T]) -> _T:
    """The model's answer to ``messages``, read by ``read`` (a prompts parser): an answer
    it cannot read (its ValueError) is a :class:`ModelFailed` that writes nothing."""
    answer = chat(where, messages)
    try:
        return read(answer)
    except ValueError as exc:
        raise ModelFailed(
            f"model endpoint {where.shown} answered malformed: {exc}; nothing was written"
        ) from None
