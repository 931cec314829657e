"""A store the user may only read can be read: every read verb works, every write is
refused with exit code 2 and one line, and nothing changes.

The suite usually runs as root, whom file modes do not stop; the commands then run in
a forked child that has switched to the ``nobody`` user (modules are imported before
the fork, since nobody cannot read this interpreter's library). Run as any other
user, the same tests run in-process.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memwork.core.doors.cli.main import main
from tests.conftest import folder_digest

T0 = "2026-01-01T00:00:00Z"
NOBODY = 65534
Runner = Callable[..., tuple[int, str, str]]

READS = [
    ("context",),
    ("context", "--format", "json"),
    ("lesson", "list"),
    ("lesson", "list", "--json"),
    ("rule", "list"),
    ("slot", "list"),
    ("session", "list"),
    ("checkpoint", "list"),
    ("stats",),
    ("export",),
    ("doctor",),
]
WRITES = [
    ("lesson", "add", "a new lesson"),
    ("slot", "set", "persona", "changed"),
    ("checkpoint", "create"),
    ("record-episode",),
]


def _in_process(argv: list[str]) -> tuple[int, str, str]:
    saved = sys.stdout, sys.stderr, sys.stdin
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    sys.stdout, sys.stderr = out, err
    sys.stdin = io.TextIOWrapper(io.BytesIO(b'{"task_id": "t", "score": 0.5}'), encoding="utf-8")
    try:
        code = main(argv)
        out.flush()
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved
    return code, out.buffer.getvalue().decode(), err.getvalue()


def _as_nobody(argv: list[str]) -> tuple[int, str, str]:
    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 99
        try:
            os.close(r_out)
            os.close(r_err)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            sys.stdout = io.TextIOWrapper(os.fdopen(w_out, "wb"), encoding="utf-8")
            sys.stderr = io.TextIOWrapper(os.fdopen(w_err, "wb"), encoding="utf-8")
            sys.stdin = io.TextIOWrapper(
                io.BytesIO(b'{"task_id": "t", "score": 0.5}'), encoding="utf-8"
            )
            code = main(argv)
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException as exc:  # noqa: BLE001 - report anything to the parent
            try:
                sys.stderr.write(f"child failed: {exc!r}\n")
                sys.stderr.flush()
            except BaseException:  # noqa: BLE001
                pass
        os._exit(code)
    os.close(w_out)
    os.close(w_err)
    with os.fdopen(r_out, "rb") as f:
        out = f.read().decode()
    with os.fdopen(r_err, "rb") as f:
        err = f.read().decode()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out, err


@pytest.fixture
def shared_root() -> Iterator[Path]:
    """A folder the nobody user can reach (pytest's tmp_path is private to root)."""
    base = Path(tempfile.mkdtemp(prefix="memwork-ro-"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        for path in [base, *base.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o700)
        shutil.rmtree(base, ignore_errors=True)


def _seed(db: Path) -> None:
    for argv in (
        ["lesson", "add", "Canary every deploy", "--scope", "global"],
        ["slot", "set", "persona", "I am terse."],
        ["session", "start", "--agent", "coder"],
        ["checkpoint", "create", "-m", "seeded"],
    ):
        os.environ["MEMWORK_NOW"] = T0
        code, _, err = _in_process(["--db", str(db), *argv])
        assert code == 0, err
    # Warm every import the verbs need: the nobody child cannot read the stdlib, nor
    # memwork's own modules where the checkout is private (a clone under `mktemp -d`).
    # On a copy of the seeded store, so each verb gets as far as printing (on an empty
    # one `checkpoint list` stopped before importing its printer).
    scratch = db.parent / "warm"
    shutil.copytree(db, scratch)
    for argv in READS + WRITES:
        _in_process(["--db", str(scratch), *argv])
    _in_process(["--db", str(scratch), "export", str(db.parent / "warm.json")])
    shutil.rmtree(scratch)
    # The secret scanner reads a rule's line from its data file when text first holds
    # the rule's keyword, which the store's random ids sometimes do: read them all now.
    from memwork.core.privacy.gitleaks import rule_set

    rules = rule_set()
    for rule_id in rules.ids:
        rules.rule(rule_id)


def _make_read_only(db: Path, *, keep_lock: bool = True) -> Runner:
    """Only reading is allowed on ``db`` now; returns how to run memwork as its reader."""
    if not keep_lock:
        (db / ".lock").unlink()
    if os.geteuid() == 0:
        owner = NOBODY
        runner = _as_nobody
    else:
        owner = os.geteuid()
        runner = _in_process
    for path in [db, *db.rglob("*")]:
        if os.geteuid() == 0:
            os.chown(path, owner, owner)
        path.chmod(0o500 if path.is_dir() else 0o400)

    def run(*argv: str) -> tuple[int, str, str]:
        return runner(["--db", str(db), *argv])

    return run


@pytest.mark.parametrize("keep_lock", [True, False], ids=["lock-file", "no-lock-file"])
def test_read_verbs_work_on_a_store_that_can_only_be_read(
    shared_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    keep_lock: bool,
) -> None:
    monkeypatch.setenv("MEMWORK_NOW", T0)
    db = shared_root / "store"
    _seed(db)
    run = _make_read_only(db, keep_lock=keep_lock)
    before = folder_digest(db)
    for argv in READS:
        code, out, err = run(*argv)
        assert code == 0, (argv, err)
        assert "Traceback" not in err and "Permission" not in err, err
    assert "Canary every deploy" in run("context")[1]
    assert "I am terse." in run("context")[1]
    assert "Canary every deploy" in run("lesson", "list")[1]
    assert folder_digest(db) == before


def test_writes_on_a_read_only_store_are_exit_2_and_change_nothing(
    shared_root: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMWORK_NOW", T0)
    db = shared_root / "store"
    _seed(db)
    run = _make_read_only(db)
    before = folder_digest(db)
    for argv in WRITES:
        code, out, err = run(*argv)
        assert (code, out) == (2, ""), (argv, err)
        assert "read-only" in err and err.count("\n") == 1, err
        assert "nothing was written" in err
    assert folder_digest(db) == before
    assert not [p for p in db.iterdir() if ".tmp-" in p.name]


def test_export_of_a_read_only_store_to_a_file(
    shared_root: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMWORK_NOW", T0)
    db = shared_root / "store"
    _seed(db)
    out_dir = shared_root / "out"
    out_dir.mkdir()
    out_dir.chmod(0o777)
    run = _make_read_only(db)
    code, _, err = run("export", str(out_dir / "export.json"))
    assert code == 0, err
    assert "Canary every deploy" in (out_dir / "export.json").read_text()
