"""Privacy scrubber: remove secrets (and, in what agents report, personal details) from text.

Everything that comes from outside passes :func:`scrub` before it is stored and every export
is scrubbed again, so scrubbing is idempotent, leaves clean text byte-identical, and is cheap
on the common case of text with nothing to redact. Layers, each replacing only the secret
with ``[redacted:<kind>]``:

1. control characters and ``<private>…</private>`` spans are removed;
2. memwork's own exact rules (:mod:`core.privacy.rules`: private-key blocks, credentials in
   URLs, Bearer and Basic values, SAS signatures, command-line passwords, card numbers, and
   the personal kinds), each run only when its trigger substrings occur;
3. gitleaks' rule set (:mod:`core.privacy.gitleaks`, ~220 vendor token formats loaded as
   data; the kind is the rule's id, such as ``gitlab-pat``): one keyword pass decides
   which rules run and where;
4. secret-named assignments, vendor-prefixed random tokens and four ported formats
   (:mod:`core.privacy.assign`; kinds ``password``, ``secret``, ``token``, …).

Personal details (e-mail and IP addresses, home-directory paths) are redacted with
``personal=True`` (the default: what agents report) and kept with ``personal=False``
(curated slots, where a person put them on purpose). Secrets go either way.

Structured values (:func:`scrub_value`: episode metadata, working-memory values) are
scrubbed string by string, and a value under a key that names a secret (``password``,
``api_key``, ``Authorization``, ``GITLAB_TOKEN``...) is redacted whatever it looks like,
at any depth.

Redactions can be counted: inside :func:`counting`, every redaction adds to the current
:class:`Tally`, which the CLI reports and :func:`core.ledger.audit.record` attaches to the
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

from ..base.lazy_regex import lazy
from ..base.text import not_unicode
from .assign import names_secret
from .controls import has_controls, strip_controls
from .rules import RULES, Rule

__all__ = [
    "IDENT_MAX",
    "PERSONAL_KINDS",
    "Tally",
    "counting",
    "current_tally",
    "find_secrets",
    "has_controls",
    "identifier_problem",
    "is_clean",
    "names_secret",
    "scrub",
    "scrub_under",
    "scrub_value",
    "secret_kinds",
    "strip_controls",
]

PERSONAL_KINDS: frozenset[str] = frozenset(r.kind for r in RULES if r.personal)
#: Kinds of :mod:`core.privacy.assign` (assignments, prefixed tokens, ported formats).
ASSIGN_KINDS: frozenset[str] = frozenset(
    {
        "password",
        "secret",
        "token",
        "artifactory-token",
        "mailchimp-key",
        "twilio-account-sid",
        "discord-bot-token",
    }
)

_ID_CONTROLS = lazy(r"[\x00-\x1f\x7f-\x9f]")
_PRIVATE_TAG = lazy(r"<(?P<close>/)?private(?:\s[^>]*)?>", re.IGNORECASE)
_MARKER = lazy(r"\[redacted:[^\]\s]*\]")
#: Generic kinds give way to a named one when two findings overlap.
_GENERIC = frozenset({"generic-api-key", "secret", "password", "token"})


def secret_kinds() -> frozenset[str]:
    """Every kind a secret can be redacted as (rule ids of the shipped rule set included)."""
    from .gitleaks import rule_set

    own = frozenset(r.kind for r in RULES if not r.personal)
    return own | frozenset(rule_set().ids) | ASSIGN_KINDS | {"private"}


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
Found = list[tuple[str, str]]


def _remove_private(text: str, found: Found | None) -> str:
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


def _cut(text: str, out: list[str], pos: int, start: int, end: int, found: Found | None) -> int:
    if found is not None:
        found.append(("private", text[start:end]))
    out.append(text[pos:start])
    # "a <private>x</private> b" should read "a b", not "a  b".
    if end < len(text) and text[end] == " " and (start == 0 or text[start - 1] == " "):
        end += 1
    return end


def _apply_rule(rule: Rule, text: str, found: Found | None) -> str:
    def repl(m: re.Match[str]) -> str:
        if rule.keep is not None and rule.keep(m):
            return m[0]
        if found is not None:
            found.append((rule.kind, m["secret"]))
        s, e = m.span("secret")
        base = m.start()
        return f"{m[0][: s - base]}[redacted:{rule.kind}]{m[0][e - base :]}"

    return rule.pattern.sub(repl, text)


def _own_rules(text: str, low: str, found: Found | None, personal: bool) -> tuple[str, str]:
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
    return text, low


_ENGINE: Any = None


def _engine() -> Any:
    """(the rule set, the assignment layer, lower_aligned), loaded on the first scrub: a
    function-level import on every call would cost more than scanning a short text."""
    global _ENGINE
    if _ENGINE is None:
        from . import assign
        from .gitleaks import lower_aligned, rule_set

        _ENGINE = (rule_set(), assign, lower_aligned)
    return _ENGINE


def _spans(text: str, low: str) -> list[tuple[int, int, str]]:
    """Secrets the rule set and the assignment layer find, as (start, end, kind)."""
    rules, assign, lower_aligned = _engine()
    if len(low) != len(text):  # a few characters lower-case to two: keep positions
        low = lower_aligned(text)
    spans = [(s, e, rule) for s, e, rule, _ in rules.find(text, low)]
    spans += assign.find(text, low)
    spans += assign.find_prefixed(text)
    spans += assign.find_ported(text)
    return spans


_TOKEN_TAIL = lazy(r"[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]{8,})*", re.ASCII)


def _token_end(text: str, end: int, n: int) -> int:
    """Where the token a finding ends in really ends.

    A key that goes on past what its rule takes ("xoxa-2-<digits>-<random>", a SendGrid
    key's second dotted part) is redacted to its end: the tail of a key is part of the
    key. A dot continues a token only before 8+ token characters, so "hf_….json" and a
    sentence's full stop end it.
    """
    if end >= n or not (text[end] in "_-." or (text[end].isalnum() and text[end].isascii())):
        return end
    m = _TOKEN_TAIL.compiled.match(text, end)
    return m.end() if m else end


def _redact_spans(text: str, spans: list[tuple[int, int, str]], found: Found | None) -> str:
    """``text`` with each span replaced by its marker (overlaps merged; existing markers
    are never redacted again)."""
    markers = [(m.start(), m.end()) for m in _MARKER.finditer(text)] if "[redacted:" in text else []
    merged: list[list[Any]] = []
    n = len(text)
    for s, e, kind in sorted(spans, key=lambda x: (x[0], -x[1])):
        if e <= s or any(ms < e and s < me for ms, me in markers):
            continue
        e = _token_end(text, e, n)
        if merged and s < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], e)
            if last[2] in _GENERIC and (kind not in _GENERIC or kind == "password"):
                # A named rule's kind wins over the generic ones, and among those a
                # password says most ("password>" taking a next line's "passwd=…").
                last[2] = kind
            continue
        merged.append([s, e, kind])
    if not merged:
        return text
    out: list[str] = []
    pos = 0
    for s, e, kind in merged:
        if found is not None:
            found.append((kind, text[s:e]))
        out.append(text[pos:s])
        out.append(f"[redacted:{kind}]")
        pos = e
    out.append(text[pos:])
    return "".join(out)


def _scrub_once(text: str, found: Found | None, personal: bool) -> str:
    low = text.lower()
    if "<private" in low:
        text = _remove_private(text, found)
        low = text.lower()
    text, low = _own_rules(text, low, found, personal)
    spans = _spans(text, low)
    return _redact_spans(text, spans, found) if spans else text


def _scrub_fixpoint(text: str, found: Found | None, personal: bool) -> str:
    text = strip_controls(text)
    # Removing a span can splice new text together ("<pri<private>x</private>vate>" leaves an
    # opening tag), so rescrub until nothing changes; markers never match a rule, so this stops
    # after one extra pass in practice. Clean text pays for a single pass.
    for _ in range(8):
        new = _scrub_once(text, found, personal)
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


def is_clean(text: str, *, personal: bool = True) -> bool:
    """Whether :func:`scrub` would leave ``text`` as it is. Nothing is counted as a
    redaction, and nothing is remembered (the recall index asks this of every record's
    title once, to seal it: :mod:`core.privacy.seal`)."""
    if len(text) <= _CLEAN_LENGTH and (text, personal) in _CLEAN:
        return True
    return _scrub_fixpoint(text, None, personal) == text


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
        found: Found = []
        out = _scrub_fixpoint(text, found, personal)
        for kind, _ in found:
            tally.add(kind)
    if short and out is text:
        if len(_CLEAN) >= _CLEAN_MAX:
            _CLEAN.clear()
        _CLEAN.add((text, personal))
    return out


# -- structured values ------------------------------------------------------------------------
def _redact_whole(value: Any, kind: str) -> Any:
    """A value under a secret-named key: every string and number in it becomes a marker
    (``None``, booleans and empty strings say nothing and stay)."""
    if isinstance(value, bool) or value is None or value == "":
        return value
    if isinstance(value, str | int | float):
        tally = _TALLY.get()
        if tally is not None:
            tally.add(kind)
        return f"[redacted:{kind}]" if not str(value).startswith("[redacted:") else value
    if isinstance(value, dict):
        return {k: _redact_whole(v, kind) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_redact_whole(v, kind) for v in value)
    return value


def scrub_value(value: Any, *, personal: bool = True) -> Any:
    """Return a copy of ``value`` with every string inside dicts, lists and tuples scrubbed.

    A value under a dict key that names a secret (:func:`names_secret`) is redacted whole,
    at any depth; a key that itself holds a secret is scrubbed like text. Values of other
    types are returned as they are.
    """
    if isinstance(value, str):
        return scrub(value, personal=personal)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            kind = names_secret(k) if isinstance(k, str) else None
            key = scrub(k, personal=False) if isinstance(k, str) else k
            out[key] = _redact_whole(v, kind) if kind else scrub_value(v, personal=personal)
        return out
    if isinstance(value, list):
        return [scrub_value(v, personal=personal) for v in value]
    if isinstance(value, tuple):
        return tuple(scrub_value(v, personal=personal) for v in value)
    return value


def scrub_under(key: str, value: Any, *, personal: bool = True) -> Any:
    """``value`` as it may be stored under ``key`` (a working-memory key, a metadata key):
    redacted whole when the key names a secret, else :func:`scrub_value`."""
    kind = names_secret(key)
    return _redact_whole(value, kind) if kind else scrub_value(value, personal=personal)


def find_secrets(text: str, *, personal: bool = True) -> list[tuple[str, str]]:
    """Return ``(kind, matched text)`` for everything :func:`scrub` would remove or redact.

    Private spans are reported with kind ``private``. Order follows the scrubbing passes.
    """
    found: Found = []
    _scrub_fixpoint(text, found, personal)
    return found


#: Longest name an identifier may hold: a task, worker or agent id, a slot label, a
#: working-memory key, the name in a ``task:`` or ``project:`` scope, the agent in an actor.
IDENT_MAX = 200
_NAMED = ("task:", "project:", "agent:", "cli:", "mcp:", "api:", "tui:")


def identifier_problem(value: str) -> str | None:
    """Why ``value`` cannot be an identifier (a task or session id, a scope, a label...),
    or None when it can: the one rule every identifier follows, whichever door it comes
    through.

    Identifiers are stored and exported as given — scrubbing one would merge or break the
    records it links — so one that is too long (over :data:`IDENT_MAX` characters, not
    counting a ``task:``/``project:``/actor prefix), holds a control character or a
    secret (a token of a known format, a vendor-prefixed key, ``password=…``) is refused
    instead. Personal details are not secrets here: an agent id may be an e-mail address.
    """
    name = value.split(":", 1)[1] if value.startswith(_NAMED) else value
    if len(name) > IDENT_MAX:  # before the cache: a megabyte key must not be kept in it
        return f"must be at most {IDENT_MAX} characters (got {len(name):,})"
    # (An environment variable's bytes that are not UTF-8 arrive as such text.)
    return not_unicode(value) or _identifier_problem(value)


@lru_cache(maxsize=4096)  # task ids, scopes and actors repeat across a batch
def _identifier_problem(value: str) -> str | None:
    if _ID_CONTROLS.search(value):
        return "must not contain control characters (newlines and tabs included)"
    found: Found = []
    _scrub_fixpoint(value, found, personal=False)
    if found:
        kind = found[0][0]
        return f"must not contain a secret (found {kind}): identifiers are stored as given"
    return None
