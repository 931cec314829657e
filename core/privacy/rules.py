"""The scrubber's own rules: precise, cheap patterns that run on every text.

Each rule names one kind of secret or personal detail, is guarded by
lower-case trigger substrings (so text without them never runs its regex) and
replaces only its ``secret`` group. They cover what must be recognised
exactly, whatever else runs: private-key blocks, credentials in URLs, Bearer
and Basic values, Azure SAS signatures, passwords on command lines, API keys
of shapes the rule set below them does not take (OpenAI's ``sk-…`` without its
marker, Stripe's ``pk_live_…``, Square's ``sq0csp-…`` secret), payment card numbers
(Luhn-checked), and the personal details (e-mail, IP and home-directory paths) no
secret scanner looks for. Vendor token formats come from gitleaks' rule set
(:mod:`core.privacy.gitleaks`), assignments and prefixed tokens from
:mod:`core.privacy.assign`.
"""

# No ``from __future__ import annotations``: typing.NamedTuple would compile each field's
# annotation string when the scrubber is imported, on every CLI call.
import re
from collections.abc import Callable
from typing import NamedTuple

from ..base.lazy_regex import LazyPattern, lazy

__all__ = ["RULES", "Rule"]


class Rule(NamedTuple):
    kind: str
    # Lowercase substrings, checked against the lowercased text: the regex only runs if one of
    # them occurs, which is what keeps ordinary text cheap.
    triggers: tuple[str, ...]
    # Every pattern has a ``secret`` group; only that span is replaced, so context such as a
    # URL scheme, a "Bearer " prefix or the rest of a home path stays readable.
    pattern: LazyPattern
    # Returns True for matches that look like a secret but are not (loopback IPs, slices...).
    keep: Callable[[re.Match[str]], bool] | None = None
    # Cheap pre-check for rules whose triggers are common characters: a search on a pattern
    # that starts with a literal is several times faster than the lookbehind-led pattern.
    gate: LazyPattern | None = None
    # Personal details are redacted in what agents report but kept in curated slots.
    personal: bool = False


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_URL_CREDS_CHARS = r"[^\s/?#\[\]<>\"'`]"  # no "[" so our own markers never look like creds
_WIN_USER = r"[\w$-]+(?:\.[\w$-]+)*"


def _keep_bearer(m: re.Match[str]) -> bool:
    # Prose such as "Bearer authentication" has no digits; real tokens practically always do.
    return not any(c.isdigit() for c in m["secret"])


def _keep_card(m: re.Match[str]) -> bool:
    digits = [int(c) for c in m["secret"] if c.isdigit()]
    groups = m["secret"].replace("-", " ").split(" ")
    if len(groups) > 1 and len({len(g) for g in groups[:-1]}) > 1 and len(groups) != 3:
        return True  # "1234 56 789012 3" is not how a card is written
    if not _card_issuer(digits):
        return True
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 != 0


def _card_issuer(digits: list[int]) -> bool:
    n = len(digits)
    head = int("".join(map(str, digits[:6])))
    two, four = head // 10000, head // 100
    return (
        (digits[0] == 4 and n in (13, 16, 19))  # Visa
        or (51 <= two <= 55 and n == 16)  # Mastercard
        or (2221 <= four <= 2720 and n == 16)  # Mastercard 2-series
        or (two in (34, 37) and n == 15)  # American Express
        or ((four == 6011 or two == 65 or 644 <= head // 1000 <= 649) and n in (16, 19))  # Discover
        or (3528 <= four <= 3589 and n in (16, 19))  # JCB
        or (two in (36, 38) and n == 14)  # Diners Club
    )


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


RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        ("-----begin",),
        # An unterminated block is redacted to the end: a truncated key is still a key.
        lazy(
            r"(?P<secret>-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"
            r".*?(?:-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\Z))",
            re.DOTALL,
        ),
    ),
    Rule(
        "credentials",
        ("@",),
        # Greedy up to the last "@" of the authority, so passwords containing "@" do not leak.
        lazy(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://"
            rf"(?P<secret>{_URL_CREDS_CHARS}+)@"
        ),
        keep=lambda m: m["secret"] == "git",  # ssh://git@github.com/... names no one
        gate=lazy(rf"://{_URL_CREDS_CHARS}+@"),
    ),
    Rule(
        "bearer",
        ("bearer",),
        lazy(r"\bbearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{8,}=*)", re.IGNORECASE),
        keep=_keep_bearer,
    ),
    Rule(
        "basic_auth",
        ("authorization",),
        lazy(
            r"authorization[\"']?\s*[:=]\s*[\"']?basic[ \t]+(?P<secret>[A-Za-z0-9+/]{6,}={0,2})",
            re.IGNORECASE,
        ),
    ),
    Rule(
        "api_key",
        ("sk-", "_live_", "_test_", "aiza"),
        # "sk-" needs a long key-like tail so words such as risk-free or desk-lamp survive.
        lazy(
            r"(?<![\w-])(?P<secret>sk-[\w-]{20,}|[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}"
            r"|AIza[\w-]{30,})",
            re.ASCII,
        ),
    ),
    Rule(
        "memwork-key",
        ("mwc_", "mwa_"),
        # memwork's own curator keys (mwc_) and agent tokens (mwa_): the prefix and 43
        # URL-safe characters (32 random bytes) mark one. Left to the generic detector,
        # about one key in a hundred looked too plain to redact.
        lazy(r"(?<![\w-])(?P<secret>mw[ca]_[A-Za-z0-9_-]{43})(?![\w-])", re.ASCII),
        # A name of that length in lowercase words (mwc_notes_for_...) is not random.
        keep=lambda m: not any(c.isdigit() or c.isupper() for c in m["secret"][4:]),
    ),
    Rule(
        "square-secret",
        ("sq0csp-",),
        # Square's OAuth application secret: gitleaks retired its rule (the pinned rule set
        # has only the access token, sq0atp-), but the prefix alone marks one.
        lazy(r"(?<![\w-])(?P<secret>sq0csp-[0-9A-Za-z_-]{43})(?![\w-])", re.ASCII),
    ),
    Rule(
        "sas_signature",
        ("sig=",),
        # Azure shared access signatures: the signature is the secret; sv=, se=, sp= are not.
        lazy(r"[?&;]sig=(?P<secret>[A-Za-z0-9%+/=_-]{16,})"),
    ),
    Rule(
        "password",
        ("-p", "pass"),
        # Passwords on a command line: --password=X, --db-password X, sshpass -p X,
        # mysql -pX. A flag followed by another flag or a $VARIABLE names no secret.
        lazy(
            r"(?:(?<![\w-])--[\w-]{0,40}?pass(?:word|wd)?(?:=|[ \t]+)|\bsshpass[ \t]+-p[ \t]*|"
            r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]{0,200}?[ \t]-p)"
            r"(?P<secret>'[^'\n]+'|\"[^\"\n]+\"|(?![-$\[])[^\s'\"]+)",
            re.IGNORECASE,
        ),
        # Bounded: "--[\w-]*pass" was quadratic on a long run of dashes (23 s on 40,000).
        gate=lazy(r"(?i)(?<![\w-])--[\w-]{0,40}?pass|\bsshpass\b|\bmysql|\bmariadb"),
    ),
    Rule(
        "card_number",
        (),  # no trigger substring: the gate alone decides
        # 13-19 digits, optionally grouped by spaces or dashes, with a card issuer's
        # prefix and a valid Luhn check digit: order numbers and timestamps fail one.
        lazy(r"(?<![\w.-])(?P<secret>[2-6]\d{3}(?:[ -]?\d){9,15})(?![\w-]|\.\d)"),
        keep=_keep_card,
        gate=lazy(r"[2-6]\d{3}[ -]?\d{2}"),
    ),
    Rule(
        "email",
        ("@",),
        lazy(
            r"(?<![\w.%+-])(?P<secret>(?P<local>[\w.%+-]+)@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,})"
            r"(?![\w-])",
            re.ASCII,
        ),
        keep=lambda m: m["local"] == "git",  # git@github.com:org/repo.git is a remote, not a person
        gate=lazy(r"@[A-Za-z0-9-]+\.[A-Za-z]"),
        personal=True,
    ),
    Rule(
        "ipv6",
        (":",),
        # A loose candidate; _keep_ipv6 validates with ipaddress and rejects code-like shapes.
        lazy(
            r"(?<![\w:.])(?P<secret>(?:[0-9A-Fa-f]{0,4}:){2,7}"
            rf"(?:{_OCTET}(?:\.{_OCTET}){{3}}|[0-9A-Fa-f]{{1,4}})?(?:%[0-9A-Za-z_.-]+)?)"
            r"(?![\w:]|\.\w)"
        ),
        keep=_keep_ipv6,
        # Any address has "::" or, uncompressed, seven colons; clock times have neither.
        gate=lazy(r"::|:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:"),
        personal=True,
    ),
    Rule(
        "ipv4",
        (".",),
        # Exactly four dotted octets, not glued to more digits: v1.2.3.4 and 1.2.3.4.5 are
        # version numbers, not addresses.
        lazy(rf"(?<![\w.])(?P<secret>{_OCTET}(?:\.{_OCTET}){{3}})(?!\w|\.[0-9])"),
        keep=_keep_ipv4,
        gate=lazy(r"\.[0-9]{1,3}\.[0-9]{1,3}\."),
        personal=True,
    ),
    Rule(
        "home_path",
        ("\\users", ":/users"),
        # Windows user names may contain spaces; accept them only when a separator follows,
        # so "C:\Users\carol is here" does not swallow the sentence. Runs before the
        # POSIX rule, which would otherwise take the "/Users/carol" out of "C:/Users/carol".
        lazy(
            r"(?<![A-Za-z])(?P<secret>[A-Za-z]:(?:\\{1,2}|/)(?i:users)(?:\\{1,2}|/)"
            rf"{_WIN_USER}(?:(?: {_WIN_USER})+(?=[\\/]))?)"
        ),
        personal=True,
    ),
    Rule(
        "home_path",
        ("/home/", "/users/"),
        # Not preceded by a word character, so URL paths like example.com/home/about survive;
        # "]" is excluded too so the rest of an already-redacted path is never re-matched.
        lazy(r"(?<![\w.\]-])(?P<secret>/(?:home|Users)/[\w-]+(?:\.[\w-]+)*)"),
        personal=True,
    ),
)
