"""Who may decide: the holder of the store's curator key.

While review is on, agents' lesson adds, slot edits and rules wait as proposals, and
turning review off or restoring a checkpoint taken while it was off waits too. Deciding
(approve, reject, merge, and those two) takes the **curator key**: a random secret in a
file, whose SHA-256 the store keeps (``meta/curator``). Naming oneself ``tui`` or
setting ``MEMWORK_AGENT`` claims nothing; presenting the key does.

- The workbench is a person at the keyboard: it reads the key from the user's key file
  (``<user config dir>/memwork/curator.key``, or ``MEMWORK_CURATOR_KEY_FILE``), creating
  it on the first decision.
- The CLI decides only with ``--curator-key FILE`` given on the command line (never from
  the environment or the default file by itself: an agent started from the same shell
  would inherit those), so a careless agent's ``memwork review approve`` is refused.
- A store registers the first key that decides (or turns review on) for it; from then
  on only that key decides. ``memwork curator init`` makes a key file and registers it.

What this cannot do is keep the key from a process that can read the key file: keep it
where the agent cannot (run agents in a sandbox or as another user, which is also what
keeps them from editing the store's files directly).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from datetime import datetime
from pathlib import Path
from typing import Any

from ..base.errors import InvalidInput, UserError
from ..storage.store import Store

META = "meta"
DOC = "curator"
KEY_PREFIX = "mwc_"
ENV_FILE = "MEMWORK_CURATOR_KEY_FILE"


class NotCurator(UserError):
    """A decision without the curator key (exit 2): it stays undecided."""


class Curator:
    """Proof that a curator key was presented: the key's text, compared by digest."""

    __slots__ = ("_key", "source")

    def __init__(self, key: str, source: str = "") -> None:
        if not key.startswith(KEY_PREFIX) or len(key) < len(KEY_PREFIX) + 32:
            raise InvalidInput("curator key", f"{source or 'the key'} is not a memwork curator key")
        self._key = key
        #: Where the key came from (a file name), for messages.
        self.source = source

    @property
    def digest(self) -> str:
        """What the store keeps of the key."""
        return hashlib.sha256(self._key.encode()).hexdigest()

    def __repr__(self) -> str:  # never the key itself
        return f"Curator({self.source!r})"


# -- key files --------------------------------------------------------------------------
def default_key_file() -> Path:
    """The user's key file: ``$MEMWORK_CURATOR_KEY_FILE``, else the user config dir's."""
    named = os.environ.get(ENV_FILE)
    if named:
        return Path(named)
    from platformdirs import user_config_dir

    return Path(user_config_dir("memwork")) / "curator.key"


def new_key() -> str:
    """A fresh curator key."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def load(path: Path | str) -> Curator:
    """The curator key in ``path`` (InvalidInput naming the file when it is not one)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise InvalidInput(
            "curator key", f"{path} does not exist (memwork curator init makes one)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput("curator key", f"cannot read {path}: {exc}") from None
    return Curator(text, source=str(path))


def ensure_key_file(path: Path | None = None) -> tuple[Curator, bool]:
    """The key in ``path`` (default: :func:`default_key_file`), made when missing: a new
    key, in a file only its owner may read. Returns (curator, whether it was made)."""
    path = path or default_key_file()
    try:
        if path.exists():
            return load(path), False
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = new_key()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        # A name too long, a folder not ours, a file where a folder should be: the
        # user's to fix, said in one line; nothing was made.
        why = (
            "a file stands where a folder of its path should be"
            if isinstance(exc, FileExistsError | NotADirectoryError)
            else exc.strerror or str(exc)
        )
        raise InvalidInput("FILE", f"cannot make {path}: {why}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(key + "\n")
    return Curator(key, source=str(path)), True


# -- the store's registration -------------------------------------------------------------
def registered(store: Store) -> dict[str, Any] | None:
    """The store's curator registration (call inside a read), or None."""
    doc = store.docs(META).get(DOC)
    return dict(doc) if doc else None


def register(store: Store, curator: Curator, *, now: datetime, actor: str) -> dict[str, Any]:
    """Make ``curator`` the store's curator: allowed when none is registered, or when it
    is the registered one (nothing changes). Audited."""
    from ..base.clock import iso
    from . import audit

    with store.transaction():
        current = registered(store)
        if current is not None:
            check(store, curator)
            return current
        doc = {
            "id": DOC,
            "key_sha256": curator.digest,
            "registered_at": iso(now),
            "registered_by": actor,
        }
        store.put(META, DOC, doc)
        audit.record(
            store,
            actor=actor,
            action="curator",
            table=META,
            record_id=DOC,
            summary="registered the curator key that decides for this store",
            now=now,
        )
    return doc


def check(
    store: Store,
    curator: Curator | None,
    *,
    now: datetime | None = None,
    actor: str = "",
    what: str = "deciding",
) -> None:
    """Refuse (:class:`NotCurator`) unless ``curator`` is the store's curator.

    With ``now`` given, a store without a registered curator takes this one (the first
    key to decide for a store becomes its curator; call inside a transaction).
    """
    if curator is None:
        raise NotCurator(
            f"review: {what} needs the store's curator key (memwork --curator-key FILE ..., "
            "or the workbench); an agent's write waits as a proposal for a person"
        )
    current = registered(store)
    if current is None:
        if now is None:
            raise NotCurator(
                "review: this store has no curator yet (memwork curator init registers one)"
            )
        register(store, curator, now=now, actor=actor)
        return
    if not hmac.compare_digest(str(current.get("key_sha256", "")), curator.digest):
        raise NotCurator(
            f"review: the curator key {curator.source or 'given'} is not this store's "
            f"(registered by {current.get('registered_by', '?')} at "
            f"{str(current.get('registered_at', '?'))[:19]}); nothing was decided"
        )


def holds(store: Store, curator: Curator | None) -> bool:
    """Whether ``curator`` is the store's registered curator (call inside a read)."""
    if curator is None:
        return False
    current = registered(store)
    return current is not None and hmac.compare_digest(
        str(current.get("key_sha256", "")), curator.digest
    )


def init_op(store: Store, *, now: datetime, actor: str, file: str | None = None) -> dict[str, Any]:
    """The ``init_curator`` operation: the key file (made when missing) registered as the
    store's curator; ``made`` says whether the file is new."""
    path = Path(file) if file else default_key_file()
    if file is not None and not file.strip():
        raise InvalidInput("FILE", "must name a file (got an empty path)")
    key, made = ensure_key_file(path)
    doc = register(store, key, now=now, actor=actor)
    return {
        "id": DOC,
        "file": str(path),
        "made": made,
        "registered_at": doc.get("registered_at"),
        "registered_by": doc.get("registered_by"),
    }
