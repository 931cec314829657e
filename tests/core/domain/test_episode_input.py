"""Recording reads episodes without pydantic, and agrees with the model on every input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwork.core.base.errors import InvalidInput
from memwork.core.domain import episode_input
from memwork.core.models.base import validate
from memwork.core.models.episode import EpisodeInput
from tests.conftest import python_env

# Values an agent might send, well-formed or not.
TEXT = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["", "  ", " deploy ", "x" * 199, "x" * 201, "a\nb", "é✓"]),
)
ANY_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 10**7), st.floats(allow_nan=True), TEXT
)
NUMBER = st.one_of(
    st.floats(min_value=-0.5, max_value=1.5),
    st.sampled_from([0, 1, 0.0, 1.0, 0.85, 2, -1, 3.0, 7.5, 100_000, 100_001, True]),
    st.floats(allow_nan=True, allow_infinity=True),
)
TEXTS = st.one_of(st.none(), TEXT, st.lists(st.one_of(TEXT, ANY_SCALAR), max_size=3))
CARD = st.dictionaries(
    st.sampled_from(
        [
            "mistake_type",
            "task_id",
            "worker_id",
            "bad_decision",
            "correct_decision",
            "evidence",
            "lesson",
            "bogus",
        ]
    ),
    st.one_of(TEXT, st.none(), st.integers(0, 3)),
    max_size=4,
)
ERROR = st.dictionaries(
    st.sampled_from(["error_type", "message", "resolution", "extra"]),
    st.one_of(TEXT, st.none(), st.integers(0, 3)),
    max_size=3,
)
FIELDS: dict[str, Any] = {
    "task_id": st.one_of(TEXT, st.none(), st.integers(0, 3)),
    "score": NUMBER,
    "steps": NUMBER,
    "summary": st.one_of(TEXT, st.none(), st.integers(0, 3)),
    "trajectory_summary": st.one_of(TEXT, st.none()),
    "mistakes": TEXTS,
    "successes": TEXTS,
    "mistake_cards": st.one_of(st.none(), st.lists(st.one_of(CARD, TEXT), max_size=2)),
    "errors": st.one_of(st.none(), st.lists(st.one_of(ERROR, TEXT), max_size=2)),
    "outcome": st.one_of(st.none(), st.sampled_from(["success", "failure", "partial", "won"])),
    "session_id": st.one_of(TEXT, st.none(), st.integers(0, 3)),
    "worker_id": st.one_of(TEXT, st.none()),
    "recorded_at": st.one_of(TEXT, st.none()),
    "metadata": st.one_of(st.none(), st.dictionaries(TEXT, ANY_SCALAR, max_size=2), TEXT),
    "phase": ANY_SCALAR,
    "exit code": ANY_SCALAR,
    "_private": ANY_SCALAR,
}


@st.composite
def episodes(draw: st.DrawFn) -> Any:
    keys = draw(st.lists(st.sampled_from(sorted(FIELDS)), unique=True, max_size=8))
    item = {key: draw(FIELDS[key]) for key in keys}
    if draw(st.booleans()):
        item["score"] = draw(st.floats(min_value=0.0, max_value=1.0))
    return item


def by_model(item: Any) -> tuple[str, Any]:
    try:
        return "ok", validate(EpisodeInput, item, item=1).model_dump()
    except InvalidInput as exc:
        return "error", str(exc)


# 300 draws, not 1500: the plain reading's breakages tried (the summary alias always
# taken, any float step count accepted, and three that neither count catches) failed or
# passed alike at 300 and 1500 under the CI profile's derandomized draws.
@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(episodes())
def test_the_plain_reading_never_disagrees_with_the_model(item: Any) -> None:
    verdict = by_model(item)
    plain = episode_input.plain(item)
    if plain is not None:
        assert verdict == ("ok", plain)
    # And what recording uses, whichever way it goes, is the model's answer.
    try:
        got: tuple[str, Any] = ("ok", episode_input.parse(item, number=1))
    except InvalidInput as exc:
        got = ("error", str(exc))
    assert got == verdict


def test_ordinary_episodes_are_read_without_the_model() -> None:
    ordinary = [
        {"task_id": "deploy", "score": 0.4, "steps": 12, "summary": "Rolled back"},
        {
            "task_id": " deploy ",
            "score": 1,
            "steps": 3.0,
            "trajectory_summary": "alias",
            "mistakes": "one mistake",
            "successes": ["a", " "],
            "mistake_cards": [{"mistake_type": None, "lesson": "Canary first", "evidence": None}],
            "errors": [{"error_type": "Timeout", "message": "after 30 s"}],
            "outcome": "partial",
            "session_id": "ses_1",
            "recorded_at": "2026-11-01T12:00:00Z",
            "phase": "deploy",
            "metadata": {"exit": 3},
        },
        {"score": 0.9},
    ]
    for item in ordinary:
        assert episode_input.plain(item) == by_model(item)[1]


def test_recording_an_episode_imports_no_pydantic(tmp_path: Path) -> None:
    episode = {"task_id": "t", "score": 0.2, "mistakes": ["m"], "mistake_cards": [{"lesson": "l"}]}
    args = ["--db", str(tmp_path / "s"), "record-episode", str(tmp_path / "e")]
    probe = (
        "import sys; from memwork.core.doors.cli.main import main; "
        f"code = main({args!r}); "
        "print(code, sorted({m.split('.')[0] for m in sys.modules} & "
        "{'pydantic', 'textual', 'rich', 'rapidfuzz', 'subprocess'}))"
    )
    (tmp_path / "e").write_text(json.dumps([episode, {**episode, "score": 0.95}]))
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=python_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("0 []")


def test_recorded_documents_still_satisfy_the_episode_model(cli, db: Path) -> None:  # noqa: ANN001
    """The model no longer checks every stored episode on the hot path: prove it would pass."""
    from memwork.core.domain import episodes
    from memwork.core.models.episode import Episode
    from memwork.core.storage.store import Store

    items = [
        {"task_id": "t", "score": 0.2, "mistakes": ["m"], "mistake_cards": [{"lesson": "l"}]},
        {"task_id": "t", "score": 0.3, "summary": "no error given: one is synthesised"},
        {"task_id": "t", "score": 0.95, "successes": ["s"], "errors": [{"error_type": "E"}]},
        {"task_id": "u", "score": 0.5, "phase": "build", "metadata": {"exit": 2}},
    ]
    assert cli("record-episode", stdin=json.dumps(items)).code == 0
    store = Store(db)
    with store.reading():
        docs = list(episodes.iter_all(store))
    assert len(docs) == 4
    for doc in docs:
        validate(Episode, doc)
    assert docs[1]["errors"] and docs[1]["outcome"] == "failure"
    assert docs[3]["metadata"] == {"phase": "build", "exit": 2}
