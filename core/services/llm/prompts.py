"""What memwork asks a model, and how it reads the answers: plain functions.

Consolidation follows the episodic library: the last 30 episodes go to the model,
which answers a JSON array of short rules, each stored as ``[CONSOLIDATED] <rule>``.
Reflection sends a session's observations and reads back a JSON array of lessons
(text, optional confidence); crystallization reads back one paragraph.

Readers are forgiving about wrapping (a ```json fence, a sentence before the array)
and strict about content: anything else raises ValueError saying what was expected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ...base.text import clip, ellipsize, one_line
from ...models.plain import RULE_TEXT_CAP
from ...privacy import scrub

#: Episodes a consolidation shows the model (the episodic library's window).
CONSOLIDATE_WINDOW = 30
#: Rules, lessons a model may give at most (more are ignored).
MAX_RULES = 10
MAX_LESSONS = 10
#: Characters of a session's observations a prompt carries (the newest are kept).
OBSERVATION_BUDGET = 24_000
OBSERVATION_CAP = 600
EPISODE_TEXT_CAP = 300
LESSON_CAP = 1000
SUMMARY_CAP = 2000
PREFIX = "[CONSOLIDATED] "

_FENCE = re.compile(r"^\s*```[A-Za-z]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")

Message = dict[str, str]


def _unfenced(answer: str) -> str:
    match = _FENCE.match(answer)
    return match.group(1) if match else answer


def _json_in(answer: str, opener: str, closer: str) -> Any:
    """The JSON value between the first ``opener`` and the last ``closer`` of an answer."""
    text = _unfenced(answer).strip()
    start, end = text.find(opener), text.rfind(closer)
    if start < 0 or end < start:
        raise ValueError(f"expected a JSON {'array' if opener == '[' else 'object'}")
    try:
        return json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON ({exc.msg})") from None


def _clean(text: str) -> str:
    return one_line(scrub(_BULLET.sub("", text)))


# -- consolidation ------------------------------------------------------------------------
def _episode_line(ep: Mapping[str, Any]) -> str:
    summary = clip(str(ep.get("summary") or ""), EPISODE_TEXT_CAP)
    return f"task={ep.get('task_id', '?')} score={float(ep.get('score', 0.0)):.2f}: {summary}"


#: The episodic library's own consolidation prompt, word for word, so a model answers
#: memwork as it answered the library.
_CONSOLIDATION_PROMPT = """You are analyzing an AI agent's performance across multiple episodes.
Here are recent episode outcomes:

{episodes}

Extract 5 concise, actionable rules the agent should follow in future episodes.
Each rule should be 1 sentence. Focus on what WORKS and what to AVOID.

Return ONLY a JSON array of strings:
["Rule 1...", "Rule 2...", ...]
"""


def consolidation_messages(episodes: Iterable[Mapping[str, Any]]) -> list[Message]:
    """The chat for a consolidation, as the episodic library asks it: one user message
    with the last 30 of ``episodes`` (oldest first), one line each (task, score,
    summary)."""
    window = list(episodes)[-CONSOLIDATE_WINDOW:]
    lines = "\n".join(_episode_line(ep) for ep in window)
    return [{"role": "user", "content": _CONSOLIDATION_PROMPT.format(episodes=lines)}]


def parse_rules(answer: str) -> list[str]:
    """``[CONSOLIDATED] <rule>`` for each rule of a model's answer (a JSON array of strings,
    or of objects with ``rule`` or ``text``), scrubbed, de-duplicated, 10 at most."""
    found = _json_in(answer, "[", "]")
    if not isinstance(found, list):
        raise ValueError("expected a JSON array of rules")
    texts: dict[str, None] = {}
    for item in found:
        if isinstance(item, dict):
            item = item.get("rule", item.get("text"))
        if not isinstance(item, str):
            raise ValueError("each rule must be a string")
        text = _clean(item)
        if text.upper().startswith(PREFIX.strip()):
            text = text[len(PREFIX.strip()) :].strip()
        if text:
            texts.setdefault(ellipsize(PREFIX + text, RULE_TEXT_CAP), None)
    return list(texts)[:MAX_RULES]


# -- sessions -----------------------------------------------------------------------------
def _observation_lines(observations: Iterable[Mapping[str, Any]]) -> str:
    """The newest observations that fit the budget, oldest first, one a line."""
    kept: list[str] = []
    used = 0
    for obs in reversed(list(observations)):
        line = f"- [{obs.get('kind', 'note')}] {clip(str(obs.get('content', '')), OBSERVATION_CAP)}"
        if used + len(line) > OBSERVATION_BUDGET and kept:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(reversed(kept))


def _session_header(session: Mapping[str, Any]) -> str:
    parts = [f"Session {session.get('id', '')}"]
    for key in ("title", "project", "agent_id"):
        if session.get(key):
            parts.append(f"{key.replace('_id', '')}: {session[key]}")
    return ", ".join(parts)


def reflection_messages(
    session: Mapping[str, Any], observations: Iterable[Mapping[str, Any]]
) -> list[Message]:
    """The chat for a reflection: the session and its observations, asking for lessons."""
    return [
        {
            "role": "system",
            "content": "You review an AI agent's work session and keep the lessons worth "
            "remembering in later sessions.",
        },
        {
            "role": "user",
            "content": f"{_session_header(session)}. Its observations, oldest first:\n"
            f"{_observation_lines(observations)}\n\n"
            "Write at most 5 lessons that would help in a later session: general, "
            "actionable, one or two sentences each; none when nothing is worth keeping. "
            'Reply with only a JSON array of objects {"text": "...", "confidence": 0.0-1.0}.',
        },
    ]


def parse_lessons(answer: str) -> list[tuple[str, float | None]]:
    """(text, confidence or None) for each lesson of a model's answer (a JSON array of
    objects with ``text`` or ``lesson``, or of strings), scrubbed, 10 at most."""
    found = _json_in(answer, "[", "]")
    if not isinstance(found, list):
        raise ValueError("expected a JSON array of lessons")
    lessons: dict[str, float | None] = {}
    for item in found:
        confidence: float | None = None
        if isinstance(item, dict):
            raw = item.get("confidence")
            if isinstance(raw, int | float) and not isinstance(raw, bool):
                confidence = min(1.0, max(0.0, float(raw)))
            item = item.get("text", item.get("lesson"))
        if not isinstance(item, str):
            raise ValueError('each lesson must be a string or an object with "text"')
        text = ellipsize(_clean(item), LESSON_CAP)
        if text and text not in lessons:
            lessons[text] = confidence
    return list(lessons.items())[:MAX_LESSONS]


def crystallize_messages(
    session: Mapping[str, Any], observations: Iterable[Mapping[str, Any]]
) -> list[Message]:
    """The chat for a crystallization: the session and its observations, asking for a
    summary."""
    return [
        {
            "role": "system",
            "content": "You write the record of an AI agent's work session for whoever "
            "picks the work up next.",
        },
        {
            "role": "user",
            "content": f"{_session_header(session)}. Its observations, oldest first:\n"
            f"{_observation_lines(observations)}\n\n"
            "Summarise the session in one paragraph of at most 120 words: the goal, what "
            "was done and decided, what failed, and what is left. Reply with the paragraph "
            "only.",
        },
    ]


def parse_summary(answer: str) -> str:
    """The paragraph of a model's answer (plain text, or a JSON object's ``summary``),
    scrubbed, on one line, 2000 characters at most."""
    text = _unfenced(answer).strip()
    if text.startswith("{"):
        try:
            found = json.loads(text)
        except json.JSONDecodeError:
            found = None
        if isinstance(found, dict):
            if not isinstance(found.get("summary"), str):
                raise ValueError('expected a paragraph, or a JSON object with "summary"')
            text = found["summary"]
    summary = ellipsize(one_line(scrub(text)), SUMMARY_CAP)
    if not summary:
        raise ValueError("the summary is empty")
    return summary
