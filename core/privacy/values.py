"""Whether a value assigned to a secret-named key could be a secret: the cheap checks.

Shared by the gate in :mod:`core.privacy` (which must decide without importing
detect-secrets) and the keyword detector in :mod:`core.privacy.detectors`
(which adds detect-secrets' own heuristics). "the password: rotate it weekly",
``password = os.environ['DB_PASSWORD']``, ``API_KEY=${API_KEY}`` and
``max_tokens: 4096`` name secrets without holding one.
"""

from __future__ import annotations

import re

from .lazy import lazy

MARKER = "[redacted:"
MIN_VALUE = 4

_NUMBERISH = lazy(r"^[\d.,:_+=-]+$")
_CODE_REFERENCE = lazy(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?:\(\)?)?$|^[\w.$]+[(\[]")
# ENV_VAR_NAMES and snake_case_names: what a key is called, not what it holds.
_NAME_LIKE = lazy(r"^(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z]+(?:_[a-z]+)+)$")
_PLACEHOLDER = lazy(
    r"^(?:<[^>]*>?|\*+|x{3,}|\.{3,}|null|none|nil|true|false|undefined|redacted|"
    r"required|optional|string|your[\w-]*|changeit|example[\w-]*)$",
    re.IGNORECASE,
)


def plausible(value: str, line: str, *, quoted: bool, spaced: bool, quote: str, end: int) -> bool:
    """Whether ``value`` (assigned in ``line``, ending at ``end``) may be a secret."""
    if len(value) < MIN_VALUE or MARKER in value or value.startswith(("$", "{", "%")):
        return False
    if _NUMBERISH.match(value) or _PLACEHOLDER.match(value) or _CODE_REFERENCE.match(value):
        return False
    if _NAME_LIKE.match(value) or "..." in value or "\u2026" in value or value.endswith(":"):
        return False  # an environment variable's name, a snake_case name, "sk-...", a header
    if "`" in value or (quote == "`" and " " in value):
        return False  # Markdown code spans around names, not a quoted secret
    if not quoted and value.isalpha():
        # "the password: rotate it weekly", "Password=Letta API key" are sentences;
        # "PASSWORD=changeme" at the end of a line is an assignment.
        if spaced or line[end:].lstrip(",;").strip()[:1].isalnum():
            return False
    return True
