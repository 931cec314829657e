"""Privacy scrubber: redact secrets and personal data from text that agents write.

Everything an agent writes passes through :func:`scrub` before it is stored and every export
is scrubbed again, so scrubbing must be idempotent, must leave clean text byte-identical, and
must be cheap on the common case of text that contains nothing to redact.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["KINDS", "find_secrets", "scrub", "scrub_value"]


class _Rule(NamedTuple):
    kind: str
    # Lowercase substrings, checked against the lowercased text: the regex only runs if one of
    # them occurs, which is what keeps ordinary text cheap.
    triggers: tuple[str, ...]
    # Every pattern has a ``secret`` group; only that span is replaced, so context such as a
    # URL scheme, a "Bearer " prefix or the rest of a home path stays readable.
    pattern: re.Pattern[str]
    # Returns True for matches that look like a secret but are not (loopback IPs, slices...).
    keep: Callable[[re.Match[str]], bool] | None = None
    # Cheap pre-check for rules whose triggers are common characters: a search on a pattern
    # that starts with a literal is several times faster than the lookbehind-led pattern.
    gate: re.Pattern[str] | None = None


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_URL_CREDS_CHARS = r"[^\s/?#\[\]<>\"'`]"  # no "[" so our own markers never look like creds
_WIN_USER = r"[\w$-]+(?:\.[\w$-]+)*"


def _keep_bearer(m: re.Match[str]) -> bool:
    # Prose such as "Bearer authentication" has no digits; real tokens practically always do.
    return not any(c.isdigit() for c in m["secret"])


def _keep_ipv4(m: re.Match[str]) -> bool:
    # Loopback and "any" addresses say nothing about a person or a network and are useful
    # in notes like "the dev server listens on 127.0.0.1:8000".
    return m["secret"].startswith("127.") or m["secret"] == "0.0.0.0"


def _keep_ipv6(m: re.Match[str]) -> bool:
    addr = m["secret"].split("%", 1)[0]
    # Shape checks first: they are cheap, and ipaddress costs microseconds per candidate.
    hexdigits = [c for c in addr if c in "0123456789abcdefABCDEF"]
    if len(hexdigits) < 4 or not any(c.isdigit() for c in hexdigits):
        return True  # ::1, a::b, C++ names spelled in hex letters such as Face::Add
    if addr.count(":") <= 2 and not any(c.isalpha() for c in hexdigits):
        return True  # Python slices: a[10::20]
    try:
        import ipaddress  # rarely needed: only for a candidate that looks like IPv6

        ip = ipaddress.IPv6Address(addr)
    except ValueError:
        return True  # clock times, MAC addresses and other colon runs
    return ip.is_loopback or ip.is_unspecified


_RULES: tuple[_Rule, ...] = (
    _Rule(
        "private_key",
        ("-----begin",),
        # An unterminated block is redacted to the end: a truncated key is still a key.
        re.compile(
            r"(?P<secret>-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"
            r".*?(?:-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\Z))",
            re.DOTALL,
        ),
    ),
    _Rule(
        "credentials",
        ("@",),
        # Greedy up to the last "@" of the authority, so passwords containing "@" do not leak.
        re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://"
            rf"(?P<secret>{_URL_CREDS_CHARS}+)@"
        ),
        keep=lambda m: m["secret"] == "git",  # ssh://git@github.com/... names no one
        gate=re.compile(rf"://{_URL_CREDS_CHARS}+@"),
    ),
    _Rule(
        "bearer",
        ("bearer",),
        re.compile(r"\bbearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{8,}=*)", re.IGNORECASE),
        keep=_keep_bearer,
    ),
    _Rule(
        "basic_auth",
        ("authorization",),
        re.compile(
            r"authorization[\"']?\s*[:=]\s*[\"']?basic[ \t]+(?P<secret>[A-Za-z0-9+/]{6,}={0,2})",
            re.IGNORECASE,
        ),
    ),
    _Rule(
        "jwt",
        ("eyj",),
        re.compile(r"(?<![\w-])(?P<secret>eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*)", re.ASCII),
    ),
    _Rule(
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        re.compile(
            r"(?<![\w-])(?P<secret>gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,})", re.ASCII
        ),
    ),
    _Rule(
        "slack_token",
        ("xox",),
        re.compile(r"(?<![\w-])(?P<secret>xox[abeoprs]-[A-Za-z0-9-]{10,})"),
    ),
    _Rule(
        "aws_key",
        ("akia", "asia"),
        re.compile(r"(?<![A-Za-z0-9])(?P<secret>(?:AKIA|ASIA)[A-Z0-9]{16})(?![A-Za-z0-9])"),
    ),
    _Rule(
        "api_key",
        ("sk-", "_live_", "_test_", "aiza"),
        # "sk-" needs a long key-like tail so words such as risk-free or desk-lamp survive.
        re.compile(
            r"(?<![\w-])(?P<secret>sk-[\w-]{20,}|[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}"
            r"|AIza[\w-]{30,})",
            re.ASCII,
        ),
    ),
    _Rule(
        "email",
        ("@",),
        re.compile(
            r"(?<![\w.%+-])(?P<secret>(?P<local>[\w.%+-]+)@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,})"
            r"(?![\w-])",
            re.ASCII,
        ),
        keep=lambda m: m["local"] == "git",  # git@github.com:org/repo.git is a remote, not a person
        gate=re.compile(r"@[A-Za-z0-9-]+\.[A-Za-z]"),
    ),
    _Rule(
        "ipv6",
        (":",),
        # A loose candidate; _keep_ipv6 validates with ipaddress and rejects code-like shapes.
        re.compile(
            r"(?<![\w:.])(?P<secret>(?:[0-9A-Fa-f]{0,4}:){2,7}"
            rf"(?:{_OCTET}(?:\.{_OCTET}){{3}}|[0-9A-Fa-f]{{1,4}})?(?:%[0-9A-Za-z_.-]+)?)"
            r"(?![\w:]|\.\w)"
        ),
        keep=_keep_ipv6,
        # Any address has "::" or, uncompressed, seven colons; clock times have neither.
        gate=re.compile(r"::|:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:"),
    ),
    _Rule(
        "ipv4",
        (".",),
        # Exactly four dotted octets, not glued to more digits: v1.2.3.4 and 1.2.3.4.5 are
        # version numbers, not addresses.
        re.compile(rf"(?<![\w.])(?P<secret>{_OCTET}(?:\.{_OCTET}){{3}})(?!\w|\.[0-9])"),
        keep=_keep_ipv4,
        gate=re.compile(r"\.[0-9]{1,3}\.[0-9]{1,3}\."),
    ),
    _Rule(
        "home_path",
        ("\\users", ":/users"),
        # Windows user names may contain spaces; accept them only when a separator follows,
        # so "C:\Users\carol is here" does not swallow the sentence. Runs before the
        # POSIX rule, which would otherwise take the "/Users/carol" out of "C:/Users/carol".
        re.compile(
            r"(?<![A-Za-z])(?P<secret>[A-Za-z]:(?:\\{1,2}|/)(?i:users)(?:\\{1,2}|/)"
            rf"{_WIN_USER}(?:(?: {_WIN_USER})+(?=[\\/]))?)"
        ),
    ),
    _Rule(
        "home_path",
        ("/home/", "/users/"),
        # Not preceded by a word character, so URL paths like example.com/home/about survive;
        # "]" is excluded too so the rest of an already-redacted path is never re-matched.
        re.compile(r"(?<![\w.\]-])(?P<secret>/(?:home|Users)/[\w-]+(?:\.[\w-]+)*)"),
    ),
)

KINDS: frozenset[str] = frozenset(r.kind for r in _RULES) | {"private"}
"""Every kind :func:`find_secrets` can report; all but ``private`` appear in markers."""

_PRIVATE_TAG = re.compile(r"<(?P<close>/)?private(?:\s[^>]*)?>", re.IGNORECASE)


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


def _scrub_once(text: str, found: list[tuple[str, str]] | None) -> str:
    low = text.lower()
    if "<private" in low:
        text = _remove_private(text, found)
        low = text.lower()
    for rule in _RULES:
        for trigger in rule.triggers:  # a plain loop: any() with a generator costs ~0.3 us
            if trigger in low:
                break
        else:
            continue
        if rule.gate is not None and rule.gate.search(text) is None:
            continue

        def repl(m: re.Match[str], rule: _Rule = rule) -> str:
            if rule.keep is not None and rule.keep(m):
                return m[0]
            if found is not None:
                found.append((rule.kind, m["secret"]))
            s, e = m.span("secret")
            base = m.start()
            return f"{m[0][: s - base]}[redacted:{rule.kind}]{m[0][e - base :]}"

        new = rule.pattern.sub(repl, text)
        if new != text:
            text, low = new, new.lower()
    return text


def _scrub_fixpoint(text: str, found: list[tuple[str, str]] | None) -> str:
    # Removing a span can splice new text together ("<pri<private>x</private>vate>" leaves an
    # opening tag), so rescrub until nothing changes; markers never match a rule, so this stops
    # after one extra pass in practice. Clean text pays for a single pass.
    for _ in range(8):
        new = _scrub_once(text, found)
        if new == text:
            return text
        text = new
    return text


def scrub(text: str) -> str:
    """Return ``text`` with private spans removed and secrets replaced by ``[redacted:<kind>]``.

    Idempotent, and text with nothing to redact is returned unchanged (the same object).
    """
    return _scrub_fixpoint(text, None)


def scrub_value(value: Any) -> Any:
    """Return a copy of ``value`` with every string inside dicts, lists and tuples scrubbed.

    Dict keys are left untouched; values of other types are returned as they are.
    """
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: scrub_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(scrub_value(v) for v in value)
    return value


def find_secrets(text: str) -> list[tuple[str, str]]:
    """Return ``(kind, matched text)`` for everything :func:`scrub` would remove or redact.

    Private spans are reported with kind ``private``. Order follows the scrubbing passes.
    """
    found: list[tuple[str, str]] = []
    _scrub_fixpoint(text, found)
    return found
