"""Regular expressions compiled on first use.

``memwork context`` starts a fresh interpreter on every agent step and scrubs
text that almost never holds a secret: most of the scrubber's patterns are
never needed there, and compiling all of them at import would cost that
process several milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cached_property


class LazyPattern:
    """A pattern that compiles itself the first time it is used."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern."""
        return re.compile(self.pattern, self.flags)

    def search(self, text: str) -> re.Match[str] | None:
        """:meth:`re.Pattern.search`."""
        return self.compiled.search(text)

    def match(self, text: str) -> re.Match[str] | None:
        """:meth:`re.Pattern.match`."""
        return self.compiled.match(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        """:meth:`re.Pattern.fullmatch`."""
        return self.compiled.fullmatch(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """:meth:`re.Pattern.finditer`."""
        return self.compiled.finditer(text)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0) -> str:
        """:meth:`re.Pattern.sub`."""
        return self.compiled.sub(repl, text, count=count)

    def split(self, text: str, maxsplit: int = 0) -> list[str]:
        """:meth:`re.Pattern.split`."""
        return self.compiled.split(text, maxsplit)


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    """A :class:`LazyPattern` (read like ``re.compile``)."""
    return LazyPattern(pattern, flags)
