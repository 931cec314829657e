"""detect-secrets' detectors, run on one line of text at a time.

detect-secrets (Yelp) keeps a maintained set of plugins: vendor token formats
(AWS, Azure storage, GitHub, GitLab, npm, PyPI, SendGrid, Slack tokens and
webhooks, Stripe, Telegram, Twilio, Discord, Mailchimp, Square, IBM, ...), a
keyword detector for secret-named assignments and entropy detectors. memwork
takes every plugin the installed version ships (a newer detect-secrets brings
its new plugins along) except two: public IP addresses are a personal detail
handled by :mod:`core.privacy.rules` (kept in curated slots), and the hex
entropy detector flags commit hashes.

Plugins are called through ``analyze_string`` on a bare string: no file, no
baseline, no settings, no network. What they return is a secret's value; each
occurrence of it in the line is replaced by ``[redacted:<kind>]``.

On top of the plugins, two things detect-secrets leaves to its file scanning
are added here for free text:

- the keyword detector's "config file" patterns (``PASSWORD=x``, ``api_key: x``)
  with more keywords (``token``, ``auth``, ``cookie``, ``session``...), and
  filters for prose ("the password: rotate it") and code (``os.environ[...]``);
- an unquoted high-entropy detector (detect-secrets only looks at quoted
  strings): a run of 20+ token characters with digits, upper and lower case
  letters mixed and a high Shannon entropy, which catches tokens of vendors no
  plugin knows (Hugging Face ``hf_…``, Stripe ``whsec_…``, ``GOCSPX-…``).

This module is imported only for a line that passes the gate in
:mod:`core.privacy` (detect-secrets and its imports cost ~200 ms).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Protocol, cast

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.filters import heuristic
from detect_secrets.plugins import keyword
from detect_secrets.plugins.base import BasePlugin
from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin

from .values import MARKER, MIN_VALUE, plausible

__all__ = ["detect", "redact"]

#: Plugins left out, by class name (see the module docstring).
_LEFT_OUT = {"IPPublicDetector", "HexHighEntropyString"}
#: detect-secrets' secret types → memwork's kinds; an unknown type gets a slug of its name.
_KINDS = {
    "AWS Access Key": "aws_key",
    "Artifactory Credentials": "artifactory_token",
    "Azure Storage Account access key": "azure_storage_key",
    "Base64 High Entropy String": "high_entropy",
    "Basic Auth Credentials": "credentials",
    "Cloudant Credentials": "cloudant_credentials",
    "Discord Bot Token": "discord_token",
    "GitHub Token": "github_token",
    "GitLab Token": "gitlab_token",
    "IBM COS HMAC Credentials": "ibm_credentials",
    "IBM Cloud IAM Key": "ibm_credentials",
    "JSON Web Token": "jwt",
    "Mailchimp Access Key": "mailchimp_key",
    "NPM tokens": "npm_token",
    "OpenAI Token": "api_key",
    "Private Key": "private_key",
    "PyPI Token": "pypi_token",
    "SendGrid API Key": "sendgrid_key",
    "Slack Token": "slack_token",
    "SoftLayer Credentials": "softlayer_credentials",
    "Square OAuth Secret": "square_oauth",
    "Stripe Access Key": "api_key",
    "Telegram Bot Token": "telegram_token",
    "Twilio API Key": "twilio_key",
}
_MARKER = MARKER
_GENERIC = ("token", "high_entropy", "secret")
_MIN_VALUE = MIN_VALUE


def _kind_of(secret_type: str) -> str:
    return _KINDS.get(secret_type) or re.sub(r"\W+", "_", secret_type.lower()).strip("_")


class _EntropyPluginClass(Protocol):
    """A concrete entropy plugin class: its constructor takes only the limit."""

    def __call__(self, *, limit: float) -> HighEntropyStringsPlugin: ...


def _build_plugins() -> tuple[list[tuple[str, BasePlugin]], list[HighEntropyStringsPlugin]]:
    vendors: list[tuple[str, BasePlugin]] = []
    entropy: list[HighEntropyStringsPlugin] = []
    # detect-secrets annotates the mapping with an unbound TypeVar; its values are plugin classes.
    mapping: Mapping[str, type[BasePlugin]] = get_mapping_from_secret_type_to_class()
    for secret_type, cls in sorted(mapping.items()):
        if cls.__name__ in _LEFT_OUT or cls.__name__ == "KeywordDetector":
            continue
        if issubclass(cls, HighEntropyStringsPlugin):
            # The base class's constructor also takes a charset; each concrete subclass
            # fixes its own and takes only the limit, which no library type says.
            make = cast(_EntropyPluginClass, cls)
            entropy.append(make(limit=4.5))  # detect-secrets' default limit for base64
        else:
            vendors.append((_kind_of(secret_type), cls()))
    return vendors, entropy


_VENDORS, _ENTROPY = _build_plugins()

# -- keywords -----------------------------------------------------------------------------
# detect-secrets' config-file patterns, compiled again with a longer keyword list: in
# agent text, TOKEN=, AUTH=, COOKIE: and SESSION_ID= name secrets as often as PASSWORD=.
_EXTRA_KEYWORDS = ("token", "auth", "credential", "cookie", "session_?id", "access_?key", "sig")
_KEYWORDS = keyword.DENYLIST_REGEX.replace(
    "|".join(keyword.DENYLIST), "|".join((*keyword.DENYLIST, *_EXTRA_KEYWORDS))
)
_KEYWORD_PATTERNS = [
    (re.compile(p.pattern.replace(keyword.DENYLIST_REGEX, _KEYWORDS), p.flags), group)
    for p, group in (
        *keyword.CONFIG_DENYLIST_REGEX_TO_GROUP.items(),
        *keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP.items(),
    )
]
_NEXT_FIELD = re.compile(r"[;&](?=[A-Za-z_][\w.-]*=)")
_PASSWORDISH = re.compile(r"pass|pwd|contrase", re.IGNORECASE)
_TOKENISH = re.compile(r"token|auth|cookie|session|sig", re.IGNORECASE)


def _keyword_findings(line: str) -> Iterator[tuple[str, str]]:
    for pattern, group in _KEYWORD_PATTERNS:
        for m in pattern.finditer(line):
            value = m[group]
            if not value:
                continue
            start = m.start(group)
            quoted = start > 0 and line[start - 1] in "\"'`"
            if not quoted:
                value = value.split()[0] if value.split() else ""
                # Connection and query strings: "Password=x;Server=y", "token=x&page=2".
                value = _NEXT_FIELD.split(value, 1)[0].rstrip(",;")
            before = start - 1 - quoted
            spaced = before >= 0 and line[before] in " \t"
            quote = line[start - 1] if quoted else ""
            end = line.find(value, start) + len(value)
            if _keyword_value_ok(value, line, quoted=quoted, spaced=spaced, quote=quote, end=end):
                name = line[max(0, m.start() - 24) : start] if start > m.start() else m[0]
                if "aws" in name.lower() and "secret" in name.lower():
                    kind = "aws_secret_key"
                elif _PASSWORDISH.search(name):
                    kind = "password"
                elif _TOKENISH.search(name):
                    kind = "token"
                else:
                    kind = "secret"
                yield kind, value


def _keyword_value_ok(
    value: str, line: str, *, quoted: bool, spaced: bool, quote: str = "", end: int = 0
) -> bool:
    """Whether a value assigned to a secret-named key looks like a secret, not prose or code."""
    if not plausible(value, line, quoted=quoted, spaced=spaced, quote=quote, end=end):
        return False
    return not (
        heuristic.is_templated_secret(value)
        or heuristic.is_prefixed_with_dollar_sign(value)
        or heuristic.is_sequential_string(value)
        or heuristic.is_potential_uuid(value)
        or heuristic.is_not_alphanumeric_string(value)
        or heuristic.is_indirect_reference(line)
    )


# -- unquoted high-entropy tokens ------------------------------------------------------------
# "=" only as base64 padding at the end, so "API_KEY=<value>" is two runs, not one.
_RUN = re.compile(r"(?<![A-Za-z0-9+/_.-])[A-Za-z0-9+/_.-]{20,}={0,2}")
# A vendor prefix and a lower-case hex key ("shpat_<hex>", "dop_v1_<hex>"): hex keys have
# too little entropy per character for the entropy test, the prefix says what they are.
_PREFIXED_HEX = re.compile(r"(?<![\w-])[A-Za-z]{2,8}_(?:[a-z0-9]{1,4}_)?[0-9a-f]{32,}(?![\w-])")


# A short lower-case prefix such as "ep_" or "hf_" says nothing: the body must look random
# on its own (memwork's ids, "ses_01JD3Q…", are upper case and digits only).
_ID_PREFIX = re.compile(r"^[a-z]{1,8}_")


def _entropy(text: str) -> float:
    counts: dict[str, int] = {}
    for c in text:
        counts[c] = counts.get(c, 0) + 1
    n = len(text)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def _looks_random(run: str) -> bool:
    """A run with digits, upper and lower case letters interleaved and near-maximal entropy.

    Identifiers in CamelCase, paths and version strings have long letter streaks and
    repeat their letters; a key drawn at random does neither.
    """
    core = _ID_PREFIX.sub("", run.strip("=.-_/"), count=1)
    n = len(core)
    if n < 20:
        return False
    digits = sum(c.isdigit() for c in core)
    upper = sum(c.isupper() for c in core)
    lower = sum(c.islower() for c in core)
    if digits < 2 or upper < 2 or lower < 2:
        return False
    # Digits spread through the run, not one version suffix ("Release2024Build7").
    inner_digit = re.search(r"[A-Za-z][0-9]+[A-Za-z]", core) is not None
    if not inner_digit:
        return False
    # Random base62 of length n has entropy close to log2(min(n, 62)).
    return _entropy(core) >= min(4.3, math.log2(n) - 0.45)


def _unquoted_entropy(line: str) -> Iterator[tuple[str, str]]:
    for m in _PREFIXED_HEX.finditer(line):
        yield "token", m[0]
    for m in _RUN.finditer(line):
        run = m[0]
        # A path or URL splits into parts; a base64 key keeps its slashes.
        parts = [run] if _looks_random(run) else [p for p in re.split(r"[/.]", run) if p]
        for part in parts:
            if _looks_random(part) and not heuristic.is_potential_uuid(part):
                yield "token", part.strip("=.-_/") if part is not run else run


# "hf_", "whsec_", "SG.", "GOCSPX-", "dop_v1_": how vendors mark their keys.
# ("run-<random>" is left alone: a lower-case word and a dash is how run ids look.)
_VENDOR_PREFIX = re.compile(
    r"^(?:[a-z]{2,8}_|[A-Z]{2,8}[.-]|[a-z0-9]{2,8}\.)(?:[a-z0-9]{1,4}_)?(?=\w{16})"
)


# -- putting it together ---------------------------------------------------------------------
def detect(line: str, *, generic: bool = True) -> list[tuple[str, str]]:
    """``(kind, secret value)`` for everything the detectors find in one line.

    ``generic`` includes the high-entropy detectors; without it (for identifiers, where
    a random-looking run id is fine) only entropy hits behind a vendor prefix count.
    """
    found: list[tuple[str, str]] = []
    for kind, plugin in _VENDORS:
        for value in plugin.analyze_string(line):
            value = value.strip()
            if kind == "azure_storage_key" and "=" in value:
                value = value.split("=", 1)[1]  # "AccountKey=<key>": the name stays readable
            if kind == "slack_token" and value.startswith("https://"):
                kind = "slack_webhook"
            found.append((kind, value))
    found.extend(_keyword_findings(line))
    if not generic:
        # Identifiers: a random-looking run id is fine, a key behind a vendor prefix is not.
        found.extend(h for h in _unquoted_entropy(line) if _VENDOR_PREFIX.match(h[1]))
    else:
        for plugin in _ENTROPY:
            for value in plugin.analyze_string(line):
                if plugin.calculate_shannon_entropy(value) > plugin.entropy_limit and not (
                    heuristic.is_potential_uuid(value) or heuristic.is_sequential_string(value)
                ):
                    found.append(("high_entropy", value))
        found.extend(_unquoted_entropy(line))
    return [(k, v) for k, v in found if len(v) >= _MIN_VALUE and _MARKER not in v]


def redact(text: str, found: list[tuple[str, str]] | None, *, generic: bool = True) -> str:
    """``text`` with every detected secret replaced by ``[redacted:<kind>]``, line by line."""
    from . import needs_detectors

    lines = text.split("\n")
    changed = False
    for i, line in enumerate(lines):
        if not needs_detectors(line):
            continue
        hits = detect(line, generic=generic)
        if not hits:
            continue
        # Longest first, so a secret that contains another is replaced whole; on a tie a
        # named kind wins over the generic ones.
        for kind, value in sorted(set(hits), key=lambda h: (-len(h[1]), h[0] in _GENERIC, h[0])):
            if value in line:
                if found is not None:
                    found.extend((kind, value) for _ in range(line.count(value)))
                line = line.replace(value, f"[redacted:{kind}]")
        if line != lines[i]:
            lines[i] = line
            changed = True
    return "\n".join(lines) if changed else text
