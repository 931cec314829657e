"""Whatever an agent or a script sends, an operation answers or refuses it in one line.

A corpus of hostile values (wrong types, NaN and infinity, integers past 64 bits, text
no UTF-8 file can hold, escape sequences, huge strings, nesting thousands deep, empty
and missing values, unknown parameters) is given to every parameter of every operation,
through the Python API and the CLI, on a store the door-parity scenario filled. Each
call either works or raises one of memwork's own errors (the CLI: exit 2 with one
line); none ends in an internal error, and the store reads and passes ``doctor``
afterwards. The HTTP and MCP doors parse JSON before the operations see it: their own
probes are in their door tests and below.
"""

from __future__ import annotations

import io
import json
import math
import warnings
from pathlib import Path
from typing import Any

import pytest

from memwork import Memory
from memwork.core.base.errors import InvalidInput, MemworkError
from memwork.core.ops.operations import OPERATIONS, by_name
from tests.cli_in_process import run as cli
from tests.core.ops import test_door_parity as parity
from tests.http_server import Served, client


def _deep(levels: int, kind: str) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value] if kind == "list" else {"k": value}
    return value


#: Values no parameter is meant to take, and a few it is.
HOSTILE: list[Any] = [
    None, True, False, 0, -1, 2**63, 10**30, -(10**30), 1e308, 0.5, -0.0,
    math.nan, math.inf, -math.inf,
    "", " ", "\x00", "\x1b[31mred\x1b[0m\x1b[2J", "a" * 200_000, "\ud800", "x\udcffy",
    "../../etc/passwd", "café", "北京", "\u202e", "%s%n{0}", "null", "NaN", "1e999", "-1",
    "2026-13-45", "9999-12-31T23:59:59Z", "*", "[", "\\", "les_" + "0" * 26, "--json",
    # What the words of recall read apart: signs, compounds, marks, commas, identifiers
    # (an acronym that begins one too), shorthand.
    "F++ c# .NET co-worker e\u0301-x 1,000 won't getV2Api IOError OOMKilled CEOs db k8s",
    "999999999d", "9" * 30 + "h",  # spans back past the calendar's first day
    "\u00b2", "1" * 400, 10**400,  # "²".isdigit() is true, and int() refuses it; past a float
    [], [None], [[[]]], [1, "a", None], ["x"] * 10_000, [math.nan], ["\ud800"],
    {}, {"a": None}, {"": ""}, {"\ud800": 1}, {"a": math.inf}, [{"a": 1}],
    _deep(3000, "list"), _deep(3000, "dict"),
]  # fmt: skip

#: Arguments a command line may hold: any text, bytes that are not UTF-8 included
#: (Python reads each such byte as a lone surrogate).
HOSTILE_ARGV = [
    "\udcff", "x\udcffy", "\x1b[2J\x1b[31m", "a" * 6000, "-", "--", "-x", "nan", "inf",
    "1e999", "-1", "0", "99999999999999999999999", "", " ", "{", "null", "\u202e", "--json",
    "\u00b2", "\u0663", "1" * 400, "999999999d", "9999-12-31T23:59:59Z",
]  # fmt: skip


@pytest.fixture
def filled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, Any]]:
    """A store the door-parity scenario filled through the Python API, and its answers
    (ids to give the operations), with the scenario's clock for what runs next. Per
    test: the curator key it makes lives in the test's own config folder."""
    monkeypatch.setenv("MEMWORK_NOW", parity.NOW)
    db = tmp_path / "db"
    memory = parity._memory(db)
    answers: dict[str, Any] = {}
    call = parity.api_door(memory)
    for label, name, params in parity.SCENARIO:
        answers[label] = call(by_name(name), _given(params, answers))
    memory.close()
    return db, answers


def _given(params: dict[str, Any], answers: dict[str, Any]) -> dict[str, Any]:
    return {k: parity._resolve(v, answers) for k, v in params.items()}


def _short(value: Any) -> str:
    try:
        shown = repr(value)
    except RecursionError:
        shown = "<nested>"
    return shown if len(shown) <= 60 else shown[:57] + "..."


@pytest.mark.slow
def test_no_value_ends_an_operation_in_an_internal_error(
    filled: tuple[Path, dict[str, Any]],
) -> None:
    db, answers = filled
    memory = parity._memory(db)
    person = parity._memory(db, curator_key=parity.curator_args()[1])
    found: dict[tuple[str, str, str], str] = {}
    tried = set()
    for _label, name, params in parity.SCENARIO:
        op = by_name(name)
        if "api" not in op.doors:
            continue
        tried.add(name)
        who = person if name in parity.DECISIONS else memory
        given = _given(params, answers)
        calls = [("<unknown>", {**given, "zzz": 1})]
        for p in op.params:
            if "api" in p.doors:
                calls.append((p.name, {k: v for k, v in given.items() if k != p.name}))
                calls += [(p.name, {**given, p.name: value}) for value in HOSTILE]
        for param, args in calls:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    who._operation(name, args)
                except MemworkError:
                    pass
                except Exception as exc:  # noqa: BLE001 - what this test looks for
                    key = (name, param, type(exc).__name__)
                    found.setdefault(key, f"{_short(args.get(param))}: {exc!s:.200}")
    assert tried == {op.name for op in OPERATIONS if "api" in op.doors}
    assert not found, "\n".join(f"{k}: {v}" for k, v in sorted(found.items()))
    # What was accepted left a store that reads and that doctor finds healthy.
    memory.close()
    person.close()
    for args in (("context", "--task", "deploy-api"), ("export",), ("session", "list")):
        done = cli(db, *args)
        assert done.returncode == 0, (args, done.stderr)
    doctor = cli(db, "doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr


@pytest.mark.slow
def test_no_argument_ends_a_command_in_an_internal_error(
    filled: tuple[Path, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, answers = filled
    monkeypatch.chdir(db.parent)  # whatever a command writes lands here
    # ``-`` reads a record from stdin: an empty one here, as from `< /dev/null`.
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
    found: dict[tuple[str, int], str] = {}
    seen: set[str] = set()
    for _label, name, params in parity.SCENARIO:
        op = by_name(name)
        if "cli" not in op.doors or name in seen or any(p.cli == "FILE" for p in op.params):
            continue  # (a file's name may be any text: import and export read and write it)
        seen.add(name)
        argv = parity.cli_argv(op, _given(params, answers))
        key = list(parity.curator_args()) if name in parity.DECISIONS else []
        verb = len(op.cli.split())  # the verb's words stay: without one, the workbench opens
        for at in range(verb, len(argv) + 1):
            for value in HOSTILE_ARGV:
                args = [*argv[:at], value, *argv[at + 1 :]]
                done = cli(db, *key, *args)
                if "internal error" in done.stderr or done.returncode not in (0, 2):
                    said = f"{args!r:.200} -> {done.returncode}: {done.stderr}"
                    found.setdefault((name, at), said)
    assert not found, "\n".join(f"{k}: {v}" for k, v in sorted(found.items()))


def test_text_no_store_can_hold_is_refused_naming_the_field(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "db", agent="tester")
    session = memory.start_session(title="run")["id"]
    before = {**memory.export(), "exported_at": None}
    with pytest.raises(InvalidInput) as lone:
        memory.observe(session, "checked \ud800 the canary")
    assert lone.value.field == "text"
    assert "unpaired surrogate (U+D800) at character 9" in str(lone.value)
    with pytest.raises(InvalidInput) as nested:
        memory.record_episode({"task_id": "deploy", "score": 0.5, "mistakes": ["a\udcffb"]})
    assert nested.value.field == "episode.mistakes.0"
    assert "a byte that is not UTF-8 (0xFF) at character 2" in str(nested.value)
    with pytest.raises(InvalidInput) as key:
        memory.wm_set(session, "k", {"\ud83d": 1})
    assert key.value.field == "value"
    assert memory.get_session(session)["observation_count"] == 0
    # Nothing of the refused calls was written.
    assert {**memory.export(), "exported_at": None} == before


def test_numbers_json_cannot_say_are_refused_not_written_as_null(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "db", agent="tester")
    session = memory.start_session(title="run")["id"]
    for value in (math.nan, math.inf, [1.0, -math.inf], {"ratio": math.nan}):
        with pytest.raises(InvalidInput, match="must be a finite number") as refused:
            memory.wm_set(session, "k", value)
        assert refused.value.field.startswith("value")
    with pytest.raises(InvalidInput, match="decay_rate: must be a finite number"):
        memory.add_lesson("Canary first", decay_rate=math.nan)
    assert memory.wm_get(session, "k", default="none")["found"] is False
    memory.wm_set(session, "k", 0.25)  # a finite number is kept as it is
    assert memory.wm_get(session, "k")["value"] == 0.25


def test_an_integer_past_64_bits_is_refused_naming_the_parameter(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "db", agent="tester")
    with pytest.raises(InvalidInput, match="limit: must be a whole number within") as big:
        memory.search("canary", limit=10**30)
    assert "31 digits" in str(big.value)
    with pytest.raises(InvalidInput, match="limit: must be a whole number within"):
        memory.set_profile("project:api", "The API service", limit=2**64)


def test_a_command_line_argument_that_is_not_utf8_is_refused_before_the_store_opens(
    tmp_path: Path,
) -> None:
    db = tmp_path / "db"
    for args, field in (
        (("lesson", "add", "x\udcffy"), "text"),
        (("context", "--task", "\udcff"), "task"),
        (("search", "a\udcff"), "query"),
        (("observe", "--session", "s\udcff", "checked"), "session"),
    ):
        done = cli(db, *args)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"memwork: {field}: must be Unicode text: it holds a byte")
        assert "internal error" not in done.stderr
    assert not db.exists()  # refused before anything was made


#: Every setting a run reads from the environment (a test checks the list is whole).
SETTINGS = """MEMWORK_AGENT MEMWORK_CONSOLIDATE_CMD MEMWORK_CONSOLIDATE_EVERY
MEMWORK_CONSOLIDATE_TIMEOUT MEMWORK_CURATOR_KEY_FILE MEMWORK_EMBEDDER MEMWORK_FAILURE_MEMORY
MEMWORK_FSYNC MEMWORK_LEASE_LOST MEMWORK_LLM_API_KEY MEMWORK_LLM_MODEL MEMWORK_LLM_RETRIES
MEMWORK_LLM_TIMEOUT MEMWORK_LLM_URL MEMWORK_LOCK_LEASE MEMWORK_LOCK_TIMEOUT MEMWORK_LOCKED_READS
MEMWORK_LOG_BYTES MEMWORK_LOG_RECORDS MEMWORK_LOG_SECONDS MEMWORK_MAX_OBS_PER_SESSION
MEMWORK_MCP_TOOLS MEMWORK_NOW MEMWORK_SAVE_APART MEMWORK_SEARCH_BUILD_APART MEMWORK_SEARCH_CACHE
MEMWORK_SPOOL_BYTES MEMWORK_STAGE_DOCUMENTS MEMWORK_TOKEN_BUDGET MEMWORK_VERIFY_WRITES
MEMWORK_WARM_RECALL""".split()
#: What a shell may leave in one: bytes that are not UTF-8 included.
HOSTILE_SETTINGS = [
    "", " ", "abc", "-1", "0", "1e999", "nan", "inf", "99999999999999999999999", "1.5",
    "true", "\udcff", "x" * 5000, "../../etc", "/dev/null", "2026-13-45T99:00:00Z", "0x10",
    "\u00b2", "9999-12-31T23:59:59Z",
]  # fmt: skip


def test_the_corpus_names_every_setting_read_from_the_environment() -> None:
    import re

    root = Path(__file__).resolve().parents[3] / "core"
    read = set()
    for source in root.rglob("*.py"):
        read |= set(re.findall(r'"(MEMWORK_[A-Z0-9_]+)"', source.read_text()))
    # Where the store is, whether to print tracebacks, and the HTTP door's own (its
    # start-up refuses a bad one, tested there); the Redis password is a secret's place.
    elsewhere = {
        "MEMWORK_DB", "MEMWORK_DEBUG", "MEMWORK_HTTP_HEADER_TIMEOUT", "MEMWORK_HTTP_MAX_BODY",
        "MEMWORK_TOKEN", "MEMWORK_REDIS_PASSWORD",
    }  # fmt: skip
    assert read - elsewhere == set(SETTINGS)


@pytest.mark.slow
def test_no_setting_in_the_environment_ends_a_command_in_an_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
    commands = [
        ("observe", "--session", "s1", "hello"),
        ("context",),
        ("search", "hello"),
        ("lesson", "add", "use canaries"),
        ("record-episode", "-"),
        ("doctor",),
        ("stats",),
    ]
    found = []
    for name in SETTINGS:
        for value in HOSTILE_SETTINGS:
            db = tmp_path / f"db-{name}-{HOSTILE_SETTINGS.index(value)}"
            cli(db, "session", "start", "--id", "s1", MEMWORK_FSYNC="0")
            for command in commands:
                done = cli(db, *command, **{"MEMWORK_FSYNC": "0", name: value})
                if "internal error" in done.stderr or done.returncode not in (0, 2):
                    found.append(f"{name}={value!r:.30} {command[0]}: {done.stderr.strip()}")
    assert not found, "\n".join(found)


def test_an_agent_id_from_the_environment_that_is_not_utf8_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "db"
    done = cli(db, "lesson", "add", "checked", MEMWORK_AGENT="agent\udcff")
    assert done.returncode == 2
    assert done.stderr == (
        "memwork: MEMWORK_AGENT: must be Unicode text: it holds a byte that is not UTF-8"
        " (0xFF) at character 6\n"
    )
    monkeypatch.setenv("MEMWORK_AGENT", "agent\udcff")
    with pytest.raises(InvalidInput, match="agent: must be Unicode text"):
        Memory(tmp_path / "api")  # refused as it opens, before any write
    assert not (tmp_path / "api").exists()


def test_a_store_path_that_is_not_utf8_is_shown_and_one_with_a_nul_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    db = "store-\udcff"  # the byte 0xFF, as Python reads it from a command line
    assert cli(db, "lesson", "add", "checked").returncode == 0
    assert (tmp_path / "store-\udcff").is_dir()  # the folder has the name the user gave
    said = cli(db, "doctor")  # stdout strict UTF-8, as under most locales
    assert said.returncode == 0, said.stderr
    assert "ok       store: store-\ufffd" in said.stdout
    report = cli(db, "--json", "doctor")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["store"] == "store-\ufffd"
    nul = cli("a\x00b", "context")
    assert (nul.returncode, nul.stderr) == (2, "memwork: --db: must not hold a NUL character\n")


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="Linux's /proc")
def test_a_file_that_fails_as_it_is_read_is_refused_naming_it(tmp_path: Path) -> None:
    # /proc/self/mem opens, then its first read fails (an I/O error, as a bad disk's).
    db = tmp_path / "db"
    for command in (("import", "/proc/self/mem"), ("record-episode", "/proc/self/mem")):
        done = cli(db, *command)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("memwork: FILE: cannot read "), done.stderr
        assert done.stderr.rstrip().endswith("Input/output error")
    assert not db.exists()


@pytest.mark.slow
def test_the_http_door_answers_hostile_bodies_with_a_4xx(tmp_path: Path) -> None:
    server = Served(tmp_path / "db", parity.python_env(MEMWORK_FSYNC="0"))
    try:
        bodies = [
            b'{"session":"s1","text":"a\\ud800b"}',
            b'{"session":"s1","text":"x","tags":[NaN]}',
            b'{"session":"s1","key":"k","value":1e999}',
            b'{"query":"x","limit":100000000000000000000000000}',
            b'{"session":"s1","key":"k","value":' + b"[" * 5000 + b"]" * 5000 + b"}",
            b"[1,2]",
            b'{"session":"s1","text":"\xff\xfe"}',
            b'{"a":',
        ]
        for route in ("observe", "wm_set", "search", "record_episode", "context"):
            for body in bodies:
                answer = client().post(
                    f"{server.url}/v1/{route}",
                    content=body,
                    headers={"Content-Type": "application/json"},
                )
                assert 400 <= answer.status_code < 500, (route, body[:60], answer.text)
                assert json.loads(answer.text)["error"]
    finally:
        code, rest = server.stop()
    assert code == 0, rest
    assert "Traceback" not in rest


def test_nesting_is_refused_before_what_lies_inside_it(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "db", agent="tester")
    session = memory.start_session(title="run")["id"]
    for value in ([math.nan, _deep(100, "list")], {"a": "\ud800", "b": _deep(100, "dict")}):
        with pytest.raises(InvalidInput, match="nests deeper than 64 levels"):
            memory.wm_set(session, "k", value)
    with pytest.raises(InvalidInput, match=r"value\.1\.0: must be a finite number"):
        memory.wm_set(session, "k", ["ok", [math.inf]])
