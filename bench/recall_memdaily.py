"""MemDaily, the Chinese set of MemSim: short facts a user tells an assistant over days.

github.com/nuster1128/MemSim, ``data_generation/final_dataset/messages_and_QAs/*.json``
(copied to ``$MEMWORK_RECALL_DATA/memdaily/`` by ``bench/get_recall_data.sh``; the
repository states no licence). Each file holds trajectories of one question type and
one topic (``01_simple_roles``: simple questions about people). A trajectory is 4 to 15
messages of one user ("我的上司名叫赵雅琳。", "我表妹学历是硕士。"), dated, and one
question with the messages that answer it (``target_step_id``). A question the set's
generator failed to write is left out, as the set's own post-processing leaves it out.

Its shape is unlike the other sets': Chinese with no spaces, every message about the
same few people or things (each names "我的上司"), so the question's one telling word
is what ranks, and in the ``noisy`` files the question comes after a paragraph of
chatter. The haystacks are small: R@1 and MRR are the telling measures.

Each trajectory is a conversation; its messages' days are its sessions. A trajectory
tunes when the SHA-1 of ``<file>#<tid>`` is even, else it is held out; at most
``per_file`` trajectories of each file in each slice are kept (the smallest SHA-1 of
``"pick:" + name``, a stable sample).
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path

from recall_sets import HELD_OUT, TUNING, Conversation, Question

#: The question types, by the number that starts each file's name.
TYPES = {
    "01": "1 simple",
    "02": "2 conditional",
    "03": "3 comparative",
    "04": "4 aggregative",
    "05": "5 post-processing",
    "06": "6 noisy",
}


#: MemSim's marks for a question or answer its generator failed to write. The set's own
#: post-processing (``final_dataset/post_process.py``) drops such trajectories; the files
#: read here still hold them (one in 20 or so): a question "[ERRORQ]" asks nothing.
FAILED = frozenset({"[ERRORQ]", "[ERRORA]"})


def _sha(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest(), 16)


def _date(text: object) -> datetime | None:
    """MemDaily's ``2024年04月01日 周一 08:39`` as UTC (None when absent or unread)."""
    found = re.fullmatch(
        r"\s*(\d{4})年(\d{1,2})月(\d{1,2})日\s*\S*\s*(\d{1,2}):(\d{2})\s*", str(text)
    )
    if not found:
        return None
    year, month, day, hour, minute = map(int, found.groups())
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def load(folder: Path, per_file: int) -> dict[str, list[Conversation]]:
    """The trajectories of every file under ``folder``, by slice (empty when none)."""
    files = sorted(folder.glob("[0-9][0-9]_*.json"))
    if not files:
        return {}
    out: dict[str, list[Conversation]] = {TUNING: [], HELD_OUT: []}
    for f in files:
        picked: dict[str, list[Conversation]] = {TUNING: [], HELD_OUT: []}
        for item in json.loads(f.read_text(encoding="utf-8")):
            conv = trajectory(f.stem, item)
            if conv.questions:
                picked[TUNING if _sha(conv.name) % 2 == 0 else HELD_OUT].append(conv)
        for part, convs in picked.items():
            convs.sort(key=lambda c: _sha("pick:" + c.name))
            out[part] += convs[:per_file]
    return out


def trajectory(stem: str, item: dict) -> Conversation:
    """One trajectory: its messages as turns ``m<mid>`` in sessions by day, its questions
    asked at the first question's time."""
    name = f"{stem}#{item['tid']}"
    category = TYPES.get(stem[:2], stem)
    turns: list[tuple[str, str, str]] = []
    times: list[datetime | None] = []
    for m in item["message_list"]:
        text = str(m.get("message") or "").strip()
        if not text:
            continue
        at = _date(m.get("time"))
        turns.append((f"m{m['mid']}", at.date().isoformat() if at else "?", text))
        times.append(at)
    session_of = {u: s for u, s, _ in turns}
    questions: list[Question] = []
    asked: datetime | None = None
    for q in item.get("question_list") or []:
        if str(q.get("question")) in FAILED or str(q.get("answer")) in FAILED:
            continue
        evidence = {f"m{n}" for n in q.get("target_step_id") or []} & session_of.keys()
        if not evidence:
            continue
        asked = asked or _date(q.get("time"))
        sessions = {session_of[e] for e in evidence}
        questions.append(
            Question(f"{name}#{q['qid']}", str(q["question"]), evidence, sessions, category)
        )
    dated = [t for t in times if t is not None]
    whole = asked is not None and len(dated) == len(times)
    return Conversation(
        name,
        turns,
        questions,
        dated if whole else None,
        asked if whole else None,
        ["user"] * len(turns),
        session_level=False,
    )
