"""Privacy scrubber: remove secrets (and, in what agents report, personal details) from text.

Everything that comes from outside passes :func:`scrub` before it is stored and every export
is scrubbed again, so scrubbing is idempotent, leaves clean text byte-identical, and is cheap
on the common case of text with nothing to redact. Three layers, cheapest first:

1. control characters and ``<private>…</private>`` spans are removed;
2. the rules in :mod:`core.privacy.rules` (exact token shapes, key blocks, URL credentials,
   card numbers, and the personal kinds) run when their trigger substrings occur;
3. detect-secrets' detectors (keywords such as ``PASSWORD=``, vendor token formats,
   high-entropy strings; :mod:`core.privacy.detectors`) run on a line only when a cheap
   gate says the line could hold one. Importing detect-secrets costs ~200 ms, so a process
   whose text never passes the gate (``memwork context`` on a scrubbed store) never pays it.

Personal details (e-mail and IP addresses, home-directory paths) are redacted with
``personal=True`` (the default: what agents report) and kept with ``personal=False``
(curated slots, where a person put them on purpose). Secrets go either way.

Redactions can be counted: inside :func:`counting`, every redaction adds to the current
:class:`Tally`, which the CLI reports and :func:`core.audit.record` attaches to the
audit entry it writes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

from .controls import has_controls, strip_controls
from .lazy import lazy
from .rules import RULES, Rule
from .values import plausible

__all__ = [
    "KINDS",
    "PERSONAL_KINDS",
    "SECRET_KINDS",
    "Tally",
    "counting",
    "current_tally",
    "find_secrets",
    "has_controls",
    "identifier_problem",
    "scrub",
    "scrub_value",
    "strip_controls",
]

#: Kinds the detect-secrets layer reports (see :mod:`core.privacy.detectors`).
DETECTOR_KINDS: frozenset[str] = frozenset(
    {
        "api_key",
        "artifactory_token",
        "aws_key",
        "aws_secret_key",
        "azure_storage_key",
        "cloudant_credentials",
        "credentials",
        "discord_token",
        "github_token",
        "gitlab_token",
        "high_entropy",
        "ibm_credentials",
        "jwt",
        "mailchimp_key",
        "npm_token",
        "password",
        "private_key",
        "pypi_token",
        "secret",
        "sendgrid_key",
        "slack_token",
        "slack_webhook",
        "softlayer_credentials",
        "square_oauth",
        "telegram_token",
        "token",
        "twilio_key",
    }
)
PERSONAL_KINDS: frozenset[str] = frozenset(r.kind for r in RULES if r.personal)
SECRET_KINDS: frozenset[str] = (
    frozenset(r.kind for r in RULES if not r.personal) | DETECTOR_KINDS | {"private"}
)
KINDS: frozenset[str] = SECRET_KINDS | PERSONAL_KINDS
"""Every kind :func:`find_secrets` can report; all but ``private`` appear in markers."""

_ID_CONTROLS = lazy(r"[\x00-\x1f\x7f-\x9f]")
_PRIVATE_TAG = lazy(r"<(?P<close>/)?private(?:\s[^>]*)?>", re.IGNORECASE)

# -- the gate in front of detect-secrets ----------------------------------------------------
# A keyword that names a secret, an assignment, and a value that is not already a marker.
_KEYWORD_GATE = lazy(
    r"(?:pass|pwd|secret|key|token|auth|cred|cookie|session|sig)[\w.-]*[\"'\]`]{0,2}"
    r"(?P<op>[ \t]*(?::=|=>|={1,3}|:)(?P<space>[ \t]*))(?P<quote>[\"'`]?)"
    r"(?P<value>(?!\[redacted:)[^\s\"'`]+)",
    re.IGNORECASE,
)
# Runs of token characters long enough to be a key; _token_like decides on each run.
_RUN = lazy(r"[A-Za-z0-9+/_.-]{20,}")
# Lower-case hex keys behind a vendor prefix (Mailchimp's "<hex>-us6", "shpat_<hex>", ...).
_HEX_KEY = lazy(r"[0-9a-f]{32}-us\d|\b[A-Za-z]{2,8}_(?:[a-z0-9]{1,4}_)?[0-9a-f]{32,}")


_ID_PREFIX = lazy(r"^[a-z]{1,8}_")


def _token_like(run: str) -> bool:
    upper = lower = digits = 0
    for c in _ID_PREFIX.sub("", run, count=1):
        if c.isdigit():
            digits += 1
        elif c.isupper():
            upper += 1
        elif c.islower():
            lower += 1
    return digits >= 2 and upper >= 2 and lower >= 2


_KEYWORDS = ("pass", "pwd", "secret", "key", "token", "auth", "cred", "cookie", "session", "sig")
_MIN_KEYWORD_LINE = 8  # "pwd=abcd"


def _keyword_gate(text: str) -> bool:
    for m in _KEYWORD_GATE.finditer(text):
        quote = m["quote"]
        value = m["value"] if quote else m["value"].rstrip(",;")
        if plausible(
            value, text, quoted=bool(quote), spaced=bool(m["space"]), quote=quote, end=m.end()
        ):
            return True
    return False


def needs_detectors(text: str, low: str | None = None) -> bool:
    """Whether ``text`` could hold something only the detect-secrets layer finds."""
    if len(text) < _MIN_KEYWORD_LINE:
        return False
    if low is None:
        low = text.lower()
    for word in _KEYWORDS:  # plain substring checks first: most text has none of them
        if word in low:
            if _keyword_gate(text):
                return True
            break
    if len(text) < 20:
        return False
    if len(text) >= 32 and _HEX_KEY.search(text):
        return True
    return any(_token_like(m[0]) for m in _RUN.finditer(text))


# -- counting -------------------------------------------------------------------------------
class Tally:
    """Redactions counted per kind: for the whole command, and since the last audit entry."""

    def __init__(self) -> None:
        self.total: Counter[str] = Counter()
        self._pending: Counter[str] = Counter()
        #: Set once the counts went out with the command's output (a JSON field).
        self.reported = False

    def add(self, kind: str) -> None:
        """Count one redaction."""
        self.total[kind] += 1
        self._pending[kind] += 1

    def take_pending(self) -> dict[str, int]:
        """What was counted since the last call (an audit entry's share), then reset."""
        pending = dict(sorted(self._pending.items()))
        self._pending.clear()
        return pending

    def counts(self) -> dict[str, int]:
        """Everything counted, by kind (sorted)."""
        return dict(sorted(self.total.items()))

    def describe(self) -> str:
        """``3 redactions (email 2, password 1)``."""
        n = sum(self.total.values())
        kinds = ", ".join(f"{k} {v}" for k, v in self.counts().items())
        return f"{n} redaction{'s' if n != 1 else ''} ({kinds})"


_TALLY: ContextVar[Tally | None] = ContextVar("memwork_redaction_tally", default=None)


@contextmanager
def counting() -> Iterator[Tally]:
    """Count every redaction made inside the block (nested blocks share the outer tally)."""
    outer = _TALLY.get()
    if outer is not None:
        yield outer
        return
    tally = Tally()
    token = _TALLY.set(tally)
    try:
        yield tally
    finally:
        _TALLY.reset(token)


def current_tally() -> Tally | None:
    """The tally of the enclosing :func:`counting` block, if any."""
    return _TALLY.get()


# -- scrubbing --------------------------------------------------------------------------------
def _remove_private(text: str, found: list[tuple[str, str]] | None) -> str:
    # Depth-counted rather than one lazy regex, so nested spans cannot leak their tail.
    out: list[str] = []
    pos = depth = 0
    start = 0
    for tag in _PRIVATE_TAG.finditer(text):
        if tag["close"] is None:
            if depth == 0:
                start = tag.start()
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                pos = _cut(text, out, pos, start, tag.end(), found)
    if depth > 0:  # unterminated: everything after the opening tag is private
        pos = _cut(text, out, pos, start, len(text), found)
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _cut(
    text: str, out: list[str], pos: int, start: int, end: int, found: list[tuple[str, str]] | None
) -> int:
    if found is not None:
        found.append(("private", text[start:end]))
    out.append(text[pos:start])
    # "a <private>x</private> b" should read "a b", not "a  b".
    if end < len(text) and text[end] == " " and (start == 0 or text[start - 1] == " "):
        end += 1
    return end


def _apply_rule(rule: Rule, text: str, found: list[tuple[str, str]] | None) -> str:
    def repl(m: re.Match[str]) -> str:
        if rule.keep is not None and rule.keep(m):
            return m[0]
        if found is not None:
            found.append((rule.kind, m["secret"]))
        s, e = m.span("secret")
        base = m.start()
        return f"{m[0][: s - base]}[redacted:{rule.kind}]{m[0][e - base :]}"

    return rule.pattern.sub(repl, text)


def _scrub_once(
    text: str, found: list[tuple[str, str]] | None, personal: bool, generic: bool
) -> str:
    low = text.lower()
    if "<private" in low:
        text = _remove_private(text, found)
        low = text.lower()
    for rule in RULES:
        if rule.personal and not personal:
            continue
        if rule.triggers:
            for trigger in rule.triggers:  # a plain loop: any() with a generator costs ~0.3 us
                if trigger in low:
                    break
            else:
                continue
        if rule.gate is not None and rule.gate.search(text) is None:
            continue
        new = _apply_rule(rule, text, found)
        if new != text:
            text, low = new, new.lower()
    if needs_detectors(text, low):
        from . import detectors  # detect-secrets: only for text that may need it

        text = detectors.redact(text, found, generic=generic)
    return text


def _scrub_fixpoint(
    text: str, found: list[tuple[str, str]] | None, personal: bool, generic: bool = True
) -> str:
    text = strip_controls(text)
    # Removing a span can splice new text together ("<pri<private>x</private>vate>" leaves an
    # opening tag), so rescrub until nothing changes; markers never match a rule, so this stops
    # after one extra pass in practice. Clean text pays for a single pass.
    for _ in range(8):
        new = _scrub_once(text, found, personal, generic)
        if new == text:
            return text
        text = new
    return text


#: Short texts found to hold nothing to redact. The rules are fixed for the process, so
#: clean stays clean: a long-lived reader (an MCP or HTTP server) scrubs every line of
#: every context it exports again, and most are the same lines as last time. Only clean
#: texts are kept (a redaction is made, and counted, every time); bounded in count and
#: length.
_CLEAN: set[tuple[str, bool]] = set()
_CLEAN_MAX = 20_000
_CLEAN_LENGTH = 1_000


def scrub(text: str, *, personal: bool = True) -> str:
    """Return ``text`` with control characters and private spans removed and secrets
    replaced by ``[redacted:<kind>]``; personal details too unless ``personal`` is False.

    Idempotent, and text with nothing to redact is returned unchanged (the same object).
    """
    short = len(text) <= _CLEAN_LENGTH
    if short and (text, personal) in _CLEAN:
        return text
    tally = _TALLY.get()
    if tally is None:
        out = _scrub_fixpoint(text, None, personal)
    else:
        found: list[tuple[str, str]] = []
        out = _scrub_fixpoint(text, found, personal)
        for kind, _ in found:
            tally.add(kind)
    if short and out is text:
        if len(_CLEAN) >= _CLEAN_MAX:
            _CLEAN.clear()
        _CLEAN.add((text, personal))
    return out


def scrub_value(value: Any, *, personal: bool = True) -> Any:
    """Return a copy of ``value`` with every string inside dicts, lists and tuples scrubbed.

    Dict keys are left untouched; values of other types are returned as they are.
    """
    if isinstance(value, str):
        return scrub(value, personal=personal)
    if isinstance(value, dict):
        return {k: scrub_value(v, personal=personal) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_value(v, personal=personal) for v in value]
    if isinstance(value, tuple):
        return tuple(scrub_value(v, personal=personal) for v in value)
    return value


def find_secrets(text: str, *, personal: bool = True) -> list[tuple[str, str]]:
    """Return ``(kind, matched text)`` for everything :func:`scrub` would remove or redact.

    Private spans are reported with kind ``private``. Order follows the scrubbing passes.
    """
    found: list[tuple[str, str]] = []
    _scrub_fixpoint(text, found, personal)
    return found


@lru_cache(maxsize=4096)  # task ids, scopes and actors repeat across a batch
def identifier_problem(value: str) -> str | None:
    """Why ``value`` cannot be an identifier (a task or session id, a scope, a label...),
    or None when it can.

    Identifiers are stored and exported as given — scrubbing one would merge or break the
    records it links — so one that holds a control character or looks like a secret is
    refused instead. The entropy detectors count only behind a vendor prefix (``hf_…``,
    ``whsec_…``): a random-looking run id is a fine identifier; a token of a known shape,
    a vendor's key or ``password=…`` is not.
    """
    if _ID_CONTROLS.search(value):
        return "must not contain control characters (newlines and tabs included)"
    found: list[tuple[str, str]] = []
    _scrub_fixpoint(value, found, personal=False, generic=False)
    if found:
        kind = found[0][0]
        return f"must not contain a secret (found {kind}): identifiers are stored as given"
    return None
