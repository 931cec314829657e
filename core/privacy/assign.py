"""What the rule set's shapes miss: secret-named assignments, vendor-prefixed random
tokens, and four token formats ported from detect-secrets.

**Assignments.** gitleaks' generic rule wants a value of ``[\\w.=-]{10,150}`` followed by a
quote, a space or ``;``, so ``API_KEY=…: PASSWORD=Tr0ub4dor&3`` (``:`` and ``&`` end nothing
there), short passwords, passwords with symbols and ``--token X`` flags pass it. Here:

- the key's last word must name a secret (``DB_PASSWORD``, ``xToken``, ``X-API-Key``,
  ``client_secret``, ``session_id``): ``AUTH_PROVIDER``, ``token_url``, ``KEY_SIZE``,
  ``password_hash`` and ``max_tokens`` name settings, not secrets;
- the value must not be a placeholder, a reference (``$X``, ``${X}``,
  ``os.environ[...]``, ``settings.SECRET_KEY``, ``{{ secrets.X }}``), a number, a path or
  URL, a UUID or a bare word (a password-named key may hold a word at the end of a line:
  ``PASSWORD=changeme``); a key that is not a password needs 10+ characters with a digit
  and some entropy;
- forms: ``KEY=v`` ``KEY: v`` ``KEY := "v"`` ``KEY ::= v`` ``KEY ?= v`` ``KEY => v``,
  ``"KEY": "v"``, ``("KEY", "v")`` (``System.setProperty``, ``put``), ``--key v`` and
  ``--key=v``; an unquoted value ends at white space, at ``;`` or ``&`` before the next
  ``name=``, and loses a trailing ``: , ; . )``.

**Prefixed tokens.** Vendors mark keys with a short prefix and a random body (``hf_``,
``whsec_``, ``gsk_``, ``dop_v1_``, ``SG.``, ``GOCSPX-``); the rule set knows many, not all,
and is strict on each body's length. A prefix, then 16+ characters mixing digits, upper
and lower case with high entropy, is a token. Keyword-less base64, hashes and memwork's
own ids (``ep_01JD3Q…``: no lower case) are left alone.

**Ported.** detect-secrets 1.5.0 (Apache-2.0, Yelp) recognises four formats gitleaks has
no rule for: Artifactory ``AKC…`` tokens, Mailchimp ``<hex32>-us6`` keys without a
keyword, Twilio ``AC…`` account SIDs and Discord bot tokens. Ported as four patterns
instead of importing detect-secrets (~200 ms) for them.

Every function returns ``(start, end, label)`` spans of secrets; keys and values are
bounded (64 and 256 characters) so no input makes a pattern backtrack for long.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

from ..base.lazy_regex import LazyPattern, lazy

__all__ = ["Span", "find", "find_ported", "find_prefixed", "names_secret", "secret_key_kind"]

Span = tuple[int, int, str]

# Matched on the lower-cased text, without re.IGNORECASE: an IGNORECASE alternation
# defeats the engine's literal prefix scan (~15x slower on ordinary text).
_STEM = re.compile(r"pass|pwd|secret|token|key|cred|auth|cookie|session|psk|pat\b|pw\b")
_KEY_SET = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$@-")
_KEY_TAIL = lazy(r"[\w.$@-]{0,64}", re.ASCII)
_OP_VALUE = lazy(
    r"""(?P<kq>["'`]?\]?)
        (?:
          (?P<op>[ \t]*(?::{1,3}=|\?=|\+=|=>|==?|:)[ \t]*)
        | (?P<comma>[ \t]*,[ \t]*)(?=["'`])
        | (?P<space>[ \t]+)
        )
        (?P<value>"(?:[^"\\\n]|\\.){0,256}"|'(?:[^'\\\n]|\\.){0,256}'|`[^`\n]{0,256}`
          |[^\s"'`]{1,256})
    """,
    re.VERBOSE | re.ASCII,
)
_WORDS = lazy(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_PASSWORDISH = frozenset(
    {"password", "passwd", "passwort", "pwd", "pass", "passphrase", "pw", "psk"}
)
_SECRETISH = _PASSWORDISH | {
    "secret",
    "token",
    "key",
    "apikey",
    "credential",
    "credentials",
    "creds",
    "cookie",
    "sessionid",
    "auth",
    "authorization",
    "pat",
    "privatekey",
    "accesskey",
    "secretkey",
}
_ID_OK_AFTER = frozenset({"key", "secret", "session", "token"})  # private_key_id, session_id
_ENV_NAME = lazy(r"(?:export\s+)?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_NEXT_FIELD = lazy(r"[;&](?=[A-Za-z_][\w.-]*=)")
_TRAIL = ":,;.)]}>"
_MARKER = "[redacted:"

_NUMBERISH = lazy(r"^[\d.,:_+=/-]+$")
_PLACEHOLDER = lazy(
    r"^(?:<[^>]*>?|\*+|x{3,}|\.{3,}|null|none|nil|true|false|yes|no|on|off|undefined|"
    r"redacted|required|optional|string|your[\w-]*|changeit|example[\w-]*|dummy|test|"
    r"secret|password|token|xxx+|\?+)$",
    re.IGNORECASE,
)
_REFERENCE = lazy(  # used with .match: every branch is anchored at the start
    r"(?:[$%@]|\{\{|\{%|\$\{|#\{|<%)"  # $X ${X} %X% @X@ {{ x }} #{x} <%= x %>
    r"|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?:\(\)?)?$"  # settings.SECRET_KEY
    r"|[\w.$]+[(\[]"  # os.environ[...], getenv(...)
    r"|(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z]+(?:_[a-z]+)+)$"  # ENV_NAME, snake_name
    r"|(?:/|\./|\.\./|~/|[A-Za-z]:\\)",  # paths
)
_UUID = lazy(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def secret_key_kind(key: str) -> str | None:
    """``password`` or ``secret`` when a key's last word names one, else None.

    ``DB_PASSWORD`` and ``passwd`` name passwords; ``api_key``, ``xToken``,
    ``client_secret``, ``session_id`` and ``Authorization`` name secrets; ``token_url``,
    ``password_hash``, ``max_tokens`` and ``auth_provider`` name neither.
    """
    words = [w.lower() for w in _WORDS.compiled.findall(key)]
    if not words:
        return None
    last = words[-1]
    if last == "id" and len(words) > 1 and words[-2] in _ID_OK_AFTER:
        return "secret"
    if last in _PASSWORDISH:
        return "password"
    if last in _SECRETISH:
        return "secret"
    return None


#: Qualifiers that make a key ending in "key" name a secret (``api_key``, ``PRIVATE_KEY``);
#: a bare ``key`` or ``sort_key`` names a place, not a secret.
_KEY_QUALIFIERS = frozenset(
    {
        "access",
        "account",
        "admin",
        "api",
        "app",
        "auth",
        "client",
        "consumer",
        "deploy",
        "encryption",
        "gpg",
        "license",
        "master",
        "pgp",
        "private",
        "root",
        "secret",
        "service",
        "shared",
        "signing",
        "ssh",
        "storage",
        "subscription",
        "webhook",
    }
)


@lru_cache(maxsize=1024)  # the same few keys repeat across records
def names_secret(key: str) -> str | None:
    """The kind (``password`` or ``secret``) when a structured value's key names a secret.

    ``password``, ``DB_PASSWORD``, ``token``, ``GITLAB_TOKEN``, ``api_key``, ``apiKey``,
    ``client_secret``, ``Authorization``, ``cookie``, ``credentials`` do; ``key``,
    ``sort_key``, ``token_count``, ``max_tokens``, ``session_id``, ``auth_provider`` and
    ``password_hash`` do not (an id or a setting, not a secret).
    """
    kind = secret_key_kind(key)
    if kind is None:
        return None
    words = [w.lower() for w in _WORDS.compiled.findall(key)]
    if words[-1] == "id":
        return None  # session_id, private_key_id: ids, not the secret they name
    if words[-1] == "key" and (len(words) < 2 or words[-2] not in _KEY_QUALIFIERS):
        return None
    return kind


def _structured_secret(value: str) -> bool:
    """A value under a quoted secret-named key: anything but nothing, a placeholder (an
    ellipsis, ``<your key>``), a reference or a marker."""
    if len(value) < 2 or _MARKER in value or value.lower() in ("null", "none", "true", "false"):
        return False
    if "\u2026" in value or "..." in value or not any(c.isalnum() for c in value):
        return False
    return _PLACEHOLDER.match(value) is None and _REFERENCE.match(value) is None


def _plausible(value: str, kind: str, quoted: bool, rest: str, env: bool = False) -> bool:
    if len(value) < 4 or _MARKER in value or "\u2026" in value or "..." in value:
        return False
    if "=" in value.rstrip("=") and not quoted:
        return False  # "sessionid=..." inside a Cookie header: the inner pair decides
    if _NUMBERISH.match(value) or _PLACEHOLDER.match(value) or _REFERENCE.match(value):
        return False
    if "://" in value:
        return False  # URLs: credentials in them are the URL rule's
    if _UUID.match(value):
        return False
    if len(set(value)) <= 2:
        return False  # "aaaa", "----"
    if value.isalpha():
        if kind != "password":
            return False  # 'include', 'github', "Enter": words, not keys
        if value.islower() and len(value) <= 4:
            return False
        # "the password: rotate it weekly" is a sentence; "PASSWORD=changeme" at the end
        # of a line (or quoted) is an assignment.
        return quoted or not rest.lstrip(",;").strip()[:1].isalnum()
    if " " in value:
        # quoted phrases: a passphrase for a password key, prose otherwise
        return kind == "password" and quoted and len(value) <= 64
    if kind != "password" and not env:
        if len(value) < 10 or not any(c.isdigit() for c in value):
            return False
        if _entropy(value) < 3.0:
            return False
    return len(value) >= 8 or kind == "password" or not env


def find(text: str, low: str) -> list[Span]:
    """Spans of values assigned to secret-named keys (``low``: ``text`` lower-cased, same
    positions)."""
    out: list[Span] = []
    seen_keys: set[int] = set()
    last_key_end = -1
    for m in _STEM.finditer(low):
        if m.start() < last_key_end:
            continue  # another stem inside the key just looked at ("api_key_token")
        # The key is the identifier run around the stem (at most 64 characters each way).
        ks = m.start()
        stop = max(0, ks - 64)
        while ks > stop and text[ks - 1] in _KEY_SET:
            ks -= 1
        tail = _KEY_TAIL.compiled.match(text, m.end())
        ke = tail.end() if tail else m.end()
        last_key_end = ke
        if ks in seen_keys:
            continue
        seen_keys.add(ks)
        key = text[ks:ke]
        flag = key.startswith("-")
        key_quoted = ks > 0 and text[ks - 1] in "\"'`"
        kind = secret_key_kind(key.lstrip("-$@"))
        if kind is None:
            continue
        ov = _OP_VALUE.compiled.match(text, ke)
        if ov is None:
            continue
        if ov["space"] is not None and not flag:
            continue  # "HF_TOKEN value" without an operator: too loose outside flags
        if ov["comma"] is not None and not (key_quoted and text[ks - 1] in "\"'"):
            continue  # ("X_TOKEN", "v") only with a quoted key (backticks list names)
        if ov["kq"] and not key_quoted:
            continue
        if flag and ov["op"] is not None and "=" not in ov["op"]:
            continue
        raw = ov["value"]
        vs = ov.start("value")
        quoted = raw[:1] in "\"'`" and len(raw) >= 2 and raw[-1] == raw[0]
        if quoted:
            value, vs = raw[1:-1], vs + 1
        else:
            if flag and raw.startswith("-"):
                continue  # "--token --verbose": the flag takes no value here
            value = _NEXT_FIELD.split(raw, maxsplit=1)[0]
            while value and value[-1] in _TRAIL:
                value = value[:-1]
        # A key in quotes, as in JSON or a dict literal ('"apiKey": 12345678'): its value
        # is redacted whatever it looks like, as a structured value's would be. (Not in
        # backticks: "`access_key`, `region`" is Markdown naming two settings.)
        json_key = key_quoted and text[ks - 1] in "\"'" and ov["kq"][:1] == text[ks - 1]
        prefix = not quoted and text[vs + len(value) : vs + len(value) + 1] in ('"', "'")
        if (
            json_key
            and raw[:1] != "`"
            and not prefix  # f"Bearer {token}": a string's prefix, not its value
            and names_secret(key)
            and _structured_secret(value)
        ):
            out.append((vs, vs + len(value), kind))
            continue
        rest = text[vs + len(value) : vs + len(value) + 80].split("\n", 1)[0]
        # An environment variable set in a shell or .env line (LETTABOT_API_KEY=some-words)
        # holds whatever the service was given: no digit or entropy asked of it.
        env = ov["op"] is not None and ov["op"].strip() == "=" and _ENV_NAME.match(key) is not None
        if _plausible(value, kind, quoted, rest, env):
            out.append((vs, vs + len(value), kind))
    return out


# -- vendor-prefixed random tokens ----------------------------------------------------------
# A separator followed by 20+ token characters is found first (one cheap scan), the prefix
# before the separator is checked after: a pattern led by the prefix and a lookbehind
# costs several times more on long text.
_SEP_RUN = re.compile(r"[_.-][A-Za-z0-9_-]{20,}", re.ASCII)
_PREFIX_BEFORE = {
    "_": lazy(r"(?<![\w.-])[a-z]{2,8}$", re.ASCII),
    ".": lazy(r"(?<![\w.-])(?:[A-Z]{2,8}|[a-z0-9]{2,8})$", re.ASCII),
    "-": lazy(r"(?<![\w.-])[A-Z]{2,8}$", re.ASCII),
}
_SUBPREFIX = lazy(r"[a-z0-9]{1,4}_", re.ASCII)  # dop_v1_..., sk_live_...
_INNER_DIGIT = lazy(r"[A-Za-z][0-9]+[A-Za-z]")


def _looks_random(s: str) -> bool:
    """Digits, upper and lower case interleaved with near-maximal entropy: a key drawn at
    random. CamelCase names, paths and versions have long letter streaks and repeats."""
    digits = sum(c.isdigit() for c in s)
    upper = sum(c.isupper() for c in s)
    lower = sum(c.islower() for c in s)
    if digits < 2 or upper < 2 or lower < 2:
        return False
    if _INNER_DIGIT.search(s) is None:
        return False
    return _entropy(s) >= min(4.3, math.log2(len(s)) - 0.45)


def find_prefixed(text: str) -> list[Span]:
    """Spans of vendor-prefixed random tokens (label ``token``)."""
    out: list[Span] = []
    for m in _SEP_RUN.finditer(text):
        sep = m.start()
        prefix = _PREFIX_BEFORE[text[sep]].compiled.search(text, max(0, sep - 8), sep)
        if prefix is None:
            continue
        body = m.group()[1:]
        sub = _SUBPREFIX.match(body)
        if sub and len(body) - sub.end() >= 16:
            body = body[sub.end() :]
        if len(body) >= 16 and _looks_random(body) and not _UUID.match(body):
            out.append((prefix.start(), m.end(), "token"))
    return out


# -- four detect-secrets 1.5.0 patterns (Apache-2.0, Yelp/detect-secrets) -------------------
_PORTED: tuple[tuple[str, str, LazyPattern], ...] = (
    # (label, substring that must occur (case-sensitive), pattern with a "secret" group)
    (
        "artifactory-token",
        "AKC",
        lazy(r'(?:\s|=|:|"|^)(?P<secret>AKC[a-zA-Z0-9]{10,})(?=\s|"|$)', re.ASCII),
    ),
    (
        "mailchimp-key",
        "-us",
        lazy(r"(?<![0-9a-z])(?P<secret>[0-9a-z]{32}-us[0-9]{1,2})(?![0-9a-z])", re.ASCII),
    ),
    (
        "twilio-account-sid",
        "AC",
        lazy(r"(?<![A-Za-z0-9])(?P<secret>AC[a-z0-9]{32})(?![A-Za-z0-9])", re.ASCII),
    ),
    (
        "discord-bot-token",
        ".",
        lazy(
            r"(?<![\w-])(?P<secret>[MNO][a-zA-Z\d_-]{23,25}\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27})"
            r"(?![\w-])",
            re.ASCII,
        ),
    ),
)
_DISCORD_GATE = lazy(r"\.[\w-]{6}\.", re.ASCII)


def find_ported(text: str) -> list[Span]:
    """Spans of the four ported formats (labelled as above)."""
    out: list[Span] = []
    for label, needed, pattern in _PORTED:
        if needed not in text:
            continue
        if label == "discord-bot-token" and _DISCORD_GATE.search(text) is None:
            continue
        out.extend((m.start("secret"), m.end("secret"), label) for m in pattern.finditer(text))
    return out
