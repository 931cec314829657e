"""LoCoMo's observations: the facts a memory layer draws from each session, as records.

``locomo10.json`` (github.com/snap-research/LoCoMo, CC BY-NC 4.0) carries beside each
conversation the facts a model drew from each of its sessions, one short sentence in the
third person each ("Melanie painted a lake sunrise last year which holds special meaning
to her."), each citing the turn it came from (``D1:14``). An agent that observes what it
learns, rather than keeping the whole talk, stores memory of this shape: ~250 facts a
conversation, ~90 characters each, every one naming whom it is about, so a person's name
says little and the one telling word ranks.

A fact answers a question when a turn it cites is among the question's evidence; the
questions none of whose evidence turns a fact cites (about one in six) are left out.
Each fact keeps its session (the session level is measured) and its session's date, and
within a session the facts follow the turns they cite. The slices are LoCoMo's own:
the conversations at even positions tune, the odd ones are held out.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

from recall_sets import (
    HELD_OUT,
    LOCOMO_CATEGORIES,
    TUNING,
    Conversation,
    _session_date,
    cited_questions,
    dated_conversation,
    evidence_ids,
)


def load(path: Path) -> dict[str, list[Conversation]]:
    """Every conversation's facts, by slice (empty when the file is missing)."""
    if not path.exists():
        return {}
    out: dict[str, list[Conversation]] = {TUNING: [], HELD_OUT: []}
    for n, sample in enumerate(json.loads(path.read_text())):
        out[HELD_OUT if n % 2 else TUNING].append(facts(sample))
    return out


def _order(dia_ids: list[str]) -> tuple[int, int]:
    """Where the first turn a fact cites was said: (session, turn)."""
    for d in dia_ids:
        m = re.fullmatch(r"D(\d+):(\d+)", d)
        if m:
            return int(m[1]), int(m[2])
    return 1 << 30, 0


def facts(sample: dict) -> Conversation:
    """One conversation's facts as turns ``f<n>`` in their sessions, with the questions
    some fact answers."""
    name = f"{sample['sample_id']}-facts"
    conv = sample["conversation"]
    found: list[tuple[tuple[int, int], str, str, list[str], datetime | None]] = []
    for key, by_speaker in sample.get("observation", {}).items():
        session = re.fullmatch(r"session_(\d+)_observation", key)
        if not session or not isinstance(by_speaker, dict):
            continue
        at = _session_date(conv.get(f"session_{session[1]}_date_time"))
        for items in by_speaker.values():
            for item in items:
                text = str(item[0]).strip() if item else ""
                cited = item[1] if len(item) > 1 else []
                ids = evidence_ids(cited if isinstance(cited, list) else [str(cited)])
                if text:
                    found.append((_order(ids), session[1], text, ids, at))
    found.sort(key=lambda f: (int(f[1]), f[0]))
    turns = [(f"f{n}", session, text) for n, (_, session, text, _, _) in enumerate(found)]
    times = [at for *_, at in found]
    cites: dict[str, set[str]] = {}
    for n, (_, _, _, ids, _) in enumerate(found):
        for d in ids:
            cites.setdefault(d, set()).add(f"f{n}")
    out = dated_conversation(name, turns, times)
    out.questions += cited_questions(
        name,
        sample["qa"],
        turns,
        LOCOMO_CATEGORIES,
        lambda cited: set().union(*(cites.get(e, set()) for e in cited)),
    )
    return out
