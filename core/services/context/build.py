"""``build_context``: the string an agent puts at the top of its next system prompt.

It reads only small tables and the incremental aggregates (never the episode
shards), so its cost does not grow with history. Every character it returns
has passed the scrubber.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from ...base.errors import InvalidInput, MemworkError
from ...base.text import ellipsize
from ...domain import aggregates, readable
from ...ledger import config, isolation, links
from ...privacy import scrub
from ...storage.store import Store
from ...storage.tables import rule_table
from . import default_style, episodic_style
from .budget import (
    CHARS_PER_TOKEN,
    DEFAULT_BUDGET,
    Dropped,
    Line,
    Section,
    could_stay,
    estimate_tokens,
    fit,
)

if TYPE_CHECKING:
    from ..recall.follow import Recall

Style = Literal["default", "episodic"]
#: core/domain/episodic_cards.py's document in ``meta`` (a test checks the two agree).
EPISODIC_CARDS = "episodic_cards"


class ContextResult:
    """The context and how it was made."""

    def __init__(
        self,
        text: str,
        style: str,
        task_id: str | None,
        budget_tokens: int | None,
        sections: list[Section],
        dropped: list[Dropped],
        log_wanted: bool = False,
        cut: list[Dropped] | None = None,
        tokens_needed: int | None = None,
    ) -> None:
        self.log_wanted = log_wanted
        """The store asks for injections to be recorded (setting ``context_log``)."""
        self.text = text
        self.style = style
        self.task_id = task_id
        self.budget_tokens = budget_tokens
        self.sections = sections
        self.dropped = dropped
        self.cut = cut or []
        """Lines shown cut short (with an ellipsis) because not one whole line fitted."""
        self.tokens_needed = estimate_tokens(text) if tokens_needed is None else tokens_needed
        """Estimated tokens of the whole context, nothing dropped."""

    def drop_note(self) -> str | None:
        """One line saying what the budget dropped (counts per section), or None.

        The CLI prints it on stderr, so an agent (or its developer) never mistakes a
        cut context for all there is.
        """
        if not self.dropped and not self.cut:
            return None
        counts: dict[str, int] = {}
        for line in self.dropped:
            counts[line.section] = counts.get(line.section, 0) + 1
        parts = ", ".join(f"{name.replace('_', ' ')} {n}" for name, n in counts.items())
        lines = "line" if len(self.dropped) == 1 else "lines"
        text = f"context over its budget of {self.budget_tokens} tokens (estimated): "
        text += f"dropped {len(self.dropped)} {lines}" + (f" ({parts})" if parts else "")
        if self.cut:
            text += "; the first line is cut short to fit"
        return text + f" (--budget {self.tokens_needed} keeps every line)"

    @property
    def tokens(self) -> int:
        """Estimated tokens of ``text`` (chars / 3)."""
        return estimate_tokens(self.text)

    def text_sources(self) -> list[list[dict[str, Any]]]:
        """The sources of each line of ``text`` (``text.split("\\n")``), in step with it;
        ``[]`` for headings and blank lines, which come from no record.

        The text is rendered from the sections' lines in order, so each line is
        matched to the next section line that reads the same.
        """
        pending = [line for section in self.sections for line in section.lines]
        out: list[list[dict[str, Any]]] = []
        at = 0
        for text in self.text.split("\n") if self.text else []:
            if at < len(pending) and pending[at].text == text:
                out.append(pending[at].sources)
                at += 1
            else:
                out.append([])
        return out

    def to_json(self) -> dict[str, Any]:
        """Every section with its token estimate, and exactly what the budget dropped."""
        render = episodic_style.render if self.style == "episodic" else default_style.render
        return {
            "budget_tokens": self.budget_tokens,
            "cut": [{"section": d.section, "line": d.text, "sources": d.sources} for d in self.cut],
            "dropped": [
                {"section": d.section, "line": d.text, "sources": d.sources} for d in self.dropped
            ],
            "estimated_tokens": self.tokens,
            "sections": [
                {
                    "heading": s.heading,
                    "lines": [line.text for line in s.lines],
                    "name": s.name,
                    # In step with "lines": the records each line came from.
                    "sources": [line.sources for line in s.lines],
                    "estimated_tokens": estimate_tokens(render([s])),
                }
                for s in self.sections
            ],
            "style": self.style,
            "task": self.task_id,
            "text": self.text,
            "token_estimate": "characters / 3 (an estimate, not a tokenizer count)",
        }


def rules_table(scope: str) -> str:
    """Where a scope's rules live (``core.domain.rules`` would pull in pydantic)."""
    return rule_table(scope)


def read_inputs(
    store: Store,
    task_id: str | None,
    *,
    sources: bool = True,
    project: str | None = None,
    agent: str | None = None,
) -> dict[str, Any]:
    """Everything the context needs, from small tables and aggregates only.

    With a ``project``: its profile and the summaries of its last ended sessions; with
    an ``agent`` (and no project), that agent's last ended sessions. The work items'
    frontier when the store has actions (of the project, when given).

    Lessons carry ``superseded_by`` from their links (a superseded lesson is never
    shown). With ``sources`` (the JSON format, the workbench), what each line came
    from follows the records' links: a rule's and a card's episodes, what a lesson
    or a slot links to; the text an agent reads every step needs none of it.
    """
    data, view = store.read(lambda: _inputs(store, task_id, sources, project, agent))
    return data if view is None else _isolated(data, view)


def _inputs(
    store: Store, task_id: str | None, sources: bool, project: str | None, agent: str | None
) -> tuple[dict[str, Any], str | None]:
    """:func:`read_inputs` inside its read of the store (which may run it twice: see
    :meth:`Store.read`), with whose records the caller may see."""
    scopes = [s for s in ("global", f"task:{task_id}" if task_id else None) if s]
    cards = list(readable.docs(store, "mistake_cards").values())
    rules = [r for s in scopes for r in readable.docs(store, rules_table(s)).values()]
    lessons = links.with_lesson_relations(store, readable.docs(store, "lessons").values())
    slots = list(readable.docs(store, "slots").values())
    if sources:
        cards = links.with_episode_ids(store, "mistake_cards", cards, links.SIGHTED_IN)
        rules = [
            rule
            for scope in scopes
            for rule in links.with_episode_ids(
                store,
                rules_table(scope),
                [r for r in rules if r["scope"] == scope],
                links.DERIVED_FROM,
            )
        ]
        lessons = links.with_targets(store, "lessons", lessons)
        slots = links.with_targets(store, "slots", slots)
    view = isolation.viewer(store)
    if sources and view is not None:
        # A line names only the records this caller may see as its sources.
        from ...domain.link_ops import Walls

        seen = Walls(store)
        cards, rules = seen.sources(cards), seen.sources(rules)
        lessons, slots = seen.sources(lessons), seen.sources(slots)
    data = {
        "actions": _frontier(store, project),
        "profile": _profile(store, project),
        "summaries": _summaries(store, project, agent, view),
        "cards": cards,
        # The episodic library's own 30 cards (core/domain/episodic_cards.py, which
        # this hot path does not import); None in a store written before them.
        "episodic_cards": (store.docs("meta").get(EPISODIC_CARDS) or {}).get("cards"),
        "glob": aggregates.read_global(store),
        "lessons": lessons,
        "rules": rules,
        "slots": slots,
        "task": aggregates.read_task(store, task_id) if task_id else None,
        # Settings live in ``meta``, which the aggregate read above loaded already.
        "context_log": config.is_on(store, "context_log"),
    }
    return data, view


def _isolated(data: dict[str, Any], view: str) -> dict[str, Any]:
    """What an isolated agent's context may show of the episode aggregates: its own and
    global episodes, failures and "(prior)" recalls, and its mean score over those."""

    def own(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [e for e in entries if isolation.sees(view, e.get("agent_id"))]

    glob = dict(data["glob"])
    glob["recent"] = own(glob.get("recent") or [])
    glob["recent_failures"] = own(glob.get("recent_failures") or [])
    glob["failure_kinds"] = {
        task: {
            kind: {**held, "entries": own(held.get("entries") or [])}
            for kind, held in kinds.items()
        }
        for task, kinds in (glob.get("failure_kinds") or {}).items()
    }
    task = data["task"]
    if task is not None:
        count, total = aggregates.visible_scores(task, view)
        mean = total / count if count > 0 else 0.0
        task = {**task, "episodes": count, "score_sum": total, "mean_score": mean}
        task["recent"] = own(task["recent"])
    return {**data, "glob": glob, "task": task}


def _frontier(store: Store, project: str | None) -> list[dict[str, Any]]:
    if not store.has_table("actions"):
        return []
    from ...domain.actions import context_lines

    return context_lines(store, project)


def _profile(store: Store, project: str | None) -> dict[str, Any] | None:
    if not project or not store.has_table("profiles"):
        return None
    from ...domain.profiles import find

    return find(store, project)


#: Past sessions whose summaries the context shows.
SUMMARIES = 3


def _summaries(
    store: Store, project: str | None, agent: str | None, view: str | None
) -> list[dict[str, Any]]:
    """The last :data:`SUMMARIES` ended sessions with a summary, of ``project`` (else of
    ``agent``), newest first by their end; only those ``view`` sees."""
    if not (project or agent) or not store.has_table("sessions"):
        return []
    sessions = readable.docs(store, "sessions").values()
    seen = [d for d in sessions if isolation.sees(view, d.get("agent_id"))]
    if project:
        mine = [d for d in seen if d.get("project") == project]
    else:
        mine = [d for d in seen if d.get("agent_id") == agent]
    ended = [d for d in mine if d.get("status") == "ended" and d.get("summary")]
    ended.sort(key=lambda d: (d.get("ended_at") or "", d["id"]), reverse=True)
    return ended[:SUMMARIES]


def _scrubbed(sections: list[Section], budget_tokens: int | None) -> list[Section]:
    """``sections`` with their text scrubbed, but for lines the budget will surely drop
    (:func:`budget.could_stay`): those keep their stored text, marked to be scrubbed if
    they are ever shown (a store with thousands of lessons shows a few dozen, and
    scrubbing the rest was a quarter of a ``memwork context``)."""
    # Slots are curated: personal details a person put there stay; secrets never do.
    personal = [s.name not in ("slots", "profile") for s in sections]
    scrubbed: dict[tuple[int, int], str] = {}

    def shown(n: int, i: int) -> str:
        text = scrubbed.get((n, i))
        if text is None:
            text = scrubbed[n, i] = scrub(sections[n].lines[i].text, personal=personal[n])
        return text

    if budget_tokens is not None:
        could_stay(sections, budget_tokens, shown)
    out = []
    for n, s in enumerate(sections):
        lines = []
        for i, line in enumerate(s.lines):
            if budget_tokens is None or (n, i) in scrubbed:
                text, later = shown(n, i), None
            else:  # surely dropped: scrubbed only if it is ever shown
                text, later = line.text, personal[n]
            lines.append(Line(text, line.priority, line.sources, line.group, later))
        heading = scrub(s.heading, personal=personal[n]) if s.heading else None
        out.append(Section(s.name, heading, lines))
    return out


def build_context(
    store: Store,
    *,
    now: datetime,
    task_id: str | None = None,
    budget_tokens: int | None = None,
    style: str = "default",
    project: str | None = None,
    sources: bool = True,
    agent: str | None = None,
    query: str | None = None,
    recall: Recall | None = None,
    max_rules: int | None = None,
    max_recent: int | None = None,
) -> ContextResult:
    """Build the context for ``task_id`` within ``budget_tokens`` (estimated).

    Without a budget the default style keeps to :data:`DEFAULT_BUDGET` tokens and the
    episodic style to none. ``project`` makes that project's lessons (scope
    ``project:<P>``) rank as matching, leaves other projects' lessons out, and brings the
    project's profile and its last sessions' summaries; without a project, ``agent``'s
    last sessions' summaries come instead. ``sources=False`` leaves out what lines came
    from beyond the records themselves (the text needs none of it). ``query`` adds the
    memories most relevant to it (:mod:`core.services.context.relevant`; ``recall`` is a
    long-lived caller's index). ``max_rules`` and ``max_recent`` are the episodic
    library's knobs (rules per rules section, the task's recent episodes; 5 and 3 when
    not given): the episodic style's alone.
    """
    if style not in ("default", "episodic"):
        raise InvalidInput("style", f"must be 'default' or 'episodic' (got {style!r})")
    episodic_knobs(style, max_rules=max_rules, max_recent=max_recent)
    if budget_tokens is not None and budget_tokens < 0:
        raise InvalidInput("budget", f"must be >= 0 (got {budget_tokens})")
    if budget_tokens is None and style == "default":
        budget_tokens = DEFAULT_BUDGET
    task_id = task_id.strip() if task_id else None
    project = project.strip() if project else None
    data = read_inputs(
        store, task_id or None, sources=sources, project=project or None, agent=agent or None
    )
    # Multi-line secrets (PEM blocks) must be seen whole, so slots are scrubbed
    # before they are split into lines; every line is scrubbed again below.
    data["slots"] = [
        {**s, "content": scrub(s.get("content", ""), personal=False)} for s in data["slots"]
    ]
    if data["profile"]:
        data["profile"] = {
            **data["profile"],
            "content": scrub(data["profile"].get("content", ""), personal=False),
        }
    if style == "episodic":
        sections = episodic_style.build_sections(
            data, task_id, max_rules=max_rules, max_recent=max_recent
        )
        render = episodic_style.render
    else:
        sections = default_style.build_sections(data, task_id, now, project or None)
        render = default_style.render
    if query and query.strip():
        from .relevant import section

        shown = {
            ref["id"]
            for s in sections
            for line in s.lines
            for ref in line.sources
            if ref.get("kind") == "lesson"
        }
        # The episodic style lists its items indented under a plain heading.
        if style == "episodic":
            heading, priority, indent = "Relevant memories:", episodic_style.P_RELEVANT, "  "
        else:
            heading, priority, indent = "## Relevant memories", default_style.P_RELEVANT, ""
        found = section(
            store,
            query,
            now=now,
            shown_lessons=shown,
            heading=heading,
            priority=priority,
            indent=indent,
            recall=recall,
        )
        # After the failures, before the task's own episodes and mean score.
        at = next(
            (i for i, s in enumerate(sections) if s.name in ("episodes", "mean_score")),
            len(sections),
        )
        sections.insert(at, found)
    scrubbed = [s for s in _scrubbed(sections, budget_tokens) if s.lines]
    dropped: list[Dropped] = []
    cut: list[Dropped] = []
    if budget_tokens is None:
        kept = scrubbed
    else:
        kept, dropped, cut = fit(scrubbed, budget_tokens, render)
    text = render(kept)
    if cut and budget_tokens is not None:
        # Even the headings above the first line do not fit: the text itself is cut (the
        # sections in the JSON document still show what it was cut from).
        text = ellipsize(text, max(1, budget_tokens * CHARS_PER_TOKEN))
    return ContextResult(
        text=text,
        style=style,
        task_id=task_id,
        budget_tokens=budget_tokens,
        sections=kept,
        dropped=dropped,
        log_wanted=bool(data["context_log"]),
        cut=cut,
        # Lines the budget surely dropped count as stored: never shown, never scrubbed.
        tokens_needed=estimate_tokens(render(scrubbed)) if dropped or cut else None,
    )


def episodic_knobs(style: str, *, max_rules: int | None, max_recent: int | None) -> None:
    """Refuse the episodic library's knobs where they mean nothing, or below 1 (that
    library would read 0 as "all of them")."""
    for name, value in (("max_rules", max_rules), ("max_recent", max_recent)):
        if value is None:
            continue
        if style != "episodic":
            raise InvalidInput(name, "applies to the episodic style only (style episodic)")
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidInput(name, f"must be a whole number >= 1 (got {value!r})")


def for_agent(
    store: Store,
    *,
    now: datetime,
    actor: str,
    task: str | None = None,
    project: str | None = None,
    budget: int | None = None,
    style: str = "default",
    format: str = "text",  # noqa: A002 - the CLI's flag name
    on_log_error: Callable[[MemworkError], None] | None = None,
    on_dropped: Callable[[str], None] | None = None,
    query: str | None = None,
    max_rules: int | None = None,
    max_recent: int | None = None,
) -> str | dict[str, Any]:
    """The context an agent asks for, as every door returns it: the text, or with
    ``format="json"`` the sections with their sources and what the budget dropped.
    Without a ``budget`` the default style keeps to :data:`DEFAULT_BUDGET` and the
    episodic style to none.

    While the store's ``context_log`` is on, the lessons and slots it injected are
    recorded (as ``actor``); a store that cannot take that write still gives its
    context, and ``on_log_error`` hears why. ``on_dropped`` hears, in one line, what
    the budget dropped (the CLI prints it on stderr), when it dropped anything.
    """
    if format not in ("text", "json"):
        raise InvalidInput("format", f"must be 'text' or 'json' (got {format!r})")
    if budget is None:
        from ...base.env_settings import configured_token_budget

        budget = configured_token_budget()
    if query is not None:
        from ..recall.search import check_query

        check_query(query)
    agent = actor.partition(":")[2] or None
    if query and query.strip():
        from ...base.no_wait import taken
        from ..recall.search import kept_recall

        lock, recall = kept_recall(store)
        with taken(lock):
            result = build_context(
                store,
                now=now,
                task_id=task,
                budget_tokens=budget,
                style=style,
                project=project,
                sources=format == "json",
                agent=agent,
                query=query,
                recall=recall,
                max_rules=max_rules,
                max_recent=max_recent,
            )
    else:
        result = build_context(
            store,
            now=now,
            task_id=task,
            budget_tokens=budget,
            style=style,
            project=project,
            sources=format == "json",
            agent=agent,
            max_rules=max_rules,
            max_recent=max_recent,
        )
    dropped = result.drop_note()
    if dropped and on_dropped is not None:
        on_dropped(dropped)
    if result.log_wanted:
        from .log import record_injections

        try:
            record_injections(store, result, now=now, actor=actor)
        except MemworkError as exc:
            if on_log_error is not None:
                on_log_error(exc)
    return result.to_json() if format == "json" else result.text
