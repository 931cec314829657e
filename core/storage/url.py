"""Store locations: what ``--db``, ``MEMWORK_DB`` and ``Store(location)`` name.

This module is the one place that reads a location and says which backend it
names (:func:`parse_location`); the rest of memwork never tests a location's type
or text to choose a backend:

    PATH, file:PATH            a folder store            (core/storage/folder_backend.py)
    memory:                    a store in this process   (core/storage/memory_backend.py)
    redis://…, rediss://…      a store in Redis          (core/storage/redis_backend.py)

A ``Path`` object always names a folder. Anything that starts like a URL
(``scheme://``) or with ``redis:`` / ``rediss:`` is parsed as one and never taken
for a folder: before this, ``--db redis://host/0`` quietly created a local folder
named ``redis:``. This module imports nothing beyond the standard library's URL
parser, so checking a folder path costs a string comparison.

    redis://[[USER]:PASSWORD@]HOST[:PORT][/DB][?ssl_ca_certs=FILE&ssl_cert_reqs=none]

The port defaults to 6379 and the database number to 0. A password may also
come from ``MEMWORK_REDIS_PASSWORD`` (so it stays out of the process list).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from ..base.errors import InvalidInput

if TYPE_CHECKING:
    from pathlib import Path

SCHEMES = ("redis", "rediss")
PASSWORD_ENV = "MEMWORK_REDIS_PASSWORD"
# Compiled on first use (re's own cache): a folder path never needs them.
_URL_LIKE = r"[A-Za-z][A-Za-z0-9+.\-]*://"
_REDIS_LIKE = r"(?i)rediss?:"
_CREDENTIALS = r":[^/\\]*@"
_CERT_REQS = ("none", "optional", "required")


def is_url(text: str) -> bool:
    """Whether ``text`` names a store by URL (or tries to) rather than a folder."""
    return bool(re.match(_URL_LIKE, text) or re.match(_REDIS_LIKE, text))


def might_be_url(text: str) -> bool:
    """A cheap first look: only text that passes it can name anything but a folder."""
    return ":" in text[:9] or "://" in text or "@" in text


def looks_mangled(text: str) -> bool:
    """Whether ``text``, no store URL memwork reads, still looks like one: ``://``
    anywhere (a quote or a stray character before the scheme) or ``:…@`` (a password
    before a host). Such text is refused, never made a folder named after it."""
    return "://" in text or bool(re.search(_CREDENTIALS, text))


FILE = "file"
MEMORY = "memory"
REDIS = "redis"
MEMORY_LOCATION = "memory:"


class Location:
    """A parsed store location: its backend's scheme (``file``, ``memory``, ``redis``),
    with the folder for ``file`` and the URL text for ``redis``."""

    __slots__ = ("scheme", "folder_text", "url")

    def __init__(self, scheme: str, *, folder: str | None = None, url: str = "") -> None:
        self.scheme = scheme
        #: The folder of a ``file`` location as it was written (a folder store opens it
        #: as text: pathlib is imported only for :attr:`folder`).
        self.folder_text = folder
        self.url = url

    def __repr__(self) -> str:
        return f"Location({self.scheme!r}, folder={self.folder_text!r}, url={self.url!r})"

    @property
    def folder(self) -> Path | None:
        """The folder of a ``file`` location (None for the others)."""
        if self.folder_text is None:
            return None
        from pathlib import Path

        return Path(self.folder_text)

    def path(self) -> Path:
        """The folder of a ``file`` location."""
        folder = self.folder
        if folder is None:
            raise ValueError(f"a {self.scheme} store has no folder")
        return folder


def parse_location(value: str | os.PathLike[str], field: str = "store path") -> Location:
    """What ``value`` names: a folder (a path, ``file:PATH``, or any ``os.PathLike``), the
    in-process store (``memory:``) or a Redis store (a ``redis://`` or ``rediss://`` URL,
    checked here). Anything else that looks like a URL is refused naming ``field``."""
    if not isinstance(value, str):  # a Path is a folder, never a URL
        text = os.fspath(value)
        if not text:
            raise InvalidInput(field, "must not be empty")
        if might_be_url(text) and is_url(text):
            # A URL that became a Path ("redis:/host") must not become a folder.
            raise InvalidInput(
                field, f"{shown(text, 60)!r} is a URL, not a folder; pass store URLs as text"
            )
        return Location(FILE, folder=text)
    value = value.strip()  # " redis://…" pasted with a space is the URL, not a folder
    if not value:
        raise InvalidInput(field, "must not be empty")
    if not might_be_url(value):
        return Location(FILE, folder=value)
    scheme = value.split(":", 1)[0].lower()
    if scheme == FILE:
        rest = value[len(FILE) + 1 :]
        if rest.startswith("//"):  # file:///abs/path, file://localhost/abs/path
            rest = rest[2:]
            rest = rest[rest.index("/") :] if "/" in rest else ""
        if not rest:
            raise InvalidInput(field, "a file: location names a folder (file:PATH)")
        return Location(FILE, folder=rest)
    if scheme == MEMORY:
        if value.lower() not in (MEMORY_LOCATION, "memory://"):
            raise InvalidInput(field, "the in-process store is named memory: alone")
        return Location(MEMORY)
    if is_url(value):
        parse(value, field)  # a malformed URL is refused here, naming where it came from
        return Location(REDIS, url=value)
    if looks_mangled(value):
        raise InvalidInput(
            field,
            f"{shown(value)!r} looks like a URL but does not start with redis:// or "
            "rediss:// (a folder store is a path or file:PATH)",
        )
    return Location(FILE, folder=value)  # "C:thing", "notes:2026": a folder name


class StoreURL:
    """A parsed Redis store location (a plain class: dataclasses cost an import on
    the path every folder store takes)."""

    __slots__ = ("scheme", "host", "port", "db", "username", "password", "ca_certs", "cert_reqs")

    def __init__(
        self,
        *,
        scheme: str,
        host: str,
        port: int,
        db: int,
        username: str | None,
        password: str | None,
        ca_certs: str | None = None,
        cert_reqs: str = "required",
    ) -> None:
        self.scheme = scheme
        self.host = host
        self.port = port
        self.db = db
        self.username = username
        self.password = password
        self.ca_certs = ca_certs
        self.cert_reqs = cert_reqs

    def __repr__(self) -> str:
        return f"StoreURL({self.display!r})"

    @property
    def tls(self) -> bool:
        """Whether the connection uses TLS (``rediss://``)."""
        return self.scheme == "rediss"

    @property
    def display(self) -> str:
        """The URL as messages show it: never the password."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = f"{self.username}@" if self.username else ""
        return f"{self.scheme}://{user}{host}:{self.port}/{self.db}"

    def __str__(self) -> str:
        return self.display


# What comes before an "@" back to the last "/" (a URL's user and password, however its
# scheme was mangled).
_USERINFO = r"[^/\s]*@"


def shown(text: str, width: int = 40) -> str:
    """``text`` as a message may show it: a password (anything before an ``@``) never
    appears (``***``), and it is cut to ``width`` characters."""
    if "@" in text:
        text = re.sub(_USERINFO, "***@", text)
    return text if len(text) <= width else text[: width - 3] + "..."


def parse(text: str, field: str = "--db") -> StoreURL:
    """Parse a Redis store URL; anything else is :class:`InvalidInput` naming ``field``."""
    from urllib.parse import parse_qs, unquote, urlsplit

    scheme = text.split(":", 1)[0].lower()
    if scheme not in SCHEMES:
        raise InvalidInput(
            field,
            f"only redis:// and rediss:// URLs name a store (got a {scheme}: URL); "
            "a folder path or file:PATH names a folder store, memory: one in this process",
        )
    if not text[len(scheme) + 1 :].startswith("//"):
        raise InvalidInput(field, f"a Redis URL starts with {scheme}:// (got {shown(text)!r})")
    try:
        parts = urlsplit(text)
        port = parts.port
        host = parts.hostname
    except ValueError as exc:
        raise InvalidInput(field, f"is not a valid Redis URL ({exc})") from None
    if not host:
        raise InvalidInput(field, "a Redis URL must name a host (redis://HOST:PORT/DB)")
    path = parts.path.strip("/")
    if path and not (path.isascii() and path.isdigit()):  # "²".isdigit(), but int() refuses it
        raise InvalidInput(
            field, f"the database must be a number, as in /0 (got /{shown(path, 20)})"
        )
    if parts.fragment:
        raise InvalidInput(field, "a Redis URL has no #fragment")
    options = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(options) - {"ssl_ca_certs", "ssl_cert_reqs"})
    if unknown:
        raise InvalidInput(
            field, f"unknown URL option {unknown[0]!r} (known: ssl_ca_certs, ssl_cert_reqs)"
        )
    cert_reqs = options.get("ssl_cert_reqs", ["required"])[-1].lower()
    if cert_reqs not in _CERT_REQS:
        raise InvalidInput(field, f"ssl_cert_reqs must be one of {', '.join(_CERT_REQS)}")
    password = unquote(parts.password) if parts.password is not None else None
    if not password:
        password = os.environ.get(PASSWORD_ENV) or None
    return StoreURL(
        scheme=scheme,
        host=host,
        port=port or 6379,
        db=int(path) if path else 0,
        username=unquote(parts.username) if parts.username else None,
        password=password,
        ca_certs=options.get("ssl_ca_certs", [None])[-1],
        cert_reqs=cert_reqs,
    )
