"""Bad input gets exit 2 and one line, the store unchanged; stored text never drives a terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import folded, folder_digest, resealed

BIG = str(2**70)


def _nested(depth: int) -> dict:
    doc: dict = {"score": 0.5}
    inner = doc
    for _ in range(depth):
        inner["m"] = {}
        inner = inner["m"]
    return doc


def _dumps_deep(doc: dict) -> str:
    # The standard encoder recurses; build the text by hand for 1,000 levels.
    if "m" not in doc:
        return json.dumps(doc)
    depth = 0
    inner = doc
    while "m" in inner:
        depth += 1
        inner = inner["m"]
    return '{"score": 0.5, "m": ' + '{"m": ' * (depth - 1) + "{}" + "}" * depth


def _refused(cli, db: Path, *args: str, stdin: str | None = None, field: str = "") -> str:  # noqa: ANN001
    cli("slot", "set", "seed", "x")  # the store exists before the refused command
    before = folder_digest(db)
    done = cli(*args, stdin=stdin)
    assert done.code == 2, (args, done.err)
    assert len(done.err.strip().splitlines()) == 1 and "internal error" not in done.err
    assert field in done.err
    assert folder_digest(db) == before
    return done.err


@pytest.mark.parametrize(
    ("episode", "field"),
    [
        ({"score": 0.5, "steps": 1e29}, "steps"),
        ({"score": 0.5, "steps": int(BIG)}, "steps"),
        (_nested(300), "nests deeper than 64 levels"),
        (_nested(1000), "nests deeper than 64 levels"),
    ],
    ids=["steps-1e29", "steps-2**70", "metadata-300-deep", "metadata-1000-deep"],
)
def test_out_of_range_episodes_are_refused(cli, db: Path, episode: dict, field: str) -> None:  # noqa: ANN001
    _refused(cli, db, "record-episode", stdin=_dumps_deep(episode), field=field)


def test_out_of_range_numbers_on_the_command_line_are_refused(cli, db: Path) -> None:  # noqa: ANN001
    _refused(cli, db, "slot", "set", "a", "text", "--limit", BIG, field="limit")
    sid = cli("session", "start").out.strip()
    _refused(cli, db, "wm", "--session", sid, "task", "--step", BIG, field="current_step")
    _refused(cli, db, "wm", "--session", sid, "task", "--total", BIG, field="total_steps")


@pytest.mark.parametrize("limit", [1e308, "1e308", 2**70, float(2**60)])
def test_letta_limits_out_of_range_are_refused(cli, db: Path, tmp_path: Path, limit) -> None:  # noqa: ANN001
    path = tmp_path / "agent.af"
    block = {"label": "a", "value": "x", "limit": limit}
    path.write_text(json.dumps({"agents": [], "blocks": [block]}))
    _refused(cli, db, "import", str(path), "--format", "letta", field="limit")


@pytest.mark.parametrize("depth", [65, 300, 1000])
def test_deep_working_memory_values_are_refused(store, depth: int) -> None:  # noqa: ANN001
    from memwork.core.base.errors import InvalidInput
    from memwork.core.domain import sessions
    from memwork.core.domain.working_memory import keys as wm_keys
    from tests.conftest import NOW

    sid = sessions.start_session(store, now=NOW, actor="api")["id"]
    value: list = []
    for _ in range(depth):
        value = [value]
    with pytest.raises(InvalidInput, match="nests deeper than 64 levels"):
        wm_keys.set_key(store, sid, "k", value, now=NOW, actor="api")
    assert wm_keys.list_keys(store, sid, now=NOW) == []


# -- control characters -----------------------------------------------------------------------
ESCAPES = "a\x1b[2J\x1b]0;pwned\x07b\x07c\x1b[31m\x9b2Jd\r\x00e"


def test_control_characters_are_stripped_on_the_way_in(cli, db: Path) -> None:  # noqa: ANN001
    assert cli("lesson", "add", f"lesson {ESCAPES}\ttab\nline").code == 0
    stored = cli("lesson", "list", "--json").json()[0]["content"]
    assert stored == "lesson abcde\ttab\nline"
    episode = {"task_id": "t", "score": 0.2, "summary": ESCAPES, "mistakes": [ESCAPES]}
    assert cli("record-episode", stdin=json.dumps(episode)).code == 0
    context = cli("context", "--task", "t").out
    assert "\x1b" not in context and "\x07" not in context and "\x9b" not in context
    raw = "".join(p.read_text() for p in db.glob("*.json"))
    assert "\\u001b" not in raw and "\\u0007" not in raw


def test_stored_control_characters_are_never_printed(cli, db: Path) -> None:  # noqa: ANN001
    # Data written before the check existed (or by hand) still cannot drive the terminal.
    assert cli("lesson", "add", "placeholder lesson").code == 0
    path = folded(db) / "lessons.json"
    doc = json.loads(path.read_text())
    (lesson,) = doc["documents"].values()
    lesson["content"] = f"evil {ESCAPES}"
    lesson["scope"] = "global"
    path.write_text(json.dumps(doc))
    resealed(path)
    for args in (("lesson", "list"), ("lesson", "show", lesson["id"]), ("context",)):
        done = cli(*args)
        assert done.code == 0, done.err
        for control in ("\x1b", "\x07", "\x9b", "\x00", "\r"):
            assert control not in done.out, (args, done.out)
        assert "evil abcd" in done.out
    listed = cli("lesson", "list", "--json")
    assert "\\u001b" in listed.out  # JSON escapes them: safe to print, and nothing is lost


def test_argument_errors_are_escaped_and_quote_values_short(cli, db: Path) -> None:  # noqa: ANN001
    long = "q" * 6000
    cases = [
        (("lesson", "list", ESCAPES, long), "unrecognized arguments"),
        ((ESCAPES,), "invalid choice"),
        ((long,), "invalid choice"),
        (("context", "--budget", long), "invalid int value"),
        (("lesson", "add", "x", "--scope", long), "scope"),  # the operation's own rule
        (("lesson", "list", "--status", f"{ESCAPES}{long}"), "unrecognized arguments"),
    ]
    for args, words in cases:
        done = cli(*args)
        assert done.code == 2, (args, done.err)
        assert done.err.startswith("memwork: ") and done.err.count("\n") == 1, done.err
        assert words in done.err
        for control in ("\x1b", "\x07", "\x9b", "\x00", "\r"):
            assert control not in done.err, (args, done.err)
        assert len(done.err) < 700, (args, len(done.err))
        if long in "".join(args):
            assert "qq…" in done.err and "q" * 80 not in done.err
    assert not Path(db).exists()


# -- bounded reading --------------------------------------------------------------------------
@pytest.mark.parametrize("verb", [("record-episode",), ("import",)])
def test_dev_zero_is_refused_at_once(cli, db: Path, verb: tuple[str, ...]) -> None:  # noqa: ANN001
    import time

    started = time.monotonic()
    _refused(cli, db, *verb, "/dev/zero", field="JSON")
    assert time.monotonic() - started < 30  # a bound: reading /dev/zero never ends


@pytest.fixture
def small_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 64 KB record and a 1 MB document, so the caps are tested without huge files."""
    from memwork.core.base import jsonio

    monkeypatch.setattr(jsonio, "RECORD_MAX", 64 * 1024)
    monkeypatch.setattr(jsonio, "DOCUMENT_MAX", 1024 * 1024)


def test_a_record_over_the_cap_is_refused(cli, db: Path, tmp_path: Path, small_caps) -> None:  # noqa: ANN001
    path = tmp_path / "eps.jsonl"
    long = json.dumps({"score": 0.5, "summary": "x" * 70_000})
    path.write_text(json.dumps({"score": 0.5}) + "\n" + long + "\n")
    err = _refused(cli, db, "record-episode", str(path), field="line 2")
    assert "longer than" in err


def test_a_document_over_the_cap_is_refused(cli, db: Path, tmp_path: Path, small_caps) -> None:  # noqa: ANN001
    items = [{"score": 0.5, "summary": "y" * 1000} for _ in range(1500)]  # ~1.5 MB
    path = tmp_path / "eps.json"
    path.write_text(json.dumps(items, indent=1))
    err = _refused(cli, db, "record-episode", str(path), field="input")
    assert "larger than" in err and "JSON Lines" in err
    doc = {"format": "memwork-export", "schema_version": 1, "tables": {"lessons": items}}
    path.write_text(json.dumps(doc))
    _refused(cli, db, "import", str(path), field="larger than")


@pytest.mark.slow
def test_json_lines_of_any_length_stream_through(cli, tmp_path: Path, small_caps) -> None:  # noqa: ANN001
    # 3 MB of JSON Lines: three times the document cap, each line well under the record cap.
    path = tmp_path / "eps.jsonl"
    with path.open("w") as f:
        for n in range(3000):
            f.write(json.dumps({"task_id": "bulk", "score": 0.9, "summary": f"{n} " + "z" * 1000}))
            f.write("\n")
    done = cli("record-episode", str(path))
    assert done.code == 0, done.err
    assert len(done.out.split()) == 3000
    stats = cli("stats").json()
    assert stats["tasks"]["bulk"]["episodes"] == 3000


def test_one_bad_line_in_a_stream_writes_nothing(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "eps.jsonl"
    lines = [json.dumps({"score": 0.5}) for _ in range(50)] + ["{not json"]
    path.write_text("\n".join(lines) + "\n")
    err = _refused(cli, db, "record-episode", str(path), field="line 51")
    assert "not valid JSON" in err
    lines[-1] = json.dumps({"score": 7})
    path.write_text("\n".join(lines) + "\n")
    assert "item 51: score" in _refused(cli, db, "record-episode", str(path))


@pytest.mark.parametrize(
    "text",
    [
        '{"score": 0.5}',
        '[{"score": 0.5}, {"score": 0.6}]',
        '{\n  "score": 0.5,\n  "summary": "pretty"\n}\n',
        '\ufeff{"score": 0.5}\n{"score": 0.7}\n\n',
        '  \n[\n {"score": 0.5}\n]\n',
    ],
    ids=["object", "array", "pretty object", "bom and json lines", "pretty array"],
)
def test_every_input_shape_still_works(cli, text: str) -> None:  # noqa: ANN001
    done = cli("record-episode", stdin=text)
    assert done.code == 0, done.err
    assert done.out.strip()
