"""Which model endpoint to ask, read from the environment on every call.

``MEMWORK_LLM_URL`` turns the model on: an OpenAI-compatible chat-completions URL
(``…/v1`` gets ``/chat/completions`` added). ``MEMWORK_LLM_MODEL`` names the model
and must be set with it. The key comes from ``MEMWORK_LLM_API_KEY``, else
``GROQ_API_KEY`` (the variable the episodic library reads); a local server may
need none. ``MEMWORK_LLM_TIMEOUT`` (seconds per attempt, default 30) and
``MEMWORK_LLM_RETRIES`` (extra attempts after a time-out, a lost connection, a
429 or a 5xx; default 2) bound how long a call may take.

The key lives only in the process's environment and in the ``Authorization``
header: it is never part of a repr, a message, the store, the audit or an export.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from ...base.errors import InvalidInput

ENV_URL = "MEMWORK_LLM_URL"
ENV_MODEL = "MEMWORK_LLM_MODEL"
ENV_KEY = "MEMWORK_LLM_API_KEY"
ENV_GROQ_KEY = "GROQ_API_KEY"
ENV_TIMEOUT = "MEMWORK_LLM_TIMEOUT"
ENV_RETRIES = "MEMWORK_LLM_RETRIES"
DEFAULT_TIMEOUT = 30.0
DEFAULT_RETRIES = 2
MAX_RETRIES = 10
#: What ``engine`` says when a model did the work, and when the heuristic did.
LLM = "llm"
HEURISTIC = "heuristic"
#: Why a verb used its heuristic: said in its text and its JSON.
NOT_CONFIGURED = f"no model endpoint configured ({ENV_URL} is not set); used the heuristic"


@dataclass(frozen=True)
class Endpoint:
    """A chat-completions endpoint: where, which model, how long to wait."""

    url: str
    model: str
    key: str = field(default="", repr=False)
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES

    @property
    def shown(self) -> str:
        """The URL as messages may show it: no user, password, query or fragment (any
        of them may carry a credential)."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _url(raw: str) -> str:
    text = raw.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInput(ENV_URL, "must be an http:// or https:// URL of a chat-completions API")
    path = parts.path.rstrip("/")
    if path.endswith("/v1") or path == "":
        text = urlunsplit((parts.scheme, parts.netloc, path + "/chat/completions", parts.query, ""))
    return text


def _number(name: str, default: float, low: float, high: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:  # NaN fails too
        raise InvalidInput(name, f"must be a number from {low:g} to {high:g} (got {raw!r})")
    return value


def configured() -> Endpoint | None:
    """The endpoint the environment names, or None when ``MEMWORK_LLM_URL`` is unset.

    A half-given configuration (a URL without a model, a bad number) is refused naming
    the variable, rather than quietly falling back to the heuristic.
    """
    raw_url = os.environ.get(ENV_URL, "").strip()
    if not raw_url:
        return None
    model = os.environ.get(ENV_MODEL, "").strip()
    if not model:
        raise InvalidInput(ENV_MODEL, f"must name the model when {ENV_URL} is set")
    key = os.environ.get(ENV_KEY, "").strip() or os.environ.get(ENV_GROQ_KEY, "").strip()
    retries = _number(ENV_RETRIES, DEFAULT_RETRIES, 0, MAX_RETRIES)
    if retries != int(retries):
        raise InvalidInput(ENV_RETRIES, f"must be a whole number (got {retries:g})")
    return Endpoint(
        url=_url(raw_url),
        model=model,
        key=key,
        timeout=_number(ENV_TIMEOUT, DEFAULT_TIMEOUT, 0.1, 3600),
        retries=int(retries),
    )
