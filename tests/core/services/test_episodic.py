"""``--style episodic``: the exact layout, and agreement with an independent model.

Described in docs/MEMORY.md, The context.

``bench/episodic_reference.py`` models the episodic training-memory library as
plain list manipulation on its ``agent_memory.json`` dict; memwork must render
the same string for the same history, whether it recorded that history itself
or imported the library's file and went on from there.
"""

from __future__ import annotations

import copy
import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memwork.core.domain import episodes, rules
from memwork.core.services.context.build import build_context
from memwork.core.services.interop import importer
from memwork.core.storage.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
import episodic_reference as ref  # noqa: E402

ACTOR = "test"


def _record(store: Store, now: datetime, *items: dict) -> None:
    episodes.record_episodes(store, list(items), now=now, actor=ACTOR)


def _render(store: Store, now: datetime, task: str | None = None, **knobs: int) -> str:
    return build_context(store, now=now, task_id=task, style="episodic", **knobs).text


# -- hand-worked examples ----------------------------------------------------------------
EXAMPLE = [
    {
        "task_id": "fix",
        "score": 0.9,
        "steps": 4,
        "summary": "patched the parser",
        "successes": ["wrote a test first"],
    },
    {
        "task_id": "fix",
        "score": 0.3,
        "steps": 9,
        "summary": "broke the build",
        "mistakes": ["skipped CI", "edited generated code"],
        "mistake_cards": [{"mistake_type": "ci", "lesson": "Run CI locally.", "evidence": "red"}],
    },
    {
        "task_id": "docs",
        "score": 0.6,
        "steps": 2,
        "trajectory_summary": "typo fixes",
        "mistakes": ["skipped CI", "no preview"],
        "mistake_cards": [
            {"mistake_type": "ci", "task_id": "fix", "evidence": "red again"},
            {"mistake_type": "preview"},
        ],
    },
]


def test_layout_without_a_task(store: Store, now: datetime) -> None:
    _record(store, now, *EXAMPLE)
    rules.add_rule(store, "Be concise", now=now, actor=ACTOR)
    assert _render(store, now) == (
        "## MEMORY FROM PAST EPISODES\n"
        "\n"
        "General rules (all tasks):\n"
        "  - Be concise\n"
        "\n"
        "Mistakes to avoid:\n"
        "  - AVOID: skipped CI\n"
        "  - AVOID: edited generated code\n"
        "  - AVOID: no preview\n"
        "\n"
        "Structured mistake cards:\n"
        "  - [ci, seen 2x] Run CI locally. Evidence: red again\n"
        "  - [preview, seen 1x] Avoid repeating this failure. Evidence: "
    )


def test_layout_with_a_task(store: Store, now: datetime) -> None:
    _record(store, now, *EXAMPLE)
    rules.add_rule(store, "Be concise", now=now, actor=ACTOR)
    assert _render(store, now, "fix") == (
        "## MEMORY FROM PAST EPISODES\n"
        "\n"
        "Rules for fix:\n"
        "  - [WORKS] wrote a test first\n"
        "  - [AVOID] skipped CI\n"
        "  - [AVOID] edited generated code\n"
        "\n"
        "General rules (all tasks):\n"
        "  - Be concise\n"
        "\n"
        "Mistakes to avoid:\n"
        "  - AVOID: skipped CI\n"
        "  - AVOID: edited generated code\n"
        "  - AVOID: no preview\n"
        "\n"
        "Structured mistake cards:\n"
        "  - [ci, seen 2x] Run CI locally. Evidence: red again\n"
        "  - [preview, seen 1x] Avoid repeating this failure. Evidence: \n"
        "\n"
        "Recent fix episodes:\n"
        "  - Score 0.90 in 4 steps: patched the parser\n"
        "  - Score 0.30 in 9 steps: broke the build\n"
        "\n"
        "Your mean score on fix: 0.60 (over 2 episodes)"
    )
    assert _render(store, now, "docs").endswith(
        "Recent docs episodes:\n"
        "  - Score 0.60 in 2 steps: typo fixes\n"
        "\n"
        "Your mean score on docs: 0.60 (over 1 episodes)"
    )
    assert "Rules for docs" not in _render(store, now, "docs")


def test_layout_limits(store: Store, now: datetime) -> None:
    summary = "x" * 130
    items = [
        {
            "task_id": "t",
            "score": 0.1,
            "steps": n,
            "summary": f"{n} {summary}",
            "mistakes": [f"m{n}"],
        }
        for n in range(7)
    ]
    items.append(
        {
            "task_id": "t",
            "score": 0.2,
            "mistake_cards": [{"mistake_type": f"c{k}", "evidence": f"e{k}"} for k in range(4)]
            + [{"mistake_type": "c0"}],
        }
    )
    _record(store, now, *items)
    for n in range(7):
        rules.add_rule(store, f"global {n}", now=now, actor=ACTOR)
    assert _render(store, now, "t") == (
        "## MEMORY FROM PAST EPISODES\n"
        "\n"
        "Rules for t:\n" + "".join(f"  - [AVOID] m{n}\n" for n in range(2, 7)) + "\n"
        "General rules (all tasks):\n" + "".join(f"  - global {n}\n" for n in range(2, 7)) + "\n"
        "Mistakes to avoid:\n" + "".join(f"  - AVOID: m{n}\n" for n in range(4, 7)) + "\n"
        "Structured mistake cards:\n"
        "  - [c0, seen 2x] Avoid repeating this failure. Evidence: e0\n"
        "  - [c1, seen 1x] Avoid repeating this failure. Evidence: e1\n"
        "  - [c2, seen 1x] Avoid repeating this failure. Evidence: e2\n"
        "\n"
        "Recent t episodes:\n"
        f"  - Score 0.10 in 5 steps: {('5 ' + summary)[:100]}\n"
        f"  - Score 0.10 in 6 steps: {('6 ' + summary)[:100]}\n"
        "  - Score 0.20 in 0 steps: \n"
        "\n"
        "Your mean score on t: 0.11 (over 8 episodes)"
    )


def test_recent_episodes_come_from_the_last_hundred_only(store: Store, now: datetime) -> None:
    _record(store, now, {"task_id": "old", "score": 0.5}, {"task_id": "old", "score": 0.6})
    _record(store, now, *[{"task_id": "new", "score": 0.7, "steps": 1} for _ in range(100)])
    assert _render(store, now, "old") == (
        "## MEMORY FROM PAST EPISODES\n\nYour mean score on old: 0.55 (over 2 episodes)"
    )


def test_empty_when_only_the_header_would_remain(store: Store, now: datetime) -> None:
    assert _render(store, now) == "" and _render(store, now, "t") == ""
    _record(store, now, {"task_id": "other", "score": 0.6})
    assert _render(store, now) == ""
    assert _render(store, now, "t") == ""


def test_cli_style_episodic(cli) -> None:  # noqa: ANN001
    cli("record-episode", stdin=json.dumps(EXAMPLE))
    done = cli("context", "--style", "episodic", "--task", "docs")
    assert done.code == 0
    memory = ref.empty()
    for item in EXAMPLE:
        ref.record(memory, item)
    assert done.out == ref.render(memory, "docs") + "\n"
    record = cli("context", "--style", "episodic", "--format", "json").json()
    assert record["style"] == "episodic" and record["text"] == ref.render(memory)
    assert [s["name"] for s in record["sections"]] == ["mistakes", "mistake_cards"]


# -- differential: a fresh store ---------------------------------------------------------
TASKS = ["alpha", "beta", "gamma", "delta"]
WORDS = ["check", "retry", "cache", "lock", "parse", "deploy", "test", "log"]


def _random_episode(rng: random.Random) -> dict:
    score = rng.choice([0.0, 0.3, 0.49, 0.4999, 0.5, 0.7, 0.849, 0.85, 0.9, 0.913, 1.0])
    if rng.random() < 0.3:
        score = round(rng.random(), rng.choice([2, 3, 6]))
    summary_len = rng.choice([0, 1, 3, 30])
    summary = " ".join(rng.choice(WORDS) for _ in range(summary_len))
    episode = {
        "task_id": rng.choice(TASKS),
        "score": score,
        "steps": rng.randint(0, 30),
        "mistakes": [f"{rng.choice(WORDS)} {rng.choice(WORDS)}" for _ in range(rng.randint(0, 3))],
        "successes": [f"{rng.choice(WORDS)} ok" for _ in range(rng.randint(0, 3))],
    }
    episode["summary" if rng.random() < 0.8 else "trajectory_summary"] = summary
    cards = []
    for _ in range(rng.choice([0, 0, 1, 2])):
        card = {"mistake_type": rng.choice(["timeout", "wrong_file", "no_test"])}
        if rng.random() < 0.3:
            card["worker_id"] = rng.choice(["w1", "w2"])
        if rng.random() < 0.4:
            card["correct_decision"] = rng.choice(["wait", "ask"])
        if rng.random() < 0.5:
            card["lesson"] = f"lesson {rng.choice(WORDS)}" + ("!" * rng.choice([0, 310]))
        if rng.random() < 0.5:
            card["evidence"] = f"evidence {rng.randint(0, 99)}"
        if rng.random() < 0.2:
            card["task_id"] = rng.choice(TASKS)
        cards.append(card)
    episode["mistake_cards"] = cards
    return episode


def _assert_same(store: Store, memory: dict, now: datetime, where: str) -> None:
    for task in (None, *TASKS, "missing"):
        got = _render(store, now, task)
        want = ref.render(memory, task)
        assert got == want, f"{where}, task {task!r}"
    # The library's knobs (max_rules, max_recent), past the defaults and below them.
    for knobs in ({"max_rules": 9, "max_recent": 8}, {"max_rules": 1, "max_recent": 1}):
        for task in (None, TASKS[0]):
            got = _render(store, now, task, **knobs)
            assert got == ref.render(memory, task, **knobs), f"{where}, {knobs}, task {task!r}"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fresh_store_matches_the_reference(seed: int, now: datetime) -> None:
    rng = random.Random(seed)
    store = Store.in_memory()
    memory = ref.empty()
    for n in range(1, 231):
        episode = _random_episode(rng)
        _record(store, now, copy.deepcopy(episode))
        ref.record(memory, episode)
        if n % 23 == 0 or n in (19, 20, 21, 100, 101):
            _assert_same(store, memory, now, f"seed {seed}, after {n} episodes")
    _assert_same(store, memory, now, f"seed {seed}, at the end")


def test_fresh_file_store_matches_the_reference(tmp_path: Path, now: datetime) -> None:
    rng = random.Random(7)
    store = Store(tmp_path / "s")
    memory = ref.empty()
    for _ in range(45):
        episode = _random_episode(rng)
        _record(store, now, copy.deepcopy(episode))
        ref.record(memory, episode)
    _assert_same(Store(tmp_path / "s"), memory, now, "file store after 45 episodes")


# -- differential: importing the library's file, then going on ----------------------
def _reference_memory(rng: random.Random, count: int, start: datetime) -> dict:
    memory = ref.empty()
    for n in range(count):
        ref.record(memory, _random_episode(rng), (start + timedelta(minutes=n)).isoformat())
    ref.trim(memory)
    return memory


def _import(store: Store, memory: dict, path: Path, now: datetime) -> None:
    path.write_text(json.dumps(memory))
    importer.run_import(store, path, now=now, actor=ACTOR)


def _continue_both(
    store: Store, memory: dict, rng: random.Random, count: int, now: datetime, label: str
) -> None:
    for n in range(1, count + 1):
        episode = _random_episode(rng)
        _record(store, now, copy.deepcopy(episode))
        ref.record(memory, episode)
        if n % 9 == 0:
            _assert_same(store, memory, now, f"{label}, {n} episodes after the import")
    ref.trim(memory)
    _assert_same(store, memory, now, f"{label}, {count} episodes after the import")


def test_import_with_an_iso_last_consolidated_at(tmp_path: Path, now: datetime) -> None:
    rng = random.Random(11)
    start = datetime(2026, 10, 1, tzinfo=UTC)
    memory = _reference_memory(rng, 37, start)
    memory["last_consolidated_at"] = "2026-10-01T12:00:00"  # the library's old format: 0
    store = Store.in_memory()
    _import(store, copy.deepcopy(memory), tmp_path / "agent_memory.json", now)
    _assert_same(store, memory, now, "right after the import")
    # 37 - 0 >= 20: the next recording consolidates in both.
    _continue_both(store, memory, rng, 50, now, "iso last_consolidated_at")
    assert memory["last_consolidated_at"] == 78  # 38, 58, 78


def test_import_past_a_hundred_episodes(tmp_path: Path, now: datetime) -> None:
    rng = random.Random(12)
    memory = _reference_memory(rng, 157, datetime(2026, 9, 1, tzinfo=UTC))
    assert len(memory["episode_log"]) == 100
    assert sum(len(v) for v in memory["score_history"].values()) == 157
    assert memory["last_consolidated_at"] == 140
    store = Store(tmp_path / "store")
    _import(store, copy.deepcopy(memory), tmp_path / "agent_memory.json", now)
    assert episodes.count(store) == 157
    _assert_same(store, memory, now, "right after the import")
    # 157 → 200: consolidations at 160, 180 and 200.
    _continue_both(store, memory, rng, 43, now, "past 100")
    assert memory["last_consolidated_at"] == 200
    (doc,) = episodes.record_episodes(store, [{"score": 0.5}], now=now, actor=ACTOR)
    assert doc["index"] == 201


def test_import_through_the_cli_then_record(cli, tmp_path: Path) -> None:  # noqa: ANN001
    rng = random.Random(13)
    memory = _reference_memory(rng, 120, datetime(2026, 9, 1, tzinfo=UTC))
    source = tmp_path / "agent_memory.json"
    source.write_text(json.dumps(memory))
    done = cli("import", str(source))
    assert done.code == 0 and "(episodic)" in done.out
    for _ in range(25):
        episode = _random_episode(rng)
        assert cli("record-episode", stdin=json.dumps(episode)).code == 0
        ref.record(memory, episode)
    for task in (None, *TASKS):
        args = ("--task", task) if task else ()
        out = cli("context", "--style", "episodic", *args).out
        want = ref.render(memory, task)
        assert out == (want + "\n" if want else ""), task


def test_import_scrubs_agent_text(tmp_path: Path, now: datetime) -> None:
    memory = ref.empty()
    ref.record(
        memory,
        {
            "task_id": "t",
            "score": 0.2,
            "summary": "logged in as dan@example.com",
            "mistakes": ["pasted sk-" + "z" * 30],
            "mistake_cards": [{"mistake_type": "leak", "evidence": "/home/dan/.ssh/id_rsa"}],
        },
    )
    ref.trim(memory)
    store = Store.in_memory()
    _import(store, memory, tmp_path / "agent_memory.json", now)
    with store.reading():
        stored = json.dumps({n: store.docs(n) for n in store.table_names()})
    for secret in ("dan@example.com", "sk-zzz", "/home/dan"):
        assert secret not in stored
    text = _render(store, now, "t")
    assert "[AVOID] pasted [redacted:api_key]" in text
    assert "Evidence: [redacted:home_path]/.ssh/id_rsa" in text
    # Recording the same mistake again matches the imported (scrubbed) rule and text.
    _record(store, now, {"task_id": "t", "score": 0.1, "mistakes": ["pasted sk-" + "z" * 30]})
    assert _render(store, now, "t").count("pasted [redacted:api_key]") == 2  # rule + mistake


def test_imported_rules_keep_their_order_after_rules_already_here(
    tmp_path: Path, now: datetime
) -> None:
    store = Store.in_memory()
    rules.add_rule(store, "manual A", now=now, actor=ACTOR)
    rules.add_rule(store, "manual B", now=now, actor=ACTOR, scope="task:t")
    memory = ref.empty()
    memory["global_rules"] = ["g1", "g2", "g3"]
    memory["task_rules"] = {"t": ["[AVOID] x", "[AVOID] y"]}
    _import(store, memory, tmp_path / "agent_memory.json", now)
    assert _render(store, now, "t") == (
        "## MEMORY FROM PAST EPISODES\n"
        "\n"
        "Rules for t:\n"
        "  - manual B\n"
        "  - [AVOID] x\n"
        "  - [AVOID] y\n"
        "\n"
        "General rules (all tasks):\n"
        "  - manual A\n"
        "  - g1\n"
        "  - g2\n"
        "  - g3"
    )
    rules.add_rule(store, "manual C", now=now, actor=ACTOR)
    assert _render(store, now).splitlines()[-3:] == ["  - g2", "  - g3", "  - manual C"]
    with store.reading():
        assert [r["text"] for r in rules.in_scope(store, "global")] == [
            "manual A",
            "g1",
            "g2",
            "g3",
            "manual C",
        ]


def test_a_batch_renders_like_the_same_episodes_recorded_one_by_one(now: datetime) -> None:
    rng = random.Random(0)
    store = Store.in_memory()
    memory = ref.empty()
    batch = [_random_episode(rng) for _ in range(45)]
    episodes.record_episodes(store, copy.deepcopy(batch), now=now, actor=ACTOR)
    for episode in batch:
        ref.record(memory, episode)
    _assert_same(store, memory, now, "after one batch of 45")


# -- differential: what the library accepts and memwork's model does not --------------------
def _loose_episode(rng: random.Random) -> dict:
    """An episode the library takes as it is: no score, a score as text, cards that are
    not objects, numbers where text goes, fields a card does not have."""
    episode = _random_episode(rng)
    roll = rng.random()
    if roll < 0.2:
        del episode["score"]
    elif roll < 0.4:
        episode["score"] = str(episode["score"])
    if rng.random() < 0.2:
        episode["task_id"] = rng.choice([7, 8])
    if rng.random() < 0.2:
        episode["worker_id"] = rng.randint(1, 3)
    if rng.random() < 0.2:
        episode["mistakes"] = [*episode["mistakes"], rng.randint(100, 103)]
    cards = list(episode["mistake_cards"])
    if rng.random() < 0.3:
        cards.insert(rng.randint(0, len(cards)), rng.choice(["a note", 5, None, ["x"]]))
    for card in cards:
        if isinstance(card, dict):
            if rng.random() < 0.3:
                card["evidence"] = rng.randint(0, 99)
            if rng.random() < 0.2:
                card["severity"] = "high"
            if rng.random() < 0.2:
                card["worker_id"] = rng.randint(1, 2)
    episode["mistake_cards"] = cards
    return episode


@pytest.mark.slow
@pytest.mark.parametrize("seed", [21, 22])
def test_what_the_library_accepts_renders_as_the_library_renders_it(
    seed: int, now: datetime
) -> None:
    rng = random.Random(seed)
    store = Store.in_memory()
    memory = ref.empty()
    for n in range(1, 121):
        episode = _loose_episode(rng)
        _record(store, now, copy.deepcopy(episode))
        ref.record(memory, episode)
        if n % 17 == 0:
            for task in (None, *TASKS, "7", "8"):
                got, want = _render(store, now, task), ref.render(memory, task)
                assert got == want, f"seed {seed}, after {n} episodes, task {task!r}"


def test_the_context_reads_the_card_window_where_recording_writes_it() -> None:
    from memwork.core.domain import episodic_cards
    from memwork.core.services.context import build

    assert build.EPISODIC_CARDS == episodic_cards.DOC


def test_a_store_from_before_the_card_window_starts_it_from_its_best_cards(
    store: Store, now: datetime
) -> None:
    """A store recorded before the window was kept has none: its first card after the
    upgrade starts the window from the table's 30 best cards (all the library had, as long
    as it never held more), and the layout is ranked from the table until then."""
    from memwork.core.domain import episodic_cards

    memory = ref.empty()
    first = [
        {"task_id": "t", "score": 0.2, "steps": 1, "mistake_cards": [{"mistake_type": f"c{i}"}]}
        for i in range(5)
    ]
    for episode in first:
        _record(store, now, copy.deepcopy(episode))
        ref.record(memory, episode)
    with store.transaction():
        store.delete(episodic_cards.META, [episodic_cards.DOC])
    assert _render(store, now) == ref.render(memory)  # ranked from the table meanwhile
    later = {"task_id": "t", "score": 0.2, "steps": 1, "mistake_cards": [{"mistake_type": "c1"}]}
    _record(store, now, copy.deepcopy(later))
    ref.record(memory, later)
    with store.reading():
        window = episodic_cards.read(store)
    assert window is not None and len(window) == 5
    assert _render(store, now) == ref.render(memory)
