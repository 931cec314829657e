"""The public conversation sets of bench/bench_recall.py, loaded into one shape.

Every set becomes conversations: turns ``(uid, session, text)`` in the order they
were said, and questions with their evidence turns, evidence sessions and a
category. Each set is split into a *tuning* slice and a *held-out* slice by a
fixed rule on whole conversations or whole questions, never on turns:

* **LoCoMo** (``locomo10.json``, github.com/snap-research/LoCoMo, CC BY-NC 4.0):
  10 conversations; the ones at even positions in the file (0, 2, 4, 6, 8) tune,
  the odd ones are held out. Categories are the file's numbers: 1 multi-hop,
  2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
* **REALTALK** (``realtalk/Chat_*.json``, github.com/danny911kr/REALTALK, no
  licence stated): 10 chats of real people over weeks; chats 1, 2, 5, 6, 8 and 9
  tune, 3, 4, 7 and 10 are held out (the split memwork's ranking was made on).
* **LongMemEval** (``longmemeval_s_cleaned.json``, ``longmemeval_s.json`` or
  ``longmemeval_oracle.json``, github.com/xiaowu0162/LongMemEval, data on
  HuggingFace ``xiaowu0162/longmemeval-cleaned``, or assembled from a git copy of
  github.com/hussainzs/Memoria by ``bench/get_recall_data.sh``, MIT): 500 questions, each with
  its own haystack of ~50 user/assistant sessions whose assistant replies run to
  about a thousand characters. A question tunes when the SHA-1 of its id is even,
  else it is held out; abstention questions (``_abs``, no evidence) are left out.
  Long: at most ``per_category`` questions of each type in each slice are kept,
  the ones with the smallest SHA-1 of ``"pick:" + id`` (a stable sample).
* **locomo-facts** (:mod:`recall_locomo_facts`): LoCoMo's own facts drawn from each
  session ("Melanie painted a lake sunrise last year …") as the records, the questions
  and slices LoCoMo's.
* **MemDaily** (``memdaily/``, :mod:`recall_memdaily`): short Chinese facts a user tells
  an assistant over days, one small haystack a question.
* **MADial-Bench** (``madial/``, :mod:`recall_madial`): two users' memories, each
  recalled from the dialogue before the turn that brings it up; ``madial`` in English,
  ``madial-zh`` in Chinese.
* **longmemeval-wide** (only when named): the same questions and slices, each haystack
  filled to 500 sessions with sessions of the file that answer no question, as
  LongMemEval_M widens LongMemEval_S; measured, never tuned on.

Each set gives its sessions' dates (LoCoMo's ``1:56 pm on 8 May, 2023``, REALTALK's
``29.12.2023, 00:51:12``, LongMemEval's ``2023/05/20 (Sat) 02:21``): each turn keeps its
session's, and the questions are asked a day after the last session (LongMemEval: at
each question's own date).

Missing files give no conversations (the caller says what it skipped).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

TUNING, HELD_OUT = "tuning", "held-out"
REALTALK_TUNE = ("Chat_1_", "Chat_2_", "Chat_5_", "Chat_6_", "Chat_8_", "Chat_9_")
LOCOMO_CATEGORIES = {
    1: "1 multi-hop",
    2: "2 temporal",
    3: "3 open-domain",
    4: "4 single-hop",
    5: "5 adversarial",
}
#: REALTALK's files number their categories only; these names are ours, read off the questions.
REALTALK_CATEGORIES = {1: "1 multi-hop", 2: "2 temporal", 3: "3 commonsense"}
LONGMEMEVAL_FILES = ("longmemeval_s_cleaned.json", "longmemeval_s.json", "longmemeval_oracle.json")
SETS = (
    "locomo",
    "realtalk",
    "longmemeval",
    "locomo-long",
    "locomo-facts",
    "memdaily",
    "madial",
    "madial-zh",
)
#: Sets run only when named (``--sets``): slower, and measured, never tuned on.
EXTRA_SETS = ("longmemeval-wide",)
#: Sessions in a ``longmemeval-wide`` haystack (LongMemEval_M's haystacks hold ~500).
WIDE_SESSIONS = 500


@dataclass
class Question:
    """A question, the turns and sessions that answer it, and its category."""

    qid: str
    text: str
    turns: set[str]
    sessions: set[str]
    category: str


@dataclass
class Conversation:
    """One store's worth of turns ``(uid, session, text)`` and the questions asked of it."""

    name: str
    turns: list[tuple[str, str, str]]
    questions: list[Question] = field(default_factory=list)
    #: When each turn was said, if the set says (its session's date), and when the
    #: questions were asked: memwork stores the turns at those times.
    times: list[datetime] | None = None
    asked: datetime | None = None
    #: Who said each turn: a LoCoMo or REALTALK speaker's name, LongMemEval's role.
    speakers: list[str] | None = None
    #: Whether its sessions are worth a level of their own (a set whose records stand
    #: alone, or whose sessions are a day of a few lines, is measured by turn only).
    session_level: bool = True


def with_speakers(conv: Conversation) -> Conversation:
    """``conv`` with each turn's text after its speaker's name ("Caroline: I went …",
    "user: …"), as a harness that keeps who said what might store it."""
    if conv.speakers is None:
        return conv
    turns = [
        (u, s, f"{who}: {t}") for (u, s, t), who in zip(conv.turns, conv.speakers, strict=True)
    ]
    return replace(conv, turns=turns)


def as_session_documents(conv: Conversation) -> Conversation:
    """``conv`` with each session stored as one record, its turns' texts joined by line
    breaks, as a harness that saves whole transcripts might store them: a question's
    evidence is then the documents of its evidence sessions, and each document is dated
    by its session's first turn."""
    texts: dict[str, list[str]] = {}  # in the order the sessions begin
    first: dict[str, int] = {}
    for n, (_uid, session, text) in enumerate(conv.turns):
        texts.setdefault(session, []).append(text)
        first.setdefault(session, n)
    turns = [(f"session:{s}", s, "\n".join(lines)) for s, lines in texts.items()]
    times = [conv.times[n] for n in first.values()] if conv.times else None
    questions = [
        Question(q.qid, q.text, {f"session:{s}" for s in q.sessions}, q.sessions, q.category)
        for q in conv.questions
    ]
    return Conversation(conv.name, turns, questions, times, conv.asked)


def _sha(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest(), 16)


def load(name: str, data: Path, per_category: int = 15) -> dict[str, list[Conversation]]:
    """The set ``name``'s conversations by slice (empty when its files are missing)."""
    if name == "locomo":
        return locomo(data / "locomo10.json")
    if name == "locomo-long":
        return {
            part: [long_replies(c) for c in convs]
            for part, convs in locomo(data / "locomo10.json").items()
        }
    if name == "locomo-facts":
        import recall_locomo_facts  # imports this module: loaded when asked for

        return recall_locomo_facts.load(data / "locomo10.json")
    if name == "realtalk":
        return realtalk(data / "realtalk")
    if name == "longmemeval":
        found = next((data / f for f in LONGMEMEVAL_FILES if (data / f).exists()), None)
        return longmemeval(found, per_category) if found else {}
    if name == "longmemeval-wide":
        found = next((data / f for f in LONGMEMEVAL_FILES[:2] if (data / f).exists()), None)
        return longmemeval(found, per_category, WIDE_SESSIONS) if found else {}
    if name == "memdaily":
        import recall_memdaily  # imports this module: loaded when asked for

        return recall_memdaily.load(data / "memdaily", 4 * per_category)
    if name in ("madial", "madial-zh"):
        import recall_madial

        return recall_madial.load(data / "madial", "zh" if name.endswith("-zh") else "en")
    known = ", ".join(SETS + EXTRA_SETS)
    raise ValueError(f"--sets: unknown set {name!r} (known: {known})")


# ---------------------------------------------------------------- LoCoMo and REALTALK


def locomo(path: Path) -> dict[str, list[Conversation]]:
    if not path.exists():
        return {}
    out: dict[str, list[Conversation]] = {TUNING: [], HELD_OUT: []}
    for n, sample in enumerate(json.loads(path.read_text())):
        conv = _dialogue(
            str(sample["sample_id"]), sample["conversation"], sample["qa"], LOCOMO_CATEGORIES, True
        )
        out[HELD_OUT if n % 2 else TUNING].append(conv)
    return out


def realtalk(folder: Path) -> dict[str, list[Conversation]]:
    files = sorted(folder.glob("Chat_*.json"), key=lambda f: int(f.name.split("_")[1]))
    if not files:
        return {}
    out: dict[str, list[Conversation]] = {TUNING: [], HELD_OUT: []}
    for f in files:
        d = json.loads(f.read_text())
        conv = _dialogue(f.stem, d, d["qa"], REALTALK_CATEGORIES)
        out[TUNING if f.name.startswith(REALTALK_TUNE) else HELD_OUT].append(conv)
    return out


def _dialogue(
    name: str, conv: dict, qa: list[dict], categories: dict[int, str], captions: bool = False
) -> Conversation:
    """A LoCoMo-shaped conversation: ``session_N`` lists of turns with ``dia_id``s (with
    ``captions``, a shared photo's caption joins its turn; REALTALK's are left out, as
    memwork's ranking was tuned without them)."""
    turns: list[tuple[str, str, str]] = []
    times: list[datetime | None] = []
    speakers: list[str] = []
    keys = sorted((k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k[8:]))
    for key in keys:
        if not isinstance(conv[key], list):
            continue
        at = _session_date(conv.get(f"{key}_date_time"))
        for t in conv[key]:
            text = (t.get("clean_text") or t.get("text") or "").strip()
            if captions and t.get("blip_caption"):
                text = f"{text} [shares {t['blip_caption']}]"
            if text:
                turns.append((t["dia_id"], key[8:], text))
                times.append(at)
                speakers.append(str(t.get("speaker") or "?"))
    out = dated_conversation(name, turns, times, speakers)
    held = {u for u, _, _ in turns}
    out.questions += cited_questions(name, qa, turns, categories, lambda cited: set(cited) & held)
    return out


def cited_questions(
    name: str,
    qa: list[dict],
    turns: list[tuple[str, str, str]],
    categories: dict[int, str],
    answers_of: Callable[[list[str]], set[str]],
) -> list[Question]:
    """LoCoMo-shaped questions (``question``, ``evidence``, ``category``): each answered
    by the records ``answers_of`` maps its evidence turn ids to, in those records'
    sessions; a question no record answers is left out."""
    session_of = {u: s for u, s, _ in turns}
    out: list[Question] = []
    for n, q in enumerate(qa):
        answers = answers_of(evidence_ids(q.get("evidence") or []))
        if not answers:
            continue
        category = categories.get(q.get("category"), str(q.get("category")))
        sessions = {session_of[a] for a in answers}
        out.append(Question(f"{name}#{n}", q["question"], answers, sessions, category))
    return out


def dated_conversation(
    name: str,
    turns: list[tuple[str, str, str]],
    times: list[datetime | None],
    speakers: list[str] | None = None,
) -> Conversation:
    """A conversation whose turns each keep their session's date (``times``), the
    questions asked a day after the last session; when a date is missing, none at all
    (a store a second apart)."""
    dated = [t for t in times if t is not None]
    whole = bool(dated) and len(dated) == len(times)
    return Conversation(
        name,
        turns,
        times=dated if whole else None,
        asked=max(dated) + timedelta(days=1) if whole else None,
        speakers=speakers,
    )


_RANGE = r"D(\d+):(\d+)\s*-\s*D?(\d+)?:?(\d+)"


def evidence_ids(items: list[str]) -> list[str]:
    """Turn ids from evidence strings: ``D3:5``, lists of them, and ranges ``D3:5-D3:8``."""
    found: list[str] = []
    for item in map(str, items):
        for m in re.finditer(_RANGE, item):
            s1, a, s2, b = int(m[1]), int(m[2]), int(m[3] or m[1]), int(m[4])
            if s1 == s2 and 0 <= b - a <= 40:
                found += [f"D{s1}:{n}" for n in range(a, b + 1)]
        rest = re.sub(_RANGE, " ", item)
        found += [f"D{m[1]}:{m[2]}" for m in re.finditer(r"D(\d+):(\d+)", rest)]
    return list(dict.fromkeys(found))


# ---------------------------------------------------------------- LongMemEval


def longmemeval(path: Path, per_category: int, wide: int = 0) -> dict[str, list[Conversation]]:
    """One conversation per question (its own haystack), sampled per type and slice;
    with ``wide``, each haystack filled to ``wide`` sessions from the other questions'
    (:func:`widened`)."""
    everything = json.loads(path.read_text())
    pool = _filler_pool(everything) if wide else {}
    picked: dict[tuple[str, str], list[dict]] = {}
    for item in everything:
        qid = str(item["question_id"])
        if qid.endswith("_abs"):
            continue
        part = TUNING if _sha(qid) % 2 == 0 else HELD_OUT
        picked.setdefault((part, item["question_type"]), []).append(item)
    out: dict[str, list[Conversation]] = {TUNING: [], HELD_OUT: []}
    for (part, _), items in sorted(picked.items()):
        items.sort(key=lambda it: _sha("pick:" + str(it["question_id"])))
        chosen = items[:per_category]
        out[part] += [haystack(widened(it, pool, wide) if wide else it) for it in chosen]
    return out


def _dates(item: dict) -> list[str | None]:
    """Each haystack session's date as the file writes it (None each, without dates)."""
    return item.get("haystack_dates") or [None] * len(item["haystack_session_ids"])


def _filler_pool(items: list[dict]) -> dict[str, tuple[list[dict], str | None]]:
    """Every session of the file that answers no question: its turns and date, by id."""
    answering = {str(s) for it in items for s in it.get("answer_session_ids") or []}
    pool: dict[str, tuple[list[dict], str | None]] = {}
    for it in items:
        dates = _dates(it)
        for sid, session, date in zip(
            it["haystack_session_ids"], it["haystack_sessions"], dates, strict=True
        ):
            sid = str(sid)
            if sid in answering or any(t.get("has_answer") for t in session):
                continue
            pool.setdefault(sid, (session, date))
    return pool


def widened(item: dict, pool: dict[str, tuple[list[dict], str | None]], total: int) -> dict:
    """``item`` with its haystack filled to ``total`` sessions from ``pool``, as
    LongMemEval_M widens LongMemEval_S's: the same question and evidence among ten times
    the sessions. The fillers are picked by a hash of the question and session ids (a
    stable pick), and each takes the date of one of the haystack's own sessions, so
    none comes after the question."""
    qid = str(item["question_id"])
    own = [str(s) for s in item["haystack_session_ids"]]
    dates = _dates(item)
    mine = set(own)
    fillers = sorted((s for s in pool if s not in mine), key=lambda s: _sha(f"{qid}:{s}"))
    fillers = fillers[: max(0, total - len(own))]
    return {
        **item,
        "haystack_session_ids": own + fillers,
        "haystack_sessions": list(item["haystack_sessions"]) + [pool[s][0] for s in fillers],
        "haystack_dates": list(dates) + [dates[_sha(s) % len(dates)] for s in fillers],
    }


def haystack(item: dict) -> Conversation:
    """A LongMemEval question's sessions as turns ``<session id>#<n>``; evidence turns are
    those marked ``has_answer``, evidence sessions the ``answer_session_ids``."""
    qid = str(item["question_id"])
    turns: list[tuple[str, str, str]] = []
    times: list[datetime | None] = []
    speakers: list[str] = []
    evidence: set[str] = set()
    dates = _dates(item)
    for sid, session, date in zip(
        item["haystack_session_ids"], item["haystack_sessions"], dates, strict=True
    ):
        at = _lme_date(date)
        for n, turn in enumerate(session):
            text = (turn.get("content") or "").strip()
            if not text:
                continue
            uid = f"{sid}#{n}"
            turns.append((uid, str(sid), text))
            times.append(at)
            speakers.append(str(turn.get("role") or "?"))
            if turn.get("has_answer"):
                evidence.add(uid)
    known = {s for _, s, _ in turns}
    sessions = {str(s) for s in item.get("answer_session_ids") or []} & known
    question = Question(qid, item["question"], evidence, sessions, item["question_type"])
    asked = _lme_date(item.get("question_date"))
    # Dates for every turn and the question, or none at all (a store a second apart).
    dated = [t for t in times if t is not None]
    whole = asked is not None and len(dated) == len(times)
    return Conversation(
        qid,
        turns,
        [question] if sessions or evidence else [],
        dated if whole else None,
        asked if whole else None,
        speakers,
    )


def _session_date(text: object) -> datetime | None:
    """A LoCoMo session's ``1:56 pm on 8 May, 2023`` or a REALTALK one's
    ``29.12.2023, 00:51:12``, as UTC (None if absent or unread)."""
    if not isinstance(text, str):
        return None
    for layout in ("%I:%M %p on %d %B, %Y", "%d.%m.%Y, %H:%M:%S"):
        try:
            return datetime.strptime(text.strip(), layout).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _lme_date(text: str | None) -> datetime | None:
    """LongMemEval's ``2023/05/20 (Sat) 02:21``, as UTC (None if absent or unread)."""
    if not text:
        return None
    try:
        return datetime.strptime(re.sub(r"\s*\(\w+\)", "", text).strip(), "%Y/%m/%d %H:%M").replace(
            tzinfo=UTC
        )
    except ValueError:
        return None


# ---------------------------------------------------------------- long replies

#: An assistant's sentences: ``{w}`` and ``{v}`` take words of the line it answers.
_REPLY = (
    "It sounds like {w} really matters to you, and that makes a lot of sense.",
    "If you would like, I can suggest a few more ideas about {w} and {v}.",
    "Many people find that {w} and {v} go well together when they plan ahead.",
    "Here are a few things to keep in mind about {w}: take it one step at a time.",
    "When it comes to {w}, a little preparation goes a long way.",
    "You might also consider how {v} fits into your week, alongside {w}.",
    "Thinking about {w} in terms of {v} can help you decide what to do next.",
    "A common approach to {w} is to start small and build a routine around it.",
    "Let me know if you want a checklist for {w}; I am happy to put one together.",
    "Some resources on {v} could be useful too, especially for beginners.",
    "That is a great question, and there are several ways to look at it.",
    "Everyone's situation is different, so adjust these suggestions as you see fit.",
    "Try to keep notes as you go, so you can see what works and what does not.",
    "Balancing your time and energy is important, so do not overcommit.",
    "In the end, what matters most is that it feels right for you.",
)


def long_replies(conv: Conversation) -> Conversation:
    """``conv`` with a long reply (~1,000 characters) after every line, as an assistant
    would write it: the line's own words said again among general advice. The
    questions and their answers are the original lines: a ranking that rewards length
    or lends a reply its neighbour's score puts the reply above the line that answers.
    First a stand-in for LongMemEval before its data could be had here; kept beside
    it, as a long-reply shape built from another set's questions."""
    turns: list[tuple[str, str, str]] = []
    for uid, session, text in conv.turns:
        turns.append((uid, session, text))
        words = [w for w in re.findall(r"[A-Za-z]{4,}", text) if w.lower() not in _COMMON]
        words = words or ["this"]
        seed = _sha(uid)
        parts: list[str] = []
        i = 0
        while sum(len(p) + 1 for p in parts) < 950:
            template = _REPLY[
                (seed >> (i % 40)) % len(_REPLY) if i < 3 else (seed + i * 7) % len(_REPLY)
            ]
            parts.append(
                template.format(w=words[i % len(words)], v=words[(i * 3 + 1) % len(words)])
            )
            i += 1
        turns.append((f"{uid}r", session, " ".join(parts)))
    # A reply is written a moment after its line: both at the line's date.
    times = [t for t in conv.times for _ in range(2)] if conv.times else None
    speakers = [w for who in conv.speakers for w in (who, "assistant")] if conv.speakers else None
    return Conversation(f"{conv.name}-long", turns, conv.questions, times, conv.asked, speakers)


_COMMON = frozenset(
    "that this with have what from they were been about your just really would there "
    "their will when them then than like also into some could know time very well "
    "yeah thanks thank sounds great good".split()
)
