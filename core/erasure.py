"""After a forget: every cached copy of what was forgotten goes too.

Caches kept beside a store (the search cache in ``<store>/cache/``) hold text
prepared from table files. A forget (:mod:`core.forgetting`) changes or drops
tables; :func:`purge` then asks each cache named in :data:`PURGERS` to drop what
it prepared from those tables, at once, rather than when the next search
notices the table changed (a cache file could otherwise keep a forgotten
observation's words on disk until then).

A cache registers here by name, ``"module:function"`` inside ``core`` with the
signature ``fn(store, tables: set[str]) -> None``, imported only when a forget
runs; it must never raise for a table it never cached. In-memory indexes of
long-lived processes follow table versions and drop a changed table's records
on their next search.
"""

from __future__ import annotations

import contextlib

from .storage.store import Store

#: The caches that keep copies of stored text: each purges what came from ``tables``.
PURGERS: tuple[str, ...] = ("search_corpus:purge",)


def purge(store: Store, tables: set[str]) -> None:
    """Ask every cache to drop what it prepared from ``tables`` (best effort: a cache
    that cannot be reached is no reason to fail a forget that has committed)."""
    from .invoke import function

    for target in PURGERS:
        with contextlib.suppress(Exception):
            function(target)(store, tables)
