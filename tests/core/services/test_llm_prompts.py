"""What memwork asks a model and how it reads the answers, without any server."""

from __future__ import annotations

import pytest

from memwork.core.services.llm import heuristics, prompts

# A GitHub token the scrubber knows: a model that echoes one must not get it stored.
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _episodes(n: int) -> list[dict]:
    return [
        {
            "task_id": f"task-{i}",
            "score": i / n,
            "summary": f"summary {i}",
            "mistakes": [f"mistake {i}"],
            "successes": [],
        }
        for i in range(n)
    ]


def test_consolidation_prompt_shows_the_last_30_episodes_oldest_first() -> None:
    messages = prompts.consolidation_messages(_episodes(45))
    assert [m["role"] for m in messages] == ["user"]  # the episodic library's one message
    asked = messages[0]["content"]
    assert "task=task-14 " not in asked and "task=task-15 " in asked
    assert asked.index("task=task-15 ") < asked.index("task=task-44 ")
    assert asked.startswith("You are analyzing an AI agent's performance across multiple")
    assert "Extract 5 concise, actionable rules" in asked and "JSON array of strings" in asked


@pytest.mark.parametrize(
    "answer",
    [
        '["Run the tests first", "Keep diffs small"]',
        '```json\n["Run the tests first", "Keep diffs small"]\n```',
        'Here are the rules:\n["- Run the tests first", "2. Keep diffs small"]',
        '[{"rule": "Run the tests first"}, {"text": "[CONSOLIDATED] Keep diffs small"}]',
    ],
)
def test_rules_are_read_from_the_usual_wrappings(answer: str) -> None:
    assert prompts.parse_rules(answer) == [
        "[CONSOLIDATED] Run the tests first",
        "[CONSOLIDATED] Keep diffs small",
    ]


def test_rules_are_scrubbed_deduplicated_and_bounded() -> None:
    answer = str([f"rule {i % 12}" for i in range(30)] + [f"never paste {TOKEN}"]).replace("'", '"')
    found = prompts.parse_rules(answer)
    assert len(found) == prompts.MAX_RULES and len(set(found)) == len(found)
    secret = prompts.parse_rules(f'["never paste {TOKEN}"]')[0]
    assert TOKEN not in secret and "[redacted:" in secret
    assert prompts.parse_rules("[]") == []


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("I cannot help with that.", "expected a JSON array"),
        ('["unclosed", ', "expected a JSON array"),
        ("[1, 2]", "each rule must be a string"),
        ('["a" "b"]', "invalid JSON"),
    ],
)
def test_a_malformed_rule_answer_says_what_was_expected(answer: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        prompts.parse_rules(answer)


SESSION = {"id": "ses_1", "title": "canary rollout", "project": "api"}
OBSERVATIONS = [
    {"kind": "decision", "content": "Canary each deploy"},
    {"kind": "error", "content": "deploy failed: timeout\nstack..."},
    {"kind": "note", "content": "checked the dashboard"},
]


def test_session_prompts_carry_the_session_and_its_observations() -> None:
    for build in (prompts.reflection_messages, prompts.crystallize_messages):
        asked = build(SESSION, OBSERVATIONS)[1]["content"]
        assert "Session ses_1, title: canary rollout, project: api" in asked
        assert "- [decision] Canary each deploy\n- [error] deploy failed: timeout stack..." in asked


def test_a_long_session_keeps_its_newest_observations_within_the_budget() -> None:
    many = [{"kind": "note", "content": f"obs {i} " + "x" * 500} for i in range(200)]
    asked = prompts.reflection_messages(SESSION, many)[1]["content"]
    assert "obs 199 " in asked and "obs 0 " not in asked
    assert len(asked) < prompts.OBSERVATION_BUDGET + 1000


def test_lessons_are_read_with_their_confidence_clamped() -> None:
    answer = '[{"text": "Canary first", "confidence": 1.7}, {"lesson": "Read logs"}, "Plain one"]'
    assert prompts.parse_lessons(answer) == [
        ("Canary first", 1.0),
        ("Read logs", None),
        ("Plain one", None),
    ]
    with pytest.raises(ValueError, match='"text"'):
        prompts.parse_lessons('[{"confidence": 0.5}]')


def test_a_summary_is_one_scrubbed_paragraph() -> None:
    assert (
        prompts.parse_summary("  The agent shipped\nthe canary.  ")
        == "The agent shipped the canary."
    )
    assert prompts.parse_summary('```\n{"summary": "Shipped."}\n```') == "Shipped."
    assert TOKEN not in prompts.parse_summary(f"Used {TOKEN} to push.")
    for bad in ("", "```\n```", '{"summary": 3}'):
        with pytest.raises(ValueError):
            prompts.parse_summary(bad)


def test_heuristic_reflection_keeps_marked_lessons_and_turns_errors_into_avoid() -> None:
    assert heuristics.lessons_from(OBSERVATIONS) == [
        ("Canary each deploy", None),
        ("Avoid: deploy failed: timeout stack...", None),
    ]
    assert heuristics.lessons_from([{"kind": "note", "content": "nothing to learn"}]) == []


def test_heuristic_summary_counts_and_quotes() -> None:
    assert heuristics.summary_of(OBSERVATIONS) == (
        "3 observations (1 decision, 1 error, 1 note). Decided: Canary each deploy. "
        "Errors: deploy failed: timeout stack.... Last: checked the dashboard"
    )


def test_heuristic_summary_of_one_observation() -> None:
    assert heuristics.summary_of([{"kind": "note", "content": "looked"}]) == (
        "1 observation (1 note). Last: looked"
    )
