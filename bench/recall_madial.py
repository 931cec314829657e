"""MADial-Bench: a user's memories, recalled from the conversation that calls for one.

github.com/hejunqing/MADial-Bench, ``data/en/`` and ``data/ch/`` (copied to
``$MEMWORK_RECALL_DATA/madial/`` by ``bench/get_recall_data.sh``; the repository states
no licence). Two users (children named Bart and Lisa) have about 80 memories each, one
line apiece and dated ("Bart danced at the Christmas party and felt very happy."). Each
of 160 dialogues between a user and an assistant reaches a turn where the assistant
should bring a memory up; the memories that fit it are the dialogue's
``relevant-id``, and the query is the dialogue before that turn (the way the set's own
embedding baselines ask it).

Its shape is unlike the other sets': the query is not a question but ~600 characters of
chat, most of whose words point nowhere, and the answer is a short record that shares
few of them. The English files make ``madial``, the Chinese ones ``madial-zh`` (the
same memories and dialogues, translated).

Each user is a conversation whose memories are its turns (each its own session, so
there is one level). A dialogue tunes when the SHA-1 of ``<user>#<n>`` (its line in the
file) is even, else it is held out.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from recall_sets import HELD_OUT, TUNING, Conversation, Question

#: The files of each language under ``madial/``: memories, then dialogues.
FILES = {
    "en": ("MADial-Bench-en-memory.json", "MADial-Bench-en-dialogue.json"),
    "zh": ("MADial-Bench-zh-memory.json", "MADial-Bench-zh-dialogue.json"),
}


def _sha(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest(), 16)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def load(folder: Path, language: str) -> dict[str, list[Conversation]]:
    """Each user's memories and dialogues in ``language``, by slice (empty when the files
    are missing)."""
    memories_file, dialogues_file = (folder / f for f in FILES[language])
    # Only the Chinese memories say whose they are; the English ones share their ids.
    owners_file = folder / FILES["zh"][0]
    if not (memories_file.exists() and dialogues_file.exists() and owners_file.exists()):
        return {}
    owner = {
        str(key): str(value["user-id"])
        for line in _lines(owners_file)
        for key, value in line.items()
    }
    memories: dict[str, list[tuple[str, str, datetime | None]]] = {}
    for line in _lines(memories_file):
        for key, value in line.items():
            text = str(value.get("event") or "").strip()
            if text and str(key) in owner:
                memories.setdefault(owner[str(key)], []).append((str(key), text, _date(value)))
    out: dict[str, list[Conversation]] = {TUNING: [], HELD_OUT: []}
    asked: dict[str, list[tuple[int, dict]]] = {}
    for n, dialogue in enumerate(_lines(dialogues_file)):
        asked.setdefault(str(dialogue["user-id"]), []).append((n, dialogue))
    for user, held in sorted(memories.items()):
        for part in (TUNING, HELD_OUT):
            conv = _user(user, held, asked.get(user, []), part)
            if conv.questions:
                out[part].append(conv)
    return out


def _date(memory: dict) -> datetime | None:
    try:
        return datetime.strptime(str(memory.get("time")), "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        return None


def query(dialogue: dict) -> str:
    """The dialogue before the assistant's first turn that brings a memory up, one line a
    turn, without the set's begin and end marks."""
    turns = dialogue["dialogue"]
    first = min(dialogue.get("test-turn") or [len(turns)])
    lines = [str(t).strip() for t in turns[:first]]
    return "\n".join(t for t in lines if t and t not in ("<BOD>", "<EOD>"))


def _user(
    user: str, memories: list[tuple[str, str, datetime | None]], dialogues: list, part: str
) -> Conversation:
    """One user's memories, as turns in the order the file lists them, with the
    dialogues of slice ``part`` as questions."""
    turns = [(key, key, text) for key, text, _ in memories]
    known = {key for key, _, _ in memories}
    questions: list[Question] = []
    for n, dialogue in dialogues:
        name = f"{user}#{n}"
        if (TUNING if _sha(name) % 2 == 0 else HELD_OUT) != part:
            continue
        answers = {str(i) for i in dialogue.get("relevant-id") or []} & known
        if answers:
            questions.append(Question(name, query(dialogue), answers, answers, "dialogue"))
    dates = [at for _, _, at in memories]
    dated = [at for at in dates if at is not None]
    whole = bool(dated) and len(dated) == len(dates)
    return Conversation(
        f"madial-{user}-{part}",
        turns,
        questions,
        dated if whole else None,
        max(dated) + timedelta(days=1) if whole else None,
        ["memory"] * len(turns),
        session_level=False,
    )
