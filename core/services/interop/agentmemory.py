"""``--format agentmemory``: the JSON export of agentmemory-style memory servers.

The document: ``version``, ``exportedAt``, ``sessions`` (list),
``observations`` (object: session id → list), ``memories`` (list),
``summaries`` (list), ``profiles`` (list), and in newer versions ``lessons``
and ``slots``. Field names vary between servers and versions, so each record
is read through a short list of aliases (camelCase and snake_case).

Mapping:

- **sessions** → sessions. ``id``/``sessionId``; ``project`` (else ``cwd``),
  ``agentId``, ``title``, ``startedAt``/``createdAt``, ``endedAt``, ``status``
  (active/running/open stay active; anything else, or an ``endedAt``, is
  ended), ``summary``. Ids are derived from the source id (stable, so
  importing the same file again reports clashes instead of duplicating).
- **observations** → observations of that session. Content is ``content`` or
  ``text``, else built from ``title``/``subtitle``, ``narrative``, ``facts`` and
  ``files``; kind from ``type``/``kind``; tags from ``tags`` + ``concepts``.
  Order: by timestamp when every observation has one, else file order. At
  most 500 per session are kept (the newest); the rest are counted in the
  session's ``dropped_observations``, as :mod:`core.domain.sessions` does. A session
  that observations (or summaries) point to but that ``sessions`` lacks is
  created (status ended, title = its id) rather than dropping them.
  Observations that are nothing but ``<private>`` spans are not stored (the
  note counts them).
- **memories** and **lessons** → lessons. ``content``/``text`` (a memory's
  ``title`` is put in front when the content does not already start with it);
  fingerprint via :func:`core.base.text.fingerprint`; scope ``global`` unless a
  ``project`` (→ ``project:<name>``) or a memwork-style ``scope``; confidence
  from ``confidence`` (0–1) or ``strength`` (agentmemory's 1–10 scale is
  divided by 10), default 0.5, clamped to 0–1; ``last_reinforced_at`` from
  ``lastReinforcedAt``, else ``updatedAt``, else ``createdAt``. Memories that
  are not the latest version (``isLatest: false``) are skipped and counted.
  Records of equal content and scope become one lesson (reinforced once per
  extra copy, highest confidence kept, tags merged).
- **summaries** with a session id → that session's ``summary`` (narrative and
  key decisions; the summary's title names an untitled session). Summaries
  without a session id → lessons tagged ``summary``.
- **profiles** → kept in the import note (project, summary, conventions,
  common errors, top concepts, counts); each convention and common error also
  becomes a lesson scoped to the project, tagged ``profile``.
- **slots** (list, or object label → slot) → slots: ``label``,
  ``content``/``value``, ``limit``/``sizeLimit``, ``description``,
  ``readOnly``/``read_only``. Labels follow :func:`core.services.interop.letta.map_label`;
  two slots with the same label (a project slot shadowing a global one) are
  prefixed with their scope (``global/…``, ``<project>/…``).

Timestamps may be ISO-8601 strings or epoch numbers (milliseconds; values
below 1e11 are taken as seconds). All text is scrubbed.

- **actions**, **actionEdges** and **relations** → work items and links, with
  every end mapped to the record it became here: see
  :mod:`core.services.interop.agentmemory_work`.

Other top-level keys (graph nodes, routines, …) are not imported; the note lists
them (``ignored_keys``) with their sizes (``not_imported``).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from ...base import ids
from ...base.clock import iso
from ...base.errors import InvalidInput
from ...base.text import fingerprint
from ...models.lesson import DEFAULT_CONFIDENCE, DEFAULT_DECAY_RATE
from ...models.session import MAX_OBSERVATIONS
from ...privacy import scrub
from . import agentmemory_read as readers
from .agentmemory_work import Work
from .bundle import Bundle
from .letta import dedupe_labels, flag, limit_of, map_label, slot_doc

#: Top-level keys the parser reads; anything else is listed as ignored in the note.
KEYS = (
    "version",
    "exportedAt",
    "exported_at",
    "sessions",
    "observations",
    "memories",
    "summaries",
    "profiles",
    "lessons",
    "slots",
    "pagination",
    "actions",
    "actionEdges",
    "action_edges",
    "relations",
    "memoryRelations",
    "memory_relations",
)
LESSON_MAX = 4000
KIND_MAX = 50
_ACTIVE = {"active", "running", "open", "in_progress", "started"}
_MEMWORK_SCOPE = re.compile(r"^(global|task:.+|project:.+)$")


# -- sniffing --------------------------------------------------------------------------
def looks_like(data: Any) -> bool:
    """Sniff: an agentmemory export (``exportedAt``, or sessions/observations/memories)."""
    if not isinstance(data, dict) or "agents" in data or "core_memory" in data:
        return False
    if "exportedAt" in data:
        return True
    found = {"sessions", "observations", "memories", "summaries"} & set(data)
    return isinstance(data.get("observations"), dict) and len(found) >= 2


# -- sessions and observations ------------------------------------------------------------
class _Session:
    """What the file says about one source session, gathered before any doc is built."""

    def __init__(self, source_id: str, where: str | None) -> None:
        self.source_id = source_id
        self.where = where  # None: created because something pointed to it
        self.project = ""
        self.agent = ""
        self.title = ""
        self.summary_parts: list[str] = []
        self.started: datetime | None = None
        self.ended: datetime | None = None
        self.status: str | None = None
        self.observations: list[tuple[datetime | None, int, dict[str, Any]]] = []
        #: Other moments that bound a session the file does not list (summary times).
        self.moments: list[datetime] = []
        self.obs_ids: set[str] = set()


def _read_session(item: dict[str, Any], where: str, sid: str) -> _Session:
    session = _Session(sid, where)
    session.project = readers.text(item, ("project", "projectName", "cwd"), where)
    session.agent = readers.text(item, ("agentId", "agent_id", "agent"), where)
    session.title = readers.text(item, ("title", "name"), where)
    summary = item.get("summary")
    if isinstance(summary, dict):  # some servers nest the summary record
        summary = summary.get("narrative") or summary.get("text")
    if summary is not None and not isinstance(summary, str):
        raise InvalidInput(f"{where}.summary", "must be a string")
    if summary and summary.strip():
        session.summary_parts.append(summary)
    session.started = readers.instant(
        item, ("startedAt", "started_at", "createdAt", "created_at", "timestamp"), where
    )
    session.ended = readers.instant(
        item, ("endedAt", "ended_at", "completedAt", "completed_at"), where
    )
    status = item.get("status")
    if status is not None and not isinstance(status, str):
        raise InvalidInput(f"{where}.status", f"must be a string (got {status!r})")
    session.status = status
    return session


def _observation_text(item: dict[str, Any], where: str) -> str:
    direct = readers.text(item, ("content", "text"), where)
    if direct.strip():
        return direct
    title = readers.text(item, ("title",), where).strip()
    subtitle = readers.text(item, ("subtitle",), where).strip()
    narrative = readers.text(item, ("narrative", "description", "summary"), where).strip()
    parts = []
    if title:
        parts.append(f"{title} — {subtitle}" if subtitle else title)
    if narrative and narrative != title:
        parts.append(narrative)
    parts.extend(f"- {fact}" for fact in readers.strings(item, ("facts",), where))
    files = readers.strings(item, ("files",), where)
    if files:
        parts.append("Files: " + ", ".join(files))
    return "\n".join(parts)


def _read_observation(
    item: Any, where: str, session: _Session, index: int
) -> tuple[datetime | None, int, dict[str, Any]] | None:
    item = readers.object_of(item, where)
    raw = _observation_text(item, where)
    if not raw.strip():
        raise InvalidInput(
            f"{where}.content", "must be a non-empty string (no content, text, narrative or title)"
        )
    content = scrub(raw).strip()
    if not content:
        return None  # only private spans: nothing may be stored
    kind = readers.text(item, ("type", "kind", "category"), where).strip() or "note"
    if len(kind) > KIND_MAX:
        raise InvalidInput(f"{where}.type", f"must be at most {KIND_MAX} characters")
    when = readers.instant(item, ("timestamp", "createdAt", "created_at", "time"), where)
    source_id = readers.ident(item, ("id", "observationId", "obs_id"), where) or f"#{index}"
    if source_id in session.obs_ids:  # a repeated id must not overwrite its twin
        source_id = f"{source_id}#{index}"
    session.obs_ids.add(source_id)
    doc = {
        "content": content,
        "kind": kind,
        "source_id": source_id,
        "tags": readers.strings(item, ("tags", "concepts"), where),
    }
    return when, index, doc


def _session_docs(
    sessions: list[_Session], fallback: datetime | None, now: datetime, bundle: Bundle
) -> dict[str, int]:
    """Session and observation docs; returns counts for the note.

    ``fallback`` (the export's time, if any) stands in for a session with no
    time at all; ids never depend on ``now``, so a re-import finds its clashes.
    """
    dropped_total = 0
    for session in sessions:
        obs = session.observations
        if obs and all(when is not None for when, _, _ in obs):
            obs = sorted(obs, key=lambda o: (o[0], o[1]))
        times = [when for when, _, _ in obs if when is not None]
        if session.where is None:  # a created session spans everything that names it
            times += session.moments
        known_start = session.started or (min(times) if times else None) or fallback
        start = known_start or now
        status = (session.status or "").strip().lower()
        ended_flag = (
            session.where is None
            or session.ended is not None
            or (bool(status) and status not in _ACTIVE)
        )
        end = None
        if ended_flag:
            end = session.ended or (max(times) if times else None) or start
        sid = readers.stable_id("ses", known_start, "session", session.source_id)
        kept = obs[-MAX_OBSERVATIONS:]
        dropped = len(obs) - len(kept)
        dropped_total += dropped
        last = start
        for seq, (when, _, item) in enumerate(obs, start=1):
            if seq <= dropped:
                continue
            moment = when or start
            last = max(last, moment)
            bundle.add(
                "observations",
                {
                    "after_end": end is not None and moment > end,
                    "content": item["content"],
                    "created_at": iso(moment),
                    "id": readers.stable_id(
                        "obs", when or known_start, "obs", session.source_id, item["source_id"]
                    ),
                    "kind": item["kind"],
                    "seq": seq,
                    "session_id": sid,
                    "tags": item["tags"],
                    "updated_at": iso(moment),
                },
            )
        summary = "\n\n".join(dict.fromkeys(p.strip() for p in session.summary_parts if p.strip()))
        bundle.add(
            "sessions",
            {
                "agent_id": scrub(session.agent).strip(),
                "created_at": iso(start),
                "dropped_observations": dropped,
                "ended_at": iso(end) if end is not None else None,
                "id": sid,
                "max_observations": MAX_OBSERVATIONS,
                "observation_count": len(kept),
                # Project names are often paths (/home/<user>/…): scrubbed like sessions.py does.
                "project": scrub(session.project).strip(),
                "started_at": iso(start),
                "status": "ended" if end is not None else "active",
                "summary": scrub(summary),
                "title": scrub(session.title).strip() or session.source_id,
                "updated_at": iso(max(last, end or start)),
            },
        )
    return {"observations_dropped_over_cap": dropped_total}


# -- lessons -----------------------------------------------------------------------------
def _scope(item: dict[str, Any], where: str) -> str:
    scope = item.get("scope")
    project = item.get("project")
    if scope is not None and not isinstance(scope, str):
        raise InvalidInput(f"{where}.scope", f"must be a string (got {scope!r})")
    if project is not None and not isinstance(project, str):
        raise InvalidInput(f"{where}.project", f"must be a string (got {project!r})")
    if scope and _MEMWORK_SCOPE.fullmatch(scope) and scope != "global":
        return scope
    if project and project.strip():
        return f"project:{scrub(project).strip()}"
    if scope in (None, "", "global", "project", "user", "session"):
        return "global"
    raise InvalidInput(f"{where}.scope", f"must be global, task:<id> or project:<name> ({scope!r})")


def _confidence(item: dict[str, Any], where: str) -> float:
    _, value = readers.number(item, ("confidence",), where)
    if value is None:
        _, strength = readers.number(item, ("strength", "importance"), where)
        if strength is None:
            return DEFAULT_CONFIDENCE
        # agentmemory rates memories 1–10; a 0–1 value is already a confidence.
        value = strength / 10 if strength > 1 else strength
    return min(1.0, max(0.0, value))


class _Lessons:
    """Lessons in file order, merged by (fingerprint, scope) as the store would."""

    def __init__(self, stamp: datetime) -> None:
        self.stamp = stamp
        self.by_key: dict[tuple[str, str], dict[str, Any]] = {}
        self.merged = 0
        #: Source memory (or lesson) id → the key of the lesson it became.
        self.sources: dict[str, tuple[str, str]] = {}

    def ids(self) -> dict[str, str]:
        """Source memory (or lesson) id → the id of the lesson it became."""
        return {source: self.by_key[key]["id"] for source, key in self.sources.items()}

    def add(
        self,
        item: dict[str, Any],
        where: str,
        content: str,
        *,
        extra_tags: list[str],
        content_key: str = "content",
        source_id: str | None = None,
    ) -> None:
        text = scrub(content).strip()
        if not text:
            raise InvalidInput(
                f"{where}.{content_key}", "is empty once its <private>…</private> parts are removed"
            )
        if len(text) > LESSON_MAX:
            raise InvalidInput(
                f"{where}.{content_key}",
                f"must be at most {LESSON_MAX} characters (got {len(text)})",
            )
        scope = _scope(item, where)
        created = (
            readers.instant(item, ("createdAt", "created_at", "timestamp"), where) or self.stamp
        )
        updated = readers.instant(item, ("updatedAt", "updated_at"), where) or created
        reinforced = (
            readers.instant(item, ("lastReinforcedAt", "last_reinforced_at"), where)
            or updated
            or created
        )
        key, reinforcements = readers.number(item, ("reinforcements", "reinforcementCount"), where)
        if reinforcements is None:
            reinforcements = 0
        if reinforcements < 0 or not float(reinforcements).is_integer():
            raise InvalidInput(f"{where}.{key}", "must be a whole number >= 0")
        key, decay = readers.number(item, ("decayRate", "decay_rate"), where)
        if decay is not None and not 0 <= decay <= 1:
            raise InvalidInput(f"{where}.{key}", f"must be between 0 and 1 per week (got {decay})")
        tags = sorted(set(extra_tags) | set(readers.strings(item, ("tags", "concepts"), where)))
        doc: dict[str, Any] = {
            "confidence": _confidence(item, where),
            "content": text,
            "created_at": iso(created),
            "decay_rate": DEFAULT_DECAY_RATE if decay is None else decay,
            "deleted": flag(item.get("deleted"), f"{where}.deleted"),
            "fingerprint": fingerprint(text),
            "id": ids.new_id("les"),
            "last_reinforced_at": iso(reinforced),
            "pinned": flag(item.get("pinned"), f"{where}.pinned"),
            "reinforcements": int(reinforcements),
            "scope": scope,
            "source": readers.SOURCE,
            "tags": tags,
            "updated_at": iso(updated),
            "wordings": [],
        }
        if source_id is not None:
            self.sources.setdefault(source_id, (doc["fingerprint"], scope))
        known = self.by_key.get((doc["fingerprint"], scope))
        if known is None:
            self.by_key[(doc["fingerprint"], scope)] = doc
            return
        # Same lesson twice in one file: one record, reinforced as a repeat would be.
        self.merged += 1
        known["reinforcements"] += 1 + doc["reinforcements"]
        known["confidence"] = max(known["confidence"], doc["confidence"])
        known["tags"] = sorted(set(known["tags"]) | set(doc["tags"]))
        known["last_reinforced_at"] = max(known["last_reinforced_at"], doc["last_reinforced_at"])
        known["updated_at"] = max(known["updated_at"], doc["updated_at"])
        known["pinned"] = known["pinned"] or doc["pinned"]
        known["deleted"] = known["deleted"] and doc["deleted"]
        if doc["content"] != known["content"] and doc["content"] not in known["wordings"]:
            known["wordings"].append(doc["content"])


def _memory_content(item: dict[str, Any], where: str) -> tuple[str, str]:
    key, _ = readers.first(item, ("content", "text", "narrative", "body"))
    content = readers.text(item, ("content", "text", "narrative", "body"), where).strip()
    title = readers.text(item, ("title", "name"), where).strip()
    if title and content and not content.lower().startswith(title.lower()):
        content = f"{title}: {content}"
    content = content or title
    if not content:
        raise InvalidInput(f"{where}.{key}", "must be a non-empty string")
    return content, key


# -- slots -------------------------------------------------------------------------------
def _slots(data: dict[str, Any], stamp: str, bundle: Bundle, note: dict[str, Any]) -> None:
    raw = data.get("slots")
    if raw is None:
        return
    if isinstance(raw, dict):
        items = [(f"slots.{label}", item, label) for label, item in raw.items()]
    elif isinstance(raw, list):
        items = [(f"slots[{n}]", item, None) for n, item in enumerate(raw, start=1)]
    else:
        raise InvalidInput("slots", "must be a list of slots (or an object label → slot)")
    entries = []
    for where, item, key in items:
        item = readers.object_of(item, where)
        raw_label = item.get("label", key)
        label = map_label(raw_label, f"{where}.label")
        assert isinstance(raw_label, str)  # map_label refuses anything else
        scope = item.get("scope")
        project = item.get("project")
        owner = "global"
        if scope == "project" or (isinstance(project, str) and project.strip()):
            owner = map_label(project, f"{where}.project") if project else "project"
            owner = owner.replace("/", "_")
        limit_key, limit = readers.first(item, ("limit", "sizeLimit", "size_limit"))
        entries.append(
            {
                "content": readers.text(item, ("content", "value"), where),
                "description": readers.text(item, ("description",), where),
                "label": label,
                "limit": limit_of(limit, f"{where}.{limit_key}"),
                "original": raw_label.strip(),
                "owner": owner,
                "pinned": item.get("pinned", True),
                "read_only": flag(item.get("readOnly", item.get("read_only")), f"{where}.readOnly"),
                "where": where,
            }
        )
    renamed: list[dict[str, str]] = []
    dedupe_labels(entries, renamed)
    over, unpinned = [], []
    for position, entry in enumerate(entries):
        doc = slot_doc(
            label=entry["label"],
            content=entry["content"],
            description=entry["description"],
            limit=entry["limit"],
            read_only=entry["read_only"],
            position=position,
            stamp=stamp,
        )
        if len(doc["content"]) > doc["limit"]:
            over.append(doc["label"])
        if entry["pinned"] is False:
            unpinned.append(doc["label"])
        bundle.add("slots", doc)
    if renamed:
        note["renamed_labels"] = renamed
    if over:
        note["slots_over_limit"] = over
    if unpinned:
        # memwork slots always lead the context; agentmemory could keep a slot unpinned.
        note["slots_unpinned_in_source"] = unpinned


# -- parsing -----------------------------------------------------------------------------
def parse(data: Any, *, now: datetime, source: str = "") -> Bundle:
    """Turn an agentmemory export (already JSON-decoded) into a bundle."""
    if not isinstance(data, dict):
        raise InvalidInput("document", "must be a JSON object (an agentmemory export)")
    bundle = Bundle("agentmemory")
    stamp = iso(now)
    note: dict[str, Any] = {}
    version = data.get("version")
    if version is not None:
        note["version"] = str(version)
    exported = readers.instant(data, ("exportedAt", "exported_at"), "document")
    if exported is not None:
        note["exported_at"] = iso(exported)
    if source:
        note["source"] = source

    # Sessions listed in the file.
    sessions: dict[str, _Session] = {}
    raw_sessions = data.get("sessions")
    if isinstance(raw_sessions, dict):  # tolerate {id: session}
        listed = [
            ({"id": k, **readers.object_of(v, f"sessions.{k}")}, f"sessions.{k}")
            for k, v in raw_sessions.items()
        ]
    else:
        listed = [
            (item, f"sessions[{n}]") for n, item in enumerate(readers.list_of(data, "sessions"), 1)
        ]
    for item, where in listed:
        item = readers.object_of(item, where)
        sid = readers.ident(item, ("id", "sessionId", "session_id"), where)
        if sid is None:
            raise InvalidInput(f"{where}.id", "is required (the session's id)")
        if sid in sessions:
            raise InvalidInput(f"{where}.id", f"repeats session {sid!r} ({sessions[sid].where})")
        sessions[sid] = _read_session(item, where, sid)

    def session_for(sid: str) -> _Session:
        if sid not in sessions:
            sessions[sid] = _Session(sid, None)
        return sessions[sid]

    # Observations, per session.
    raw_obs = data.get("observations")
    buckets: list[tuple[str, list[tuple[str, Any]]]] = []
    if isinstance(raw_obs, dict):
        for sid, items in raw_obs.items():
            if not isinstance(items, list):
                raise InvalidInput(f"observations.{sid}", "must be a list of observations")
            buckets.append(
                (str(sid), [(f"observations.{sid}[{n}]", o) for n, o in enumerate(items, 1)])
            )
    elif isinstance(raw_obs, list):  # tolerate a flat list whose items name their session
        grouped: dict[str, list[tuple[str, Any]]] = {}
        for n, item in enumerate(raw_obs, start=1):
            where = f"observations[{n}]"
            sid = readers.ident(readers.object_of(item, where), ("sessionId", "session_id"), where)
            if sid is None:
                raise InvalidInput(f"{where}.sessionId", "is required in a flat observation list")
            grouped.setdefault(sid, []).append((where, item))
        buckets = list(grouped.items())
    elif raw_obs is not None:
        raise InvalidInput("observations", "must be an object: session id → list of observations")
    private_only = 0
    for sid, items in buckets:
        session = session_for(sid)
        for index, (where, item) in enumerate(items):
            read = _read_observation(item, where, session, index)
            if read is None:
                private_only += 1
            else:
                session.observations.append(read)

    # Summaries: onto their session, or lessons when they name none.
    lessons = _Lessons(now)
    for n, item in enumerate(readers.list_of(data, "summaries"), start=1):
        where = f"summaries[{n}]"
        item = readers.object_of(item, where)
        title = readers.text(item, ("title",), where).strip()
        narrative = readers.text(item, ("narrative", "summary", "content", "text"), where).strip()
        decisions = readers.strings(item, ("keyDecisions", "key_decisions", "decisions"), where)
        sid = readers.ident(item, ("sessionId", "session_id"), where)
        if sid is None:
            body = narrative or title
            if not body:
                raise InvalidInput(f"{where}.narrative", "must be a non-empty string")
            text = f"{title}: {narrative}" if title and narrative else body
            lessons.add(item, where, text, extra_tags=["summary"], content_key="narrative")
            continue
        session = session_for(sid)
        parts = [narrative] if narrative else []
        if decisions:
            parts.append("Key decisions:\n" + "\n".join(f"- {d}" for d in decisions))
        session.summary_parts.extend(parts)
        if title and not session.title:
            session.title = title
        if not session.project:
            session.project = readers.text(item, ("project",), where)
        moment = readers.instant(item, ("createdAt", "created_at"), where)
        if moment is not None:
            session.moments.append(moment)

    created = [s.source_id for s in sessions.values() if s.where is None]
    counts = _session_docs(list(sessions.values()), exported, now, bundle)

    # Memories and lessons.
    skipped_versions = 0
    older: set[str] = set()
    memories = readers.list_of(data, "memories")
    for n, item in enumerate(memories, start=1):
        where = f"memories[{n}]"
        item = readers.object_of(item, where)
        source_id = readers.ident(item, ("id", "memoryId"), where)
        if item.get("isLatest") is False:
            skipped_versions += 1
            if source_id is not None:
                older.add(source_id)
            continue
        content, key = _memory_content(item, where)
        kind = readers.text(item, ("type", "kind", "category"), where).strip()
        lessons.add(
            item,
            where,
            content,
            extra_tags=[kind] if kind else [],
            content_key=key,
            source_id=source_id,
        )
    for n, item in enumerate(readers.list_of(data, "lessons"), start=1):
        where = f"lessons[{n}]"
        item = readers.object_of(item, where)
        content, key = _memory_content(item, where)
        source_id = readers.ident(item, ("id", "lessonId"), where)
        lessons.add(item, where, content, extra_tags=[], content_key=key, source_id=source_id)

    # Profiles: kept in the note; conventions and common errors become project lessons.
    raw_profiles = data.get("profiles")
    if isinstance(raw_profiles, dict):
        raw_profiles = list(raw_profiles.values())
    if raw_profiles is not None and not isinstance(raw_profiles, list):
        raise InvalidInput("profiles", "must be a list of project profiles")
    profiles = []
    for n, item in enumerate(raw_profiles or [], start=1):
        where = f"profiles[{n}]"
        item = readers.object_of(item, where)
        project = readers.text(item, ("project", "name"), where).strip()
        conventions = readers.strings(item, ("conventions",), where)
        errors = readers.strings(item, ("commonErrors", "common_errors"), where)
        scoped: dict[str, Any] = {"project": project} if project else {}
        profiled = readers.instant(item, ("updatedAt", "updated_at"), where)
        if profiled is not None:
            scoped["createdAt"] = iso(profiled)
        for text in conventions:
            lessons.add(scoped, f"{where}.conventions", text, extra_tags=["profile", "convention"])
        for text in errors:
            lessons.add(
                scoped, f"{where}.commonErrors", text, extra_tags=["profile", "common-error"]
            )
        profiles.append(
            {
                "common_errors": errors,
                "conventions": conventions,
                "project": scrub(project),
                "session_count": item.get("sessionCount"),
                "summary": scrub(readers.text(item, ("summary",), where)),
                "top_concepts": readers.strings(item, ("topConcepts",), where)[:20],
                "total_observations": item.get("totalObservations"),
            }
        )
    for doc in lessons.by_key.values():
        bundle.add("lessons", doc)

    _slots(data, stamp, bundle, note)

    # Work items and the relations between records, with ids mapped to this store's.
    work = Work(exported or now)
    work.add_actions(data, bundle)
    work.add_relations(data, lessons.ids(), older, memories)
    work.finish(bundle, note)

    if profiles:
        note["profiles"] = profiles
    if created:
        note["sessions_created"] = created
    if counts["observations_dropped_over_cap"]:
        note["observations_dropped_over_cap"] = counts["observations_dropped_over_cap"]
    if private_only:
        note["observations_private_only"] = private_only
    if skipped_versions:
        note["memories_older_versions_skipped"] = skipped_versions
    if lessons.merged:
        note["lessons_merged_duplicates"] = lessons.merged
    if isinstance(data.get("pagination"), dict):
        note["pagination"] = data["pagination"]  # a partial export: say so
    ignored = sorted(set(data) - set(KEYS))
    if ignored:
        note["ignored_keys"] = ignored
        note["not_imported"] = {
            k: len(data[k]) for k in ignored if isinstance(data[k], list | dict)
        }
    bundle.note = note
    return bundle
