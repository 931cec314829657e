"""The context's "Relevant memories" section: what recall finds for the task at hand.

``memwork context --query TEXT`` (MCP ``get_context(query=…)``,
``Memory.context(query=…)``) asks recall for the observations, episodes and
lessons that best answer TEXT and adds them, best first, one line each with its
sources. A lesson the context already lists, or one the agent no longer gets
(forgotten, superseded), is not repeated, and a hit scoring under a fifth of the
best one, or found only through the note beside it, is left out. The section
stands after the failures, before the task's own episodes; over the budget its
lines go after the episodes' and the lessons' and before the mistake cards',
the weakest hit first. Without a query nothing here runs, and the context is
what it always was.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from ...base.text import clip, ellipsize, one_line
from ...domain import readable
from .budget import Line, Section

if TYPE_CHECKING:
    from ...storage.store import Store
    from ..recall.follow import Recall

#: Hits kept (before the budget): enough to answer, few enough to read.
MAX_RELEVANT = 5
#: A hit weaker than this share of the best one is left out (a note found only through
#: its neighbour, or through one common word, is not worth an agent's tokens).
MIN_SHARE = 0.2
KINDS = {"observation", "episode", "lesson"}
LINE_CHARS = 300


def section(
    store: Store,
    query: str,
    *,
    now: datetime,
    shown_lessons: set[str],
    heading: str = "## Relevant memories",
    priority: float,
    indent: str = "",
    recall: Recall | None = None,
) -> Section:
    """The section for ``query`` (empty when nothing matches), its lines dropped over
    the budget as ``priority`` says and led by ``indent`` (each style places and
    lays them out as its own sections)."""
    from ..recall.follow import Recall
    from ..recall.search import scored_hits

    recall = recall or Recall()
    found = scored_hits(
        store,
        query,
        now=now,
        kinds=KINDS,
        limit=2 * MAX_RELEVANT,
        recall=recall,
        # Left out inside the ranking: a context listing thousands of lessons once asked
        # for as many more hits, past what a search may return.
        leave_out=frozenset(("lessons", ref) for ref in shown_lessons),
        # Only records holding a query word are listed (below): a fill would be read,
        # and the embedder loaded, for nothing.
        fill=False,
    )
    index = recall.index
    if index is None:
        found = []
    else:
        words = index.query_words(query)
        found = [f for f in found if index.own_match(f[1].slot, words)]
    out = Section("relevant", heading)
    floor = MIN_SHARE * found[0][1].score if found else 0.0

    def lines() -> list[Line]:
        # (May run twice: see Store.read.)
        made: list[Line] = []
        for hit, scored in found:
            if len(made) >= MAX_RELEVANT or scored.score < floor:
                break
            line = _line(store, hit.kind, hit.id, scored.table, shown_lessons, priority)
            if line is not None:
                line.text = indent + line.text
                made.append(line)
        return made

    out.lines.extend(store.read(lines))
    return out


def _line(
    store: Store, kind: str, ref: str, table: str, shown: set[str], priority: float
) -> Line | None:
    if kind == "lesson":
        lesson = readable.docs(store, "lessons").get(ref)
        if lesson is None or ref in shown or lesson.get("deleted") or lesson.get("superseded_by"):
            return None
        text = f"- Lesson: {ellipsize(one_line(lesson['content']), LINE_CHARS)}"
        return Line(text, priority, [{"kind": "lesson", "id": ref}])
    if kind == "episode":
        from .sources import episode

        doc = readable.docs(store, table).get(ref) if store.has_table(table) else None
        if doc is None:
            return None
        mistakes = "; ".join(one_line(m) for m in doc.get("mistakes") or [])
        text = one_line(doc.get("summary", "")) + (f" (mistakes: {mistakes})" if mistakes else "")
        day = str(doc.get("created_at", ""))[:10]
        head = (
            f"- Episode #{doc.get('index')} {doc.get('task_id')} ({day}, score {doc['score']:.2f})"
        )
        return Line(f"{head}: {ellipsize(text, LINE_CHARS)}", priority, [episode(doc)])
    if kind == "observation":
        session, _, oid = ref.partition("/")
        doc = readable.docs(store, table).get(oid) if store.has_table(table) else None
        if doc is None:
            return None
        sessions = readable.docs(store, "sessions")
        title = sessions.get(session, {}).get("title") or session
        when = str(doc.get("created_at", ""))[:16].replace("T", " ")
        content = ellipsize(one_line(doc["content"]), LINE_CHARS)
        text = f"- [{doc.get('kind', 'note')}, {clip(title, 40)}, {when}] {content}"
        return Line(text, priority, [{"kind": "observation", "id": oid, "session": session}])
    return None
