"""The records a search reads, prepared for matching and kept between searches.

A search matches words against one normalised text per record and needs a
record's title and SearchDoc only when it ranks it, so records are held as
parallel lists per table (:class:`Chunk`) rather than an object each. The big
tables (episode shards, rules tables, observations tables) are prepared once:
a :class:`Corpus` keeps them in memory between searches of a long-lived
process (the MCP server, :class:`core.memory.Memory`) until the store hands
out a changed table, and :class:`DiskCache` keeps them in the store's own
``cache/`` folder for the next process (``memwork search``).
"""

from __future__ import annotations

import bisect
import contextlib
import os
import secrets
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from rapidfuzz.utils import default_process

from . import search_docs, shards
from .kinds import KINDS
from .search_index import SearchDoc
from .storage.folder_backend import SEARCH_CACHE
from .storage.store import Store
from .text import clip

_TABLES_PER_LOCK = 16  # big tables read under one lock (~30 ms for 16 episode shards)


class Chunk:
    """Records of one kind from one table, as parallel lists; SearchDocs made on demand.

    Matching needs only ``texts`` (each ``" " + normalised title and body + " "``);
    titles and SearchDocs are needed only for the few records that get ranked.
    Episodes and observations rank with their prepared text as the body, whether
    it was just prepared or came from the disk cache, so a search ranks the same
    either way.
    """

    __slots__ = ("kind", "refs", "texts", "titles", "raws", "docs")

    def __init__(
        self,
        kind: str,
        refs: list[str],
        texts: list[str],
        *,
        titles: list[str] | None = None,
        raws: list[dict[str, Any]] | None = None,
        docs: list[SearchDoc] | None = None,
    ) -> None:
        self.kind = kind
        self.refs = refs
        self.texts = texts
        self.titles = titles
        self.raws = raws
        self.docs = docs

    def search_doc(self, j: int) -> SearchDoc:
        if self.docs is not None:
            return self.docs[j]
        if self.kind == "episode":  # titles hold title sources: cut only when shown
            title = clip(self._title(j), search_docs.TITLE_WIDTH)
        else:
            assert self.titles is not None
            title = self.titles[j]
        return SearchDoc(self.kind, self.refs[j], title, self.texts[j])

    def _title(self, j: int) -> str:
        if self.titles is not None:
            return self.titles[j]
        assert self.raws is not None
        return _episode_title_source(self.raws[j])

    def all_titles(self) -> list[str]:
        if self.titles is not None:
            return self.titles
        if self.kind == "episode":
            return [self._title(j) for j in range(len(self.refs))]
        return [self.search_doc(j).title for j in range(len(self.refs))]


def _episode_title_source(doc: dict[str, Any]) -> str:
    """An episode's title before it is cut: cheap to keep, cut for the few shown.

    Only the start of the summary can reach a title, so only that is kept.
    """
    short = {k: doc.get(k) for k in ("index", "task_id", "score")}
    short["summary"] = doc.get("summary", "")[:300]
    return KINDS["episode"].title_of(short).replace("\n", " ")


def _padded(text: str) -> str:
    return f" {default_process(text)} "


def _doc_chunk(kind: str, docs: list[SearchDoc], *, keep_docs: bool = True) -> Chunk:
    texts = [_padded(f"{d.title} {d.text}") for d in docs]
    refs = [d.ref for d in docs]
    if keep_docs:
        return Chunk(kind, refs, texts, docs=docs)
    return Chunk(kind, refs, texts, titles=[d.title for d in docs])


def _episode_chunk(docs: Iterable[dict[str, Any]]) -> Chunk:
    refs, texts, raws = [], [], []
    join = " ".join
    for doc in docs:
        text = f"{doc['index']} {doc['task_id']} {doc.get('summary', '')}"
        mistakes, successes, errors = doc.get("mistakes"), doc.get("successes"), doc.get("errors")
        if mistakes:
            text = f"{text} {join(mistakes)}"
        if successes:
            text = f"{text} {join(successes)}"
        if errors:
            text = f"{text} {join(e.get('message', '') for e in errors)}"
        refs.append(doc["id"])
        texts.append(f" {default_process(text)} ")
        raws.append(doc)
    return Chunk("episode", refs, texts, raws=raws)


class DiskCache:
    """Prepared text per episode shard and observations table, in ``<store>/cache/search``.

    A full shard never changes again unless its episodes are edited, so a search
    in a fresh process (``memwork search``) reads one small text file per table
    instead of parsing its JSON and preparing every record. A file is valid only
    for the table file it was made from (its version, inode, size and mtime; for
    observations, also the sessions table that names them), and it holds only
    what the store already holds, scrubbed. It lives inside the store folder, with
    the store's private modes, so no copy of memory ever sits outside the folder
    the user chose (deleting the store deletes it, and it never outlives a
    forgotten record's table file). Nothing here is essential: any error (a
    read-only store, a link where the folder should be) means "no cache", and
    ``MEMWORK_SEARCH_CACHE=0`` turns it off.
    """

    FOLDER = SEARCH_CACHE

    _SEP = "\x1e"  # between the key, the refs, the titles and the texts

    def __init__(self, store: Store) -> None:
        self.folder: Path | None = None
        if store.folder is None or os.environ.get("MEMWORK_SEARCH_CACHE", "1") == "0":
            return  # in memory, or in Redis: no folder to keep a cache in
        self.folder = store.folder.joinpath(*self.FOLDER)

    def key(self, store: Store, name: str, extra: str = "") -> str | None:
        """What the table file is now (call under the store's lock)."""
        if self.folder is None:
            return None
        version = store.table_version(name)
        if version is None:
            return None
        # The version says what the table holds; the file's identity guards against a
        # folder put back by hand. A table still only in the log has no file yet.
        try:
            st = os.stat(store.table_path(name))
            where = f"{st.st_ino} {st.st_size} {st.st_mtime_ns}"
        except OSError:
            where = "-"
        return f"{name} {version} {where} {extra}"

    def _real_folder(self) -> bool:
        """Whether the cache folders are real folders (a planted link is never followed)."""
        assert self.folder is not None
        return not any(os.path.islink(p) for p in (self.folder.parent, self.folder))

    def load(self, kind: str, name: str, key: str) -> Chunk | None:
        assert self.folder is not None
        if not self._real_folder():
            return None
        try:
            fd = os.open(self.folder / f"{name}.txt", os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as src:
                text = src.read().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        parts = text.split(self._SEP)
        if len(parts) != 4 or parts[0] != key:
            return None
        refs, titles, texts = (p.split("\n") if p else [] for p in parts[1:])
        if not len(refs) == len(titles) == len(texts):
            return None
        return Chunk(kind, refs, texts, titles=titles)

    def sweep(self, live: set[str]) -> None:
        """Remove the files of tables the store no longer has (a session forgotten, tables
        a restore dropped), so no copy of their text outlives them."""
        if self.folder is None or not self._real_folder():
            return
        try:
            entries = list(os.scandir(self.folder))
        except OSError:
            return
        for entry in entries:
            name = entry.name
            if name.endswith(".txt") and name[: -len(".txt")] not in live:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)

    def save(self, name: str, key: str, chunk: Chunk) -> None:
        assert self.folder is not None
        titles = [t.replace("\n", " ").replace(self._SEP, " ") for t in chunk.all_titles()]
        body = self._SEP.join(
            [key, "\n".join(chunk.refs), "\n".join(titles), "\n".join(chunk.texts)]
        )
        target = self.folder / f"{name}.txt"
        tmp = target.with_name(f"{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            for folder in (self.folder.parent, self.folder):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(folder, 0o700)
            if not self._real_folder():
                return
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(tmp, flags, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(body.encode("utf-8"))
            os.replace(tmp, target)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()


def purge(store: Store, tables: set[str]) -> None:
    """Remove the search cache's files prepared from ``tables`` (a forget changed or
    dropped them; :mod:`core.erasure`)."""
    folder = DiskCache(store).folder
    if folder is None or os.path.islink(folder.parent) or os.path.islink(folder):
        return
    for name in tables:
        with contextlib.suppress(OSError):
            (folder / f"{name}.txt").unlink()


class Pool:
    """Every chunk's records numbered in one sequence; ``texts[i]`` is record ``i``."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = [c for c in chunks if c.refs]
        self.starts: list[int] = []
        self.texts: list[str] = []
        for chunk in self.chunks:
            self.starts.append(len(self.texts))
            self.texts.extend(chunk.texts)

    def __len__(self) -> int:
        return len(self.texts)

    def _at(self, i: int) -> tuple[Chunk, int]:
        k = bisect.bisect_right(self.starts, i) - 1
        return self.chunks[k], i - self.starts[k]

    def kind(self, i: int) -> str:
        return self._at(i)[0].kind

    def ref(self, i: int) -> str:
        chunk, j = self._at(i)
        return chunk.refs[j]

    def search_doc(self, i: int) -> SearchDoc:
        chunk, j = self._at(i)
        return chunk.search_doc(j)


class Corpus:
    """The searchable records of a store; keeps prepared tables between searches."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[object, Chunk]] = {}
        self._disk: DiskCache | None = None

    def pool(self, store: Store, now: datetime, kinds: set[str] | None) -> Pool:
        """Every record of the wanted kinds (the big tables each read once, a few per lock)."""
        if self._disk is None:
            self._disk = DiskCache(store)
        chunks: list[Chunk] = []
        with store.reading():
            if kinds is None or kinds - {"episode", "wm", "observation", "rule"}:
                docs = search_docs.small_table_docs(store, tables=False)
                by_kind: dict[str, list[SearchDoc]] = {}
                for d in docs:
                    if kinds is None or d.kind in kinds:
                        by_kind.setdefault(d.kind, []).append(d)
                chunks.extend(_doc_chunk(kind, found) for kind, found in by_kind.items())
            if wants(kinds, "wm"):
                chunks.append(_doc_chunk("wm", search_docs.working_memory_docs(store, now)))
            big: list[tuple[str, str]] = []
            titles: dict[str, str] = {}
            if wants(kinds, "observation"):
                titles = search_docs.session_titles(store)
                names = store.table_names("observations")
                big.extend(("observation", n) for n in names if n != "observations")
            if wants(kinds, "rule"):
                big.extend(("rule", n) for n in store.table_names("rules"))
            if wants(kinds, "episode"):
                big.extend(("episode", n) for n in shards.shard_names(store, "episodes"))
            sessions_version = str(store.table_version("sessions"))
        live = {name for _, name in big}
        for gone in [n for n in self._kept if n not in live]:
            del self._kept[gone]
        if kinds is None:  # a search of every kind knows every table a file may belong to
            self._disk.sweep(live)
        for start in range(0, len(big), _TABLES_PER_LOCK):
            # A few tables per lock, so writers never wait for a whole scan.
            with store.reading():
                for kind, name in big[start : start + _TABLES_PER_LOCK]:
                    extra = sessions_version if kind == "observation" else ""
                    chunks.append(self._table(store, self._disk, kind, name, extra, titles))
        return Pool(chunks)

    def _table(
        self,
        store: Store,
        disk: DiskCache,
        kind: str,
        name: str,
        extra: str,
        titles: dict[str, str],
    ) -> Chunk:
        """One big table's records: kept from an earlier search, else the disk cache, else read.

        Kept chunks are tagged with what they were made from: the loaded table
        (the store swaps a table's mapping whenever it changes) or the disk key.
        """
        kept = self._kept.get(name)
        if kept is not None and store.is_loaded(name) and kept[0] is store.docs(name):
            if kind != "observation":  # whose titles also depend on the sessions table
                return kept[1]
        key = disk.key(store, name, extra)
        if kept is not None and key is not None and kept[0] == key:
            return kept[1]
        chunk = disk.load(kind, name, key) if key is not None else None
        if chunk is not None:
            self._kept[name] = (key, chunk)
            return chunk
        docs = store.docs(name)
        if kind == "episode":
            chunk = _episode_chunk(docs.values())
        elif kind == "rule":
            chunk = _doc_chunk(kind, list(search_docs.rule_docs(store, name)), keep_docs=False)
        else:
            found = list(search_docs.observation_docs(store, name, titles))
            chunk = _doc_chunk(kind, found, keep_docs=False)
        if key is not None:
            disk.save(name, key, chunk)
        self._kept[name] = (key if key is not None else docs, chunk)
        return chunk


def wants(kinds: set[str] | None, kind: str) -> bool:
    return kinds is None or kind in kinds
