"""What reading ``store.log`` found it could not read, and how a reader says so.

A reader that meets bytes no record can be proven from skips to the next record that
verifies (:func:`core.storage.wal.read_records`) and keeps one :class:`Damage` for the
stretch it skipped. Every process that reads the log says so once, on stderr, naming
the file, the byte offset and how many records follow: a commit it cannot read is
never dropped without a word.
"""

from __future__ import annotations

import sys


class Damage:
    """A stretch of the log that held no record a checksum verifies."""

    __slots__ = ("offset", "size", "lost", "recovered", "follows", "tail", "cut", "header")

    def __init__(self, offset: int, size: int, tail: bool) -> None:
        #: Where it starts in the file, and how many bytes it spans.
        self.offset = offset
        self.size = size
        #: It runs to the end of the file (a torn tail: a crash, a cut, a damaged last record).
        self.tail = tail
        #: The first and last commit it held (known when a later record follows it).
        self.lost: tuple[int, int] | None = None
        #: The commit recovered whole from it (a damaged header whose payload verifies).
        self.recovered: int | None = None
        #: How many records that verify follow it in the file.
        self.follows = 0
        #: A torn tail that looks like a crash's: a record's first bytes, or zeros.
        self.cut = False
        #: The file's own header (its records are read by their checksums all the same).
        self.header = False

    @property
    def serious(self) -> bool:
        """Whether commits are missing between records that verify (a torn tail may be a
        crash's, never acknowledged; a record recovered whole cost nothing)."""
        return self.recovered is None and (self.header or not self.tail)

    def describe(self) -> str:
        """One sentence: where, what was lost, what follows."""
        where = f"at byte {self.offset}"
        follows = (
            "1 verified record follows it"
            if self.follows == 1
            else f"{self.follows} verified records follow it"
        )
        if self.header and self.tail:
            return (
                f"{self.size} bytes {where} end the log, inside its header: a log cut short "
                "there, whose commits since the last fold are lost"
            )
        if self.header:
            return (
                f"its header ({self.size} bytes {where}) is not a memwork log's; every record "
                f"proves itself by its checksum, and {follows}"
            )
        if self.recovered is not None:
            return (
                f"the record of commit {self.recovered} {where} has a damaged header; it was "
                f"recovered whole (its payload verifies against its checksum); {follows}"
            )
        if self.tail and self.cut:
            return (
                f"{self.size} bytes {where} end the log and are no whole record: a commit a "
                "crash cut short, never acknowledged (or a log cut short there, whose later "
                "commits are lost)"
            )
        if self.tail:
            return (
                f"{self.size} bytes {where} end the log and fail their checksum: a commit a "
                "crash left half written, never acknowledged, or a damaged last record, whose "
                "commit is lost"
            )
        if self.lost is not None:
            first, last = self.lost
            lost = f"commit {first}" if first == last else f"commits {first}-{last}"
            lost += " is lost" if first == last else " are lost"
        else:
            lost = "no commit is missing from the sequence"
        return f"{self.size} damaged bytes {where}: {lost}; {follows}"


#: (file, device, inode, offset) already reported by this process.
_SAID: set[tuple[str, int, int, int]] = set()


def say(path: str, ident: tuple[int, int], found: list[Damage]) -> None:
    """Write one line on stderr for each stretch not reported before by this process."""
    for damage in found:
        key = (path, *ident, damage.offset)
        if key in _SAID:
            continue
        _SAID.add(key)
        print(
            f"memwork: {path} is damaged: {damage.describe()}. The next write keeps this log "
            "in damaged/ and goes on with every record that verifies (`memwork doctor` lists it)",
            file=sys.stderr,
            flush=True,
        )
