"""Files derived from a folder store's tables and kept beside them, in ``cache/<name>/``.

Such a file (recall's index, the embedder's vectors) holds the words of records, so a
commit that removes words from the store (a forget, a redaction, a restore) must not
leave them there. Storage does not know what each file reads: its owner, a layer above,
says so with :func:`watch`, giving the check that tells whether a commit removes words
the file holds. A file whose owner has not been loaded in this process is judged
strictly: any commit that changes or deletes a record, or drops a table, removes it.
Removing costs only a rebuild; keeping forgotten words would break a promise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .backend import Commit

#: Where a folder store keeps them, one folder per owner.
FOLDER = "cache"
#: ``(commit, generation of each table before it) -> whether it removes words``.
LosesWords = Callable[[Commit, Mapping[str, int]], bool]

_WATCHERS: dict[str, LosesWords] = {}
#: Told, with the backend whose commit it was, when a commit removed ``cache/<name>/``'s
#: files (its owner may hold what it needs to write them again at once).
_REMOVED: dict[str, Callable[[object], None]] = {}


def watch(name: str, loses_words: LosesWords) -> None:
    """Say what ``cache/<name>/`` holds: its files are removed after a commit that
    ``loses_words`` says removes words from the store."""
    _WATCHERS[name] = loses_words


def loses_words(name: str, commit: Commit, existed: Mapping[str, int]) -> bool:
    """Whether ``commit`` makes the files of ``cache/<name>/`` hold words the store no
    longer does (strictly, for a folder whose owner has not said what it reads)."""
    check = _WATCHERS.get(name)
    if check is not None:
        return check(commit, existed)
    if commit.drops:
        return True
    for table, write in commit.writes.items():
        if table not in existed:
            continue
        if write.replace or write.base is None or write.delete:
            return True
        base = write.base
        if any(doc_id in base and base[doc_id] != doc for doc_id, doc in write.put.items()):
            return True
    return False


def when_removed(name: str, call: Callable[[object], None]) -> None:
    """Have ``call(backend)`` told when a commit of ``backend`` in this process removed
    the files of ``cache/<name>/``."""
    _REMOVED[name] = call


def removed(name: str, backend: object) -> None:
    """Tell the owner of ``cache/<name>/`` that a commit of ``backend`` removed its files
    (never fails the commit: the files are only a cache)."""
    call = _REMOVED.get(name)
    if call is not None:
        try:
            call(backend)
        except Exception:  # noqa: BLE001, S110 - the commit is done; the owner rebuilds
            pass
