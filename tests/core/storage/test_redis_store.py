"""A store in Redis: URLs are never folders, errors are one line and write nothing, the
lease fences stale writers, commits are atomic, checkpoints live in Redis, working
memory is reclaimed by Redis expiry, and commits are announced on a channel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memwork.core.base.errors import InvalidInput, StoreError, StoreTooNew, StoreUnreadable
from memwork.core.domain import lessons
from memwork.core.domain.working_memory import checkpoints as wm_checkpoints
from memwork.core.domain.working_memory import keys as wm_keys
from memwork.core.doors.cli.main import main
from memwork.core.services import checkpoints
from memwork.core.storage.store import Store
from tests.conftest import NOW, folder_digest, python_env
from tests.redis_server import RedisServer, client_for, free_port

T0 = "2026-11-01T12:00:00Z"


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture, tmp_path: Path):  # noqa: ANN201
    """``memwork ARGS`` in-process from an empty working folder: (code, out, err)."""
    import io

    monkeypatch.chdir(tmp_path)

    def go(*argv: str, stdin: str = "") -> tuple[int, str, str]:
        capsysbinary.readouterr()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode()), "utf-8"))
        code = main(list(argv))
        sys.stdout.flush()
        captured = capsysbinary.readouterr()
        return code, captured.out.decode(), captured.err.decode()

    return go


def _one_line(err: str) -> None:
    assert err.startswith("memwork: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err


# -- a URL is never a folder ------------------------------------------------------------------
def test_a_redis_url_opens_the_database_and_creates_no_folder(
    run, redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run("--db", redis_url, "lesson", "add", "Canary every deploy")
    assert code == 0, err
    assert os.listdir(tmp_path) == []  # no folder named "redis:" (or anything) appeared
    assert client_for(redis_url).hexists("memwork:t:lessons", out.strip())
    monkeypatch.setenv("MEMWORK_DB", redis_url)
    code, out, _ = run("lesson", "list", "--json")
    assert [d["content"] for d in json.loads(out)] == ["Canary every deploy"]
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("redis://", "must name a host"),
        ("redis://localhost:6379/zero", "the database must be a number"),
        ("redis:localhost", "starts with redis://"),
        ("http://localhost/0", "only redis:// and rediss:// URLs name a store"),
        ("redis://localhost/0?timeout=3", "unknown URL option 'timeout'"),
        ("redis://localhost:99999/0", "not a valid Redis URL"),
    ],
)
def test_a_malformed_url_is_refused_and_nothing_is_created(
    run, tmp_path: Path, url: str, message: str
) -> None:
    code, out, err = run("--db", url, "lesson", "add", "x")
    assert (code, out) == (2, "")
    _one_line(err)
    assert message in err
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "url",
    [
        "redis//:PW-s3cret@host:6379/0",
        "'redis://:PW-s3cret@host:6379/0'",
        "x redis://user:PW-s3cret@host/0",
        "<redis://:PW-s3cret@host/0>",
        "redis:/:PW-s3cret@host/0",
        "reddis://:PW-s3cret@host/0",
    ],
)
def test_a_mangled_url_is_refused_creating_nothing_and_never_shows_its_password(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    for verb in (("lesson", "add", "x"), ("stats",), ("doctor",)):
        code, out, err = run("--db", url, *verb)
        assert (code, out) == (2, ""), (verb, out)
        _one_line(err)
        assert "PW-s3cret" not in err, err
        assert "***@" in err or url.startswith("reddis"), err
    monkeypatch.setenv("MEMWORK_DB", url)
    code, _, err = run("stats")
    assert code == 2 and "PW-s3cret" not in err and "MEMWORK_DB" in err
    assert os.listdir(tmp_path) == []


def test_surrounding_whitespace_is_trimmed_from_the_store_location(
    run, redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run("--db", f" {redis_url}\t", "lesson", "add", "Canary every deploy")
    assert code == 0, err
    assert os.listdir(tmp_path) == []  # no folder named after the URL
    monkeypatch.setenv("MEMWORK_DB", f"  {redis_url} ")
    code, out, _ = run("--json", "stats")
    assert code == 0 and json.loads(out)["counts"]["lessons"] == 1
    # An unreachable server with a password: the message names it without the password.
    code, out, err = run("--db", f" redis://:PW-s3cret@127.0.0.1:{free_port()}/0", "stats")
    assert code == 2 and "PW-s3cret" not in err
    _one_line(err)
    assert os.listdir(tmp_path) == []
    # A folder too.
    monkeypatch.delenv("MEMWORK_DB")
    code, _, err = run("--db", f" {tmp_path / 'db'} ", "lesson", "add", "x")
    assert code == 0, err
    assert os.listdir(tmp_path) == ["db"]


def test_a_url_that_became_a_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="is a URL, not a folder"):
        Store(Path("redis://localhost/0"))
    assert not Path("redis:").exists()


def test_read_verbs_create_nothing_in_an_empty_database(run, redis_url: str) -> None:
    client = client_for(redis_url)
    assert run("--db", redis_url, "context")[:2] == (0, "")
    for verb in (("lesson", "list"), ("stats",), ("export",), ("doctor",)):
        code, _, err = run("--db", redis_url, *verb)
        assert code == 2 and err == f"memwork: no memwork store at {redis_url}\n", verb
    assert client.dbsize() == 0


# -- errors: one line, exit 2, nothing written -------------------------------------------------
def test_server_down_is_one_line_exit_2(run) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    for verb in (("context",), ("lesson", "add", "x"), ("stats",)):
        code, out, err = run("--db", url, *verb)
        assert (code, out) == (2, ""), verb
        _one_line(err)
        assert f"cannot reach Redis at {url}" in err and "connection refused" in err


@pytest.fixture(scope="module")
def locked_server(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    server = RedisServer(tmp_path_factory.mktemp("locked"), fsync="no", password="s3cret")
    server.start()
    yield server
    server.stop()


def test_wrong_or_missing_password_is_one_line_exit_2(run, locked_server: RedisServer) -> None:
    base = f"127.0.0.1:{locked_server.port}/3"
    code, _, err = run("--db", f"redis://:wrong@{base}", "lesson", "add", "x")
    assert code == 2 and "refused the password" in err and "wrong" not in err
    _one_line(err)
    code, _, err = run("--db", f"redis://{base}", "lesson", "add", "x")
    assert code == 2 and "needs a password" in err
    assert locked_server.client(3).dbsize() == 0
    code, _, err = run("--db", f"redis://:s3cret@{base}", "lesson", "add", "x")
    assert code == 0, err


def test_the_password_may_come_from_the_environment(
    run, locked_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_REDIS_PASSWORD", "s3cret")
    code, _, err = run("--db", f"redis://127.0.0.1:{locked_server.port}/4", "rule", "add", "x")
    assert code == 0, err


def test_a_database_with_other_keys_is_refused_untouched(run, redis_url: str) -> None:
    client = client_for(redis_url)
    client.set("sessions:cache", "theirs")
    before = folder_digest(redis_url)
    code, out, err = run("--db", redis_url, "lesson", "add", "x")
    assert (code, out) == (2, "")
    _one_line(err)
    assert "holds keys that are not memwork's ('sessions:cache')" in err
    assert folder_digest(redis_url) == before


def test_a_newer_schema_is_refused_untouched(run, redis_url: str) -> None:
    assert run("--db", redis_url, "lesson", "add", "x")[0] == 0
    client = client_for(redis_url)
    client.hset("memwork:meta", "schema_version", 99)
    before = folder_digest(redis_url)
    for verb in (("lesson", "add", "y"), ("lesson", "list"), ("context",)):
        code, _, err = run("--db", redis_url, *verb)
        assert code == 2, verb
        _one_line(err)
        assert "schema version 99, newer than this memwork" in err
    assert folder_digest(redis_url) == before
    with pytest.raises(StoreTooNew):
        Store(redis_url)


def test_a_damaged_document_is_named_and_left_untouched(run, redis_url: str) -> None:
    assert run("--db", redis_url, "lesson", "add", "x")[0] == 0
    client = client_for(redis_url)
    lesson_id = client.hkeys("memwork:t:lessons")[0].decode()
    client.hset("memwork:t:lessons", lesson_id, b"{not json")
    before = folder_digest(redis_url)
    code, _, err = run("--db", redis_url, "lesson", "add", "another")
    assert code == 2
    _one_line(err)
    assert f"document '{lesson_id}' of table lessons" in err and "left untouched" in err
    code, out, _ = run("--db", redis_url, "doctor")
    assert code == 1 and "PROBLEM  table lessons" in out
    assert folder_digest(redis_url) == before


# -- atomicity and the lease -----------------------------------------------------------------
def test_a_failed_transaction_sends_nothing(redis_url: str) -> None:
    store = Store(redis_url)
    client = client_for(redis_url)
    with store.transaction():
        store.put("lessons", "a", {"id": "a"})
    before = folder_digest(redis_url)
    with pytest.raises(RuntimeError), store.transaction():
        store.put("lessons", "b", {"id": "b"})
        store.put("slots", "s", {"id": "s"})
        raise RuntimeError("boom")
    assert folder_digest(redis_url) == before
    assert client.hget("memwork:meta", "generation") == b"2"


def test_a_commit_sends_only_the_documents_that_changed(redis_url: str) -> None:
    store = Store(redis_url)
    with store.transaction():
        store.put_many("lessons", {f"l{i}": {"id": f"l{i}", "n": i} for i in range(50)})
    client = client_for(redis_url)
    monitor_before = client.info("commandstats").get("cmdstat_hset", {}).get("calls", 0)
    with store.transaction():
        doc = store.get("lessons", "l7")
        store.put("lessons", "l7", {**doc, "n": 700})
    assert client.hget("memwork:t:lessons", "l7") == b'{"id":"l7","n":700}'
    stats = client.info("commandstats")
    # One HSET for the document (and the table's version and the header), not fifty.
    assert stats["cmdstat_hset"]["calls"] - monitor_before <= 3


def test_a_stale_writer_is_fenced_off(redis_url: str) -> None:
    """A writer whose lease ran out and was taken by another process writes nothing."""
    store = Store(redis_url)
    client = client_for(redis_url)
    with store.transaction():
        store.put("lessons", "a", {"id": "a", "v": 1})
    before = folder_digest(redis_url)
    with pytest.raises(StoreError, match="lease on the lock .* ran out"):
        with store.transaction():
            store.put("lessons", "a", {"id": "a", "v": 2})
            # Meanwhile the lease expired and another process took the lock.
            client.set("memwork:lock", "elsewhere:1:abc", px=5000)
    client.delete("memwork:lock")  # the other process is done
    assert folder_digest(redis_url) == before
    with store.reading():
        assert store.get("lessons", "a") == {"id": "a", "v": 1}


def test_a_busy_lock_waits_then_fails_in_one_line(
    run, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run("--db", redis_url, "rule", "add", "x")[0] == 0
    client_for(redis_url).set("memwork:lock", "otherhost/1:4242:abc", px=60_000)
    monkeypatch.setenv("MEMWORK_LOCK_TIMEOUT", "0.2")
    started = time.monotonic()
    code, _, err = run("--db", redis_url, "rule", "add", "y")
    assert code == 1 and time.monotonic() - started < 5
    _one_line(err)
    assert "locked by another process (pid 4242 on otherhost)" in err


def test_a_killed_holder_on_this_host_is_taken_over_at_once(redis_url: str) -> None:
    Store(redis_url)
    probe = (
        "import os, sys; from memwork.core.storage.store import Store; s = Store(sys.argv[1]); "
        "held = s._locked(); held.__enter__(); print('held', flush=True); os.kill(os.getpid(), 9)"
    )
    child = subprocess.run(
        [sys.executable, "-c", probe, redis_url], capture_output=True, text=True, env=python_env()
    )
    assert child.stdout == "held\n"
    client = client_for(redis_url)
    assert client.pttl("memwork:lock") > 5000  # a 10 s lease, left behind by the kill
    started = time.monotonic()
    store = Store(redis_url)
    with store.transaction():
        store.put("lessons", "a", {"id": "a"})
    # At once: well inside the 10 s lease that waiting it out would take.
    assert time.monotonic() - started < 5.0


def test_a_killed_holder_elsewhere_is_waited_out(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    Store(redis_url)
    client_for(redis_url).set("memwork:lock", "otherhost/1:4242:abc", px=700)
    started = time.monotonic()
    store = Store(redis_url)
    with store.transaction():
        store.put("lessons", "a", {"id": "a"})
    assert 0.5 < time.monotonic() - started < 5


def test_the_heartbeat_keeps_a_long_transaction_s_lease(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_LOCK_LEASE", "0.6")
    store = Store(redis_url)
    with store.transaction():
        store.put("lessons", "a", {"id": "a"})
        time.sleep(1.5)  # well past the lease: the heartbeat renews it
    with store.reading():
        assert store.get("lessons", "a") == {"id": "a"}


# -- checkpoints live in Redis -----------------------------------------------------------------
def test_checkpoints_are_copies_inside_redis(redis_url: str) -> None:
    store = Store(redis_url)
    client = client_for(redis_url)
    lessons.add_lesson(store, "Keep diffs small", now=NOW, actor="t")
    doc = checkpoints.create(store, "before", now=NOW, actor="t")
    key = doc["id"]
    assert client.sismember("memwork:snaps", key)
    copy = client.hgetall(f"memwork:snap:{key}:t:lessons")
    assert len(copy) == 1
    lessons.add_lesson(store, "Another lesson entirely", now=NOW, actor="t")
    assert client.hgetall(f"memwork:snap:{key}:t:lessons") == copy  # not changed by later writes
    undo = checkpoints.restore(store, key, now=NOW, actor="t")
    with store.reading():
        assert len(store.docs("lessons")) == 1
    checkpoints.delete(store, key, now=NOW, actor="t")
    assert not client.keys(f"memwork:snap:{key}*")
    assert client.sismember("memwork:snaps", undo["id"])


def test_an_orphan_snapshot_is_reported_and_swept(run, redis_url: str) -> None:
    store = Store(redis_url)
    doc = checkpoints.create(store, "x", now=NOW, actor="t")
    # A delete killed between its commit and the removal of the snapshot:
    with store.transaction():
        store.delete("checkpoints", [doc["id"]])
    code, out, _ = run("--db", redis_url, "doctor")
    assert code == 0 and "snapshots no checkpoint names" in out
    checkpoints.create(store, "y", now=NOW, actor="t")
    assert not client_for(redis_url).keys(f"memwork:snap:{doc['id']}*")


# -- working memory and Redis expiry -------------------------------------------------------------
def test_working_memory_with_only_ttl_keys_is_reclaimed_by_redis(redis_url: str) -> None:
    from datetime import UTC, datetime, timedelta

    store = Store(redis_url)
    client = client_for(redis_url)
    now = datetime.now(UTC)
    wm_keys.set_key(store, "run-1", "lease", "x", ttl=30, now=now, actor="t")
    key = "memwork:t:working_memory.run-1"
    # The key's own expiry plus a grace period for clocks that drift.
    assert 85_000 < client.pttl(key) <= 90_000
    wm_keys.set_key(store, "run-1", "plan", "keep", now=now, actor="t")
    assert client.pttl(key) == -1  # a key without a TTL: kept until deleted
    wm_keys.delete_key(store, "run-1", "plan", now=now, actor="t")
    assert client.pttl(key) > 0
    later = now + timedelta(seconds=31)
    with store.reading():
        assert wm_keys.list_keys(store, "run-1", now=later) == []
    # Redis reclaims it (here at once, instead of a minute after the key expired):
    # every key in it had expired, so nothing anyone sees changes.
    client.pexpire(key, 1)
    time.sleep(0.05)
    assert not client.exists(key)
    other = Store(redis_url)
    with other.reading():
        assert wm_keys.list_keys(other, "run-1", now=later) == []
    wm_keys.set_key(other, "run-1", "next", "y", now=later, actor="t")
    with other.reading():
        assert [e["key"] for e in wm_keys.list_keys(other, "run-1", now=later)] == ["next"]


def test_under_memwork_now_the_clock_rule_alone_decides(
    redis_url: str, monkeypatch: pytest.MonkeyPatch, run
) -> None:
    monkeypatch.setenv("MEMWORK_NOW", T0)
    assert run("--db", redis_url, "wm", "--session", "s1", "set", "k", "v", "--ttl", "60")[0] == 0
    assert client_for(redis_url).pttl("memwork:t:working_memory.s1") == -1
    monkeypatch.setenv("MEMWORK_NOW", "2026-11-01T12:00:59Z")
    assert run("--db", redis_url, "wm", "--session", "s1", "get", "k")[1] == "v\n"
    monkeypatch.setenv("MEMWORK_NOW", "2026-11-01T12:01:00Z")
    assert run("--db", redis_url, "wm", "--session", "s1", "get", "k")[0] == 2


# -- live updates --------------------------------------------------------------------------------
def test_follow_hears_every_other_writer_s_commit(redis_url: str) -> None:
    watcher = Store(redis_url)
    heard = threading.Event()
    stop = watcher.follow(heard.set)
    assert stop is not None
    writer = Store(redis_url)
    # The subscription starts in the background: a commit made before it is ready is not
    # heard, so write until one is (a loaded machine may take a while to subscribe).
    for attempt in range(60):
        with writer.transaction():
            writer.put("lessons", "a", {"id": "a", "n": attempt})
        if heard.wait(1):
            break
    assert heard.is_set()
    stop()
    watcher.close()


def test_a_folder_store_does_not_push(tmp_path: Path) -> None:
    assert Store(tmp_path / "s").follow(lambda: None) is None


# -- doctor -------------------------------------------------------------------------------------
def test_doctor_reports_the_server_settings(run, redis_url: str, redis_server) -> None:  # noqa: ANN001
    assert run("--db", redis_url, "rule", "add", "x")[0] == 0
    code, out, _ = run("--db", redis_url, "doctor")
    # The test server runs without fsync: a warning, not a failure.
    assert code == 0 and "warning  durability: appendfsync no" in out
    client = client_for(redis_url)
    client.config_set("maxmemory-policy", "allkeys-lru")
    try:
        code, out, _ = run("--db", redis_url, "doctor")
        assert code == 1 and "PROBLEM  eviction: maxmemory-policy allkeys-lru" in out
    finally:
        client.config_set("maxmemory-policy", "noeviction")
    client.config_set("appendfsync", "always")
    try:
        code, out, _ = run("--db", redis_url, "doctor", "--json")
        report = json.loads(out)
        assert (
            report["ok"]
            and {
                "name": "durability",
                "status": "ok",
                "detail": "appendonly yes, appendfsync always",
            }
            in report["checks"]
        )
    finally:
        client.config_set("appendfsync", "no")


def test_doctor_warns_when_the_server_would_replay_half_a_commit(run, redis_url: str) -> None:  # noqa: ANN001
    assert run("--db", redis_url, "rule", "add", "x")[0] == 0
    code, out, _ = run("--db", redis_url, "doctor")
    assert code == 0 and "ok       crash recovery: aof-load-truncated no" in out
    client = client_for(redis_url)
    client.config_set("aof-load-truncated", "yes")  # Redis's default
    try:
        code, out, _ = run("--db", redis_url, "doctor")
    finally:
        client.config_set("aof-load-truncated", "no")
    assert code == 0  # a warning: nothing is wrong with the store yet
    assert "warning  crash recovery: aof-load-truncated yes" in out
    assert "redis-check-aof --fix" in out


def test_doctor_flags_foreign_and_unlisted_keys(run, redis_url: str) -> None:
    assert run("--db", redis_url, "rule", "add", "x")[0] == 0
    client = client_for(redis_url)
    client.set("intruder", "1")
    client.hset("memwork:t:ghost", "g", "{}")
    code, out, _ = run("--db", redis_url, "doctor")
    assert code == 1
    assert "PROBLEM  foreign keys: 1 keys that are not memwork's (intruder)" in out
    assert "PROBLEM  unlisted tables: 1 table keys" in out


@pytest.mark.parametrize("key", ["memwork:meta", "memwork:tables", "memwork:snaps"])
def test_doctor_names_a_key_of_memworks_that_holds_another_kind_of_value(
    run,  # noqa: ANN001
    redis_url: str,
    key: str,
) -> None:
    assert run("--db", redis_url, "rule", "add", "x")[0] == 0
    assert run("--db", redis_url, "checkpoint", "create")[0] == 0
    client = client_for(redis_url)
    client.delete(key)
    client.rpush(key, "a list where memwork keeps another kind of value")
    code, out, err = run("--db", redis_url, "doctor")
    assert "internal error" not in err
    assert code == 1, (out, err)
    assert f"PROBLEM  keys: {key} holds the wrong kind of value (WRONGTYPE" in out


def test_a_store_opens_after_the_server_forgot_its_scripts(redis_url: str) -> None:
    store = Store(redis_url)
    with store.transaction():
        store.put("lessons", "a", {"id": "a"})
    client_for(redis_url).script_flush()
    with store.transaction():
        store.put("lessons", "b", {"id": "b"})
    with store.reading():
        assert sorted(store.docs("lessons")) == ["a", "b"]


def test_missing_store_header_is_refused(redis_url: str) -> None:
    store = Store(redis_url)
    with store.transaction():
        store.put("lessons", "a", {"id": "a"})
    client_for(redis_url).delete("memwork:meta")
    with pytest.raises(StoreUnreadable, match="holds memwork keys but no store header"):
        Store(redis_url)


# -- the context path stays light ---------------------------------------------------------------
PROBE = (
    "import sys; from memwork.core.doors.cli.main import main; "
    "code = main(['--db', sys.argv[1], 'context']); "
    "print(code, sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'pydantic', "
    "'rich', 'orjson', 'redis', 'ssl', 'asyncio'}), sorted(m for m in sys.modules "
    "if m.startswith(('memwork.core.storage.redis', 'memwork.core.storage.resp'))))"
)


def test_context_on_a_folder_loads_no_redis_code(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "s")],
        capture_output=True,
        text=True,
        env=python_env(),
    )
    assert done.stdout.strip() == "0 [] []", done.stderr


def test_context_on_redis_loads_no_heavy_module(redis_url: str) -> None:
    store = Store(redis_url)
    lessons.add_lesson(store, "Keep diffs small", now=NOW, actor="t")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, redis_url], capture_output=True, text=True, env=python_env()
    )
    assert "Keep diffs small" in done.stdout
    code, heavy, _ = done.stdout.strip().splitlines()[-1].split(" ", 2)
    assert (code, heavy) == ("0", "[]"), done.stderr


def test_an_older_store_is_migrated_after_a_backup_in_redis(
    redis_url: str, monkeypatch: pytest.MonkeyPatch, run
) -> None:
    from memwork.core.storage import schema

    store = Store(redis_url)
    with store.transaction():
        store.put("lessons", "a", {"id": "a", "text": "old name"})

    def rename_text_to_content(store: Store) -> None:
        docs = store.docs("lessons")
        store.put_many("lessons", {k: {"id": k, "content": v["text"]} for k, v in docs.items()})

    current = schema.SCHEMA_VERSION
    monkeypatch.setattr(schema, "SCHEMA_VERSION", current + 1)
    monkeypatch.setitem(schema.MIGRATIONS, current, rename_text_to_content)
    migrated = Store(redis_url)
    with migrated.reading():
        assert migrated.get("lessons", "a") == {"id": "a", "content": "old name"}
    client = client_for(redis_url)
    assert client.hget("memwork:meta", "schema_version") == str(current + 1).encode()
    [backup] = client.keys(f"memwork:backup:v{current}-*:t:lessons")
    assert json.loads(client.hget(backup, "a")) == {"id": "a", "text": "old name"}
    code, out, _ = run("--db", redis_url, "doctor")
    assert code == 0 and "ok       backups: migration backups kept" in out


def test_a_checkpoint_keeps_working_memory_that_redis_would_reclaim(redis_url: str) -> None:
    from datetime import UTC, datetime

    store = Store(redis_url)
    client = client_for(redis_url)
    now = datetime.now(UTC)
    wm_keys.set_key(store, "run-2", "lease", "x", ttl=30, now=now, actor="t")
    assert client.pttl("memwork:t:working_memory.run-2") > 0
    doc = checkpoints.create(store, "with wm", now=now, actor="t")
    assert client.pttl(f"memwork:snap:{doc['id']}:t:working_memory.run-2") == -1


def test_a_reader_whose_lease_ran_out_under_a_writer_gets_no_torn_view(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_LOCK_LEASE", "0.5")
    store = Store(redis_url)
    with store.transaction():
        store.put("lessons", "a", {"id": "a", "v": 1})
        store.put("slots", "s", {"id": "s", "v": 1})
    other = Store(redis_url)

    def write() -> None:
        with other.transaction():  # waits for the reader's lease to run out
            other.put("lessons", "a", {"id": "a", "v": 2})
            other.put("slots", "s", {"id": "s", "v": 2})

    reader = Store(redis_url)
    with pytest.raises(StoreError, match="ran out while it read"):
        with reader.reading():
            assert reader.get("lessons", "a") == {"id": "a", "v": 1}
            writer = threading.Thread(target=write)
            writer.start()
            time.sleep(1.2)  # a reader stalled past its lease, no table read meanwhile
            writer.join()
            reader.get("slots", "s")  # the other table, already at the writer's state
    with reader.reading():  # the next read is whole again
        assert (reader.get("lessons", "a")["v"], reader.get("slots", "s")["v"]) == (2, 2)


def test_a_short_read_starts_no_thread(redis_url: str) -> None:
    store = Store(redis_url)
    with store.transaction():
        store.put("lessons", "a", {"id": "a"})
    reader = Store(redis_url)
    with reader.reading():
        reader.get("lessons", "a")
    assert reader.backend.lease._thread is None


def test_working_memory_reclaimed_under_a_long_running_process_is_rewritten_whole(
    redis_url: str,
) -> None:
    from datetime import UTC, datetime

    store = Store(redis_url)  # the workbench, say: it keeps tables loaded
    now = datetime.now(UTC)
    wm_keys.set_key(store, "run-3", "lease", "x", ttl=30, now=now, actor="t")
    with store.reading():
        wm_keys.list_keys(store, "run-3", now=now)
    client = client_for(redis_url)
    client.delete("memwork:t:working_memory.run-3")  # Redis reclaimed it
    # A write in the same instant leaves the state document as it was loaded...
    wm_checkpoints.create_wm_checkpoint(store, "run-3", now=now, actor="t")
    other = Store(redis_url)
    with other.reading():  # ...and it is written again all the same, not lost
        keys = [e["key"] for e in wm_keys.list_keys(other, "run-3", now=now)]
        assert len(wm_checkpoints.list_wm_checkpoints(other, "run-3")) == 1
    assert keys == ["lease"]
