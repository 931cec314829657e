"""``memwork doctor`` on a Redis store: the data, the schema, the lock, and the server's
settings that memwork's guarantees rest on. It reports; it changes nothing.

What memwork expects of the server (docs/STORES.md lists them too):

* ``appendonly yes`` and ``appendfsync always``: an acknowledged commit is on
  disk before memwork hears "OK", so it survives a crash of the server. With
  ``everysec`` a crash can lose the last second of acknowledged writes; with
  no AOF (RDB snapshots alone, or nothing) it can lose much more.
* ``aof-load-truncated no``: a crash can cut the AOF's last write short. With
  the default (``yes``) the server loads what is left, and Redis 6.2 (like
  Valkey before its fix of 2026) keeps the cut commit's opening ``MULTI`` and
  first commands in the file: the next transaction written after it closes it
  and the next restart replays that half of a commit, which memwork's commits
  (one atomic script each) promise never happens. With ``no`` the server refuses
  to start instead, and ``redis-check-aof --fix`` drops the cut write whole.
* ``maxmemory-policy noeviction``: any eviction policy lets a full server
  delete store keys (tables, the manifest) to make room; with noeviction a
  full server refuses the write and memwork reports it, nothing lost.

Managed services sometimes disable ``CONFIG``; then the persistence section of
``INFO`` is used, and what cannot be seen is reported as unknown.
"""

from __future__ import annotations

import json
from typing import Any

from ...base.errors import UserError
from ...storage import schema
from ...storage.manifest import FORMAT, is_table_name
from ...storage.redis_keys import (
    BACKUP_PREFIX,
    DAMAGED_PREFIX,
    LOCK,
    META,
    PREFIX,
    SNAPS,
    TABLES,
)
from ...storage.resp import Connection, ConnectionLost, ReplyError
from ...storage.tables import logical_name
from ...storage.url import StoreURL
from .findings import Check, verdict


def _pairs(flat: list[bytes] | None) -> dict[str, bytes]:
    flat = flat or []
    return {flat[i].decode("utf-8", "replace"): flat[i + 1] for i in range(0, len(flat), 2)}


def _config(conn: Connection) -> dict[str, str] | None:
    """The server settings memwork cares about (None: CONFIG is not allowed)."""
    try:
        flat = conn.call("CONFIG", "GET", "*")
    except ReplyError:
        return None
    return {k: v.decode("utf-8", "replace") for k, v in _pairs(flat).items()}


def _info(conn: Connection, section: str) -> dict[str, str]:
    try:
        text = conn.call("INFO", section).decode("utf-8", "replace")
    except ReplyError:
        return {}
    return dict(
        line.split(":", 1) for line in text.splitlines() if ":" in line and not line.startswith("#")
    )


def server_checks(conn: Connection) -> list[Check]:
    """Persistence and eviction settings, judged against what memwork promises."""
    checks = []
    config = _config(conn)
    persistence = _info(conn, "persistence")
    if config is not None:
        aof, fsync = config.get("appendonly"), config.get("appendfsync")
        policy: str | None = config.get("maxmemory-policy")
    else:
        aof = {"1": "yes", "0": "no"}.get(persistence.get("aof_enabled", ""))
        fsync, policy = None, None
    if aof == "no":
        checks.append(
            Check(
                "durability",
                "problem",
                "the server runs without AOF (appendonly no): a crash loses acknowledged "
                "writes; set appendonly yes and appendfsync always",
            )
        )
    elif aof == "yes" and fsync == "always":
        checks.append(Check("durability", "ok", "appendonly yes, appendfsync always"))
    elif aof == "yes" and fsync is not None:
        checks.append(
            Check(
                "durability",
                "warn",
                f"appendfsync {fsync}: a crash of the server can lose the last "
                f"{'second' if fsync == 'everysec' else 'seconds'} of acknowledged writes; "
                "set appendfsync always",
            )
        )
    else:
        checks.append(
            Check(
                "durability",
                "warn",
                "cannot read the server's settings (CONFIG is disabled): make sure it runs "
                "with appendonly yes, appendfsync always and aof-load-truncated no",
            )
        )
    if aof == "yes" and config is not None:
        checks.append(_recovery_check(config.get("aof-load-truncated")))
    if persistence.get("aof_last_write_status", "ok") != "ok":
        checks.append(
            Check("durability", "problem", "the server's last AOF write failed (see its log)")
        )
    if policy is None:
        checks.append(
            Check("eviction", "warn", "cannot read maxmemory-policy: it must be noeviction")
        )
    elif policy != "noeviction":
        checks.append(
            Check(
                "eviction",
                "problem",
                f"maxmemory-policy {policy}: a full server may delete store keys; "
                "set maxmemory-policy noeviction",
            )
        )
    else:
        checks.append(Check("eviction", "ok", "maxmemory-policy noeviction"))
    return checks


def _recovery_check(load_truncated: str | None) -> Check:
    """How the server restarts after a crash cut its AOF's last write short."""
    if load_truncated == "no":
        return Check(
            "crash recovery",
            "ok",
            "aof-load-truncated no (after a crash cuts a write short, "
            "`redis-check-aof --fix` drops it whole)",
        )
    return Check(
        "crash recovery",
        "warn",
        f"aof-load-truncated {load_truncated or 'unknown'}: after a crash cuts a commit "
        "short in the AOF, a later restart can replay half of it; set aof-load-truncated no "
        "and, when the server then refuses to start, run `redis-check-aof --fix` on its AOF",
    )


def _header(conn: Connection) -> list[Any]:
    # EXEC's reply: the transaction's replies, one per command, as a list.
    return list(
        conn.pipeline(
            [
                ("MULTI",),
                ("HGETALL", META),
                ("HGETALL", TABLES),
                ("SMEMBERS", SNAPS),
                ("GET", LOCK),
                ("PTTL", LOCK),
                ("EXEC",),
            ]
        )[-1]
    )


def _scan(conn: Connection) -> list[str]:
    keys: list[str] = []
    cursor = b"0"
    while True:
        cursor, batch = conn.call("SCAN", cursor, "COUNT", 1000)
        keys += [k.decode("utf-8", "replace") for k in batch]
        if cursor == b"0":
            return keys


def diagnose(url: StoreURL) -> list[Check]:
    """Every check, in the order a user would want to read them."""
    conn = Connection(url)
    try:
        try:
            conn.connect()
            # A server that wants a password answers the first command with NOAUTH (the
            # connect sends AUTH only with one): a store doctor cannot open is the same
            # one-line refusal (exit 2) every command gives, not a report.
            conn.call("PING")
        except ConnectionLost as exc:
            return [Check("store", "problem", f"cannot reach Redis at {url.display}: {exc}")]
        except ReplyError as exc:
            if exc.code in ("NOAUTH", "WRONGPASS") or "password" in str(exc):
                from ...storage.redis_backend import reply_error

                raise reply_error(url, exc) from None
            return [Check("store", "problem", f"Redis at {url.display} refused memwork: {exc}")]
        return _diagnose(conn, url)
    finally:
        conn.close()


def _diagnose(conn: Connection, url: StoreURL) -> list[Check]:
    server = _info(conn, "server")
    version = server.get("redis_version", "?")
    for _ in range(3):  # a commit between the header and the scan: look again
        header = _header(conn)
        keys = _scan(conn)
        if _header(conn)[0] == header[0]:
            break
    meta_raw, tables_raw, snaps_raw, holder, pttl = header
    # A key of memwork's holding another kind of value (a hand's SET on a hash) answers
    # WRONGTYPE: said as a problem with that key, and read as empty.
    wrong = [
        Check("keys", "problem", f"{key} holds the wrong kind of value ({reply})")
        for key, reply in zip((META, TABLES, SNAPS, LOCK), header[:4], strict=True)
        if isinstance(reply, ReplyError)
    ]
    meta_raw, tables_raw, snaps_raw, holder = (
        None if isinstance(x, ReplyError) else x for x in header[:4]
    )
    if isinstance(pttl, ReplyError):
        pttl = -1
    meta = _pairs(meta_raw)
    if not meta:
        if wrong:
            return [Check("store", "ok", f"{url.display} (Redis {version})"), *wrong]
        raise _no_store(url)
    checks = [Check("store", "ok", f"{url.display} (Redis {version})"), *wrong]
    if meta.get("format") != FORMAT.encode():
        checks.append(Check("manifest", "problem", f"{META} is not a memwork store header"))
        return checks
    try:
        schema_version = int(meta.get("schema_version", b""))
    except ValueError:
        checks.append(Check("manifest", "problem", f"{META} has a damaged schema_version"))
        return checks
    if schema_version > schema.SCHEMA_VERSION:
        checks.append(
            Check(
                "schema",
                "problem",
                f"version {schema_version} is newer than this memwork "
                f"({schema.SCHEMA_VERSION}); upgrade memwork",
            )
        )
    elif schema_version < schema.SCHEMA_VERSION:
        checks.append(Check("schema", "warn", f"version {schema_version}: migrated on next open"))
    else:
        checks.append(Check("schema", "ok", f"version {schema_version}"))
    checks += server_checks(conn)
    if holder:
        origin, _, rest = holder.decode("utf-8", "replace").partition(":")
        who = f"pid {rest.partition(':')[0]} on {origin.split('/')[0]}"
        checks.append(
            Check(
                "lock",
                "warn",
                f"held by {who} right now (a writer is busy; its lease ends in "
                f"{max(pttl, 0) / 1000:.1f} s unless renewed)",
            )
        )
    else:
        checks.append(Check("lock", "ok", "free"))
    tables = {}
    for name, raw in _pairs(tables_raw).items():
        tables[name] = raw
    checks += _table_checks(conn, tables)
    damaged = {c.name[len("table ") :]: c for c in checks if c.name.startswith("table ")}
    if damaged and "checkpoints" not in damaged:
        checks.append(_repair(conn, damaged))
    snaps = {s.decode() for s in snaps_raw or ()}
    checks += _key_checks(keys, tables, snaps)
    checks += _snapshot_checks(conn)
    logical = sorted({logical_name(n) for n in tables if is_table_name(n)})
    checks.append(Check("contents", "ok", ", ".join(logical) or "empty store"))
    return checks


def _table_checks(conn: Connection, tables: dict[str, bytes]) -> list[Check]:
    checks = []
    bad = documents = 0
    for name in sorted(tables):
        if not is_table_name(name):
            checks.append(Check(f"table {name[:40]}", "problem", "not a valid table name"))
            bad += 1
            continue
        try:
            flat = conn.call("HGETALL", f"{PREFIX}t:{name}")
        except ReplyError as exc:
            checks.append(Check(f"table {name}", "problem", f"{PREFIX}t:{name}: {exc}"))
            bad += 1
            continue
        broken = []
        for doc_id, value in _pairs(flat).items():
            try:
                ok = isinstance(json.loads(value), dict)
            except ValueError:
                ok = False
            if not ok:
                broken.append(doc_id)
        if broken:
            checks.append(
                Check(
                    f"table {name}",
                    "problem",
                    f"{PREFIX}t:{name}: {len(broken)} documents are not JSON objects "
                    f"({', '.join(repr(b[:40]) for b in broken[:3])})",
                )
            )
            bad += 1
        documents += len(flat) // 2
    checks.append(
        Check(
            "tables",
            "ok" if not bad else "problem",
            f"{len(tables)} tables, {documents} documents, {bad} unreadable",
        )
    )
    return checks


def _readable_copy(conn: Connection, checkpoint: str, name: str) -> bool:
    """Whether a checkpoint's snapshot holds a copy of table ``name`` that reads."""
    base = f"{PREFIX}snap:{checkpoint}"
    try:
        if conn.call("HEXISTS", base, name) != 1:
            return False
        flat = conn.call("HGETALL", f"{base}:t:{name}")
    except ReplyError:
        return False
    try:
        return all(isinstance(json.loads(v), dict) for v in _pairs(flat).values())
    except ValueError:
        return False


def _repair(conn: Connection, damaged: dict[str, Check]) -> Check:
    """Name, for each damaged table, the newest checkpoint with a readable copy of it,
    and the command that restores them all."""
    try:
        raw = _pairs(conn.call("HGETALL", f"{PREFIX}t:checkpoints"))
        docs = [json.loads(v) for v in raw.values()]
    except (ReplyError, ValueError):
        docs = []
    ordered = sorted(
        (d for d in docs if isinstance(d, dict) and isinstance(d.get("id"), str)),
        key=lambda d: (str(d.get("created_at", "")), d["id"]),
        reverse=True,
    )
    for name, check in damaged.items():
        found = next((c for c in ordered if _readable_copy(conn, c["id"], name)), None)
        if found is None:
            check.detail += "; no checkpoint holds a readable copy of it"
        else:
            check.detail += (
                f"; the newest checkpoint with a readable copy is {found['id']} (taken "
                f"{found.get('created_at')}): `memwork checkpoint restore {found['id']}`"
            )
    covering = next(
        (c for c in ordered if all(_readable_copy(conn, c["id"], n) for n in damaged)), None
    )
    if covering is None:
        return Check(
            "repair",
            "problem",
            f"{len(damaged)} damaged tables, and no checkpoint holds a readable copy of every "
            f"one; restoring a checkpoint still copies each aside under {PREFIX}damaged:",
        )
    return Check(
        "repair",
        "problem",
        f"run `memwork checkpoint restore {covering['id']}`: it restores every table to that "
        f"checkpoint and copies the {len(damaged)} damaged tables aside under "
        f"{PREFIX}damaged: (an automatic checkpoint undoes it)",
    )


def _key_checks(keys: list[str], tables: dict[str, bytes], snaps: set[str]) -> list[Check]:
    checks = []
    foreign = sorted(k for k in keys if not k.startswith(PREFIX))
    unlisted = sorted(
        k[len(PREFIX) + 2 :]
        for k in keys
        if k.startswith(PREFIX + "t:") and k[len(PREFIX) + 2 :] not in tables
    )
    known = {META, TABLES, SNAPS, LOCK}
    backups = sorted({k.split(":")[2] for k in keys if k.startswith(BACKUP_PREFIX)})
    aside = sorted({k.split(":")[2] for k in keys if k.startswith(DAMAGED_PREFIX)})
    strays = sorted(
        k
        for k in keys
        if k.startswith(PREFIX)
        and k not in known
        and not k.startswith(BACKUP_PREFIX)
        and not k.startswith(DAMAGED_PREFIX)
        and not k.startswith(PREFIX + "t:")
        and not (k.startswith(PREFIX + "snap:") and k[len(PREFIX) + 5 :].split(":")[0] in snaps)
    )
    if unlisted:
        checks.append(
            Check(
                "unlisted tables",
                "problem",
                f"{len(unlisted)} table keys the manifest ({TABLES}) does not list "
                f"({', '.join(unlisted[:5])}): their records are invisible",
            )
        )
    if foreign:
        checks.append(
            Check(
                "foreign keys",
                "problem",
                f"{len(foreign)} keys that are not memwork's ({', '.join(foreign[:5])}): a store "
                "needs a database of its own",
            )
        )
    if backups:
        checks.append(
            Check(
                "backups",
                "ok",
                f"migration backups kept under {BACKUP_PREFIX}<name>:* ({', '.join(backups)}); "
                "delete them when no longer needed",
            )
        )
    if aside:
        checks.append(
            Check(
                "damaged",
                "ok",
                f"tables a restore found damaged are kept under {DAMAGED_PREFIX}<time>:* "
                f"({', '.join(aside)}); delete them when no longer needed",
            )
        )
    if strays:
        checks.append(
            Check(
                "keys",
                "warn",
                f"{len(strays)} memwork keys the store does not use: {', '.join(strays[:5])}",
            )
        )
    return checks


def _snapshot_checks(conn: Connection) -> list[Check]:
    """The snapshots against the checkpoints that name them, all read in one
    transaction: a checkpoint taken between two reads would look like one without its
    snapshot (or its snapshot like one no checkpoint names)."""
    replies = conn.pipeline(
        [
            ("MULTI",),
            ("SMEMBERS", SNAPS),
            ("HEXISTS", TABLES, "checkpoints"),
            ("HKEYS", f"{PREFIX}t:checkpoints"),
            ("EXEC",),
        ]
    )[-1]
    if not isinstance(replies, list) or any(isinstance(r, ReplyError) for r in replies):
        return []  # the keys' or the table's own checks say what is wrong with them
    members, listed, keys = replies
    snaps = {s.decode("utf-8", "replace") for s in members or ()}
    recorded = {k.decode("utf-8", "replace") for k in keys or ()} if listed else set()
    checks = []
    orphans = sorted(snaps - recorded)
    missing = sorted(recorded - snaps)
    if orphans:
        checks.append(
            Check(
                "snapshots",
                "warn",
                f"{len(orphans)} snapshots no checkpoint names (left by interrupted checkpoint "
                "deletes); the next checkpoint create, restore or delete removes them",
            )
        )
    if missing:
        checks.append(
            Check(
                "snapshots",
                "problem",
                f"{len(missing)} checkpoints have no snapshot ({', '.join(missing[:3])}): "
                "they cannot be restored",
            )
        )
    return checks


def _no_store(url: StoreURL) -> UserError:
    from ...base.errors import NoStore

    return NoStore(url.display)


def report(url: StoreURL) -> dict[str, Any]:
    """The Redis store's checks as JSON, with an overall verdict."""
    return verdict(diagnose(url), url.display)
