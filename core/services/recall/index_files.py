"""Where recall keeps its index of a folder store, and when a commit makes it stale.

``<store>/cache/recall/`` holds one file with the searchable text of every table
recall reads (``index.bin``) and the embedder's vectors (``vectors-*``). Importing
this module tells storage what those files hold, so a commit that removes words
recall has indexed removes the files with it, and a commit that only adds records or
changes what recall does not read (a lesson's confidence, a session's last activity)
keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...storage import derived_files
from ...storage.backend import Commit
from . import extract

NAME = "recall"
#: The folder, from the store's own: ``cache/recall``.
FOLDER = (derived_files.FOLDER, NAME)
INDEX_FILE = "index.bin"


def loses_words(commit: Commit, existed: Mapping[str, int]) -> bool:
    """Whether ``commit`` removes text recall reads: a table of it dropped or replaced,
    a document deleted, or changed so that some of its searchable text is gone (a
    forget, a redaction, an edit), unless the same text lands elsewhere in the same
    commit (a rule moved to the archive)."""
    if any(extract.indexed(name) for name in commit.drops):
        return True
    removed: set[str] = set()
    for name, write in commit.writes.items():
        if name not in existed or not extract.indexed(name):
            continue
        if write.replace or write.base is None:
            return True  # replaced whole (a restore, TinyDB's own edits): cannot tell
        base = write.base
        # A session past its cap drops its oldest notes as a new one arrives: a
        # rotation, not a forget (the file would go with every note); those notes
        # leave the file when it is next saved.
        if not (extract.ordered(name) and write.put_ids):
            for doc_id in write.delete:
                old = base.get(doc_id)
                if old is not None:
                    removed.update(extract.texts(name, old))
        for doc_id, doc in write.put.items():
            old = base.get(doc_id)
            if old is not None and old is not doc and old != doc:
                removed.update(extract.texts(name, old) - extract.texts(name, doc))
    if not removed:
        return False  # the common commit: records added, numbers changed
    for name, write in commit.writes.items():  # unless it all lands elsewhere
        if extract.indexed(name):
            for doc in write.put.values():
                removed.difference_update(extract.texts(name, doc))
    return bool(removed)


derived_files.watch(NAME, loses_words)
