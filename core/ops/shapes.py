"""What operations return, as JSON Schema: MCP output schemas, OpenAPI, ``Memory``'s types.

Each :class:`core.ops.operations.Op` names its result shape (``result="lesson"``);
this module says what that shape holds. Records are objects whose main fields
are listed and described; they may carry more (a record is its model's fields
plus computed ones, and new fields are added over time), so no shape forbids
other properties. Only the doors that describe themselves (MCP, HTTP, the code
generator) import this module; the CLI never does.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]


def _p(kind: str | list[str], description: str, **extra: Any) -> Schema:
    return {"type": kind, "description": description, **extra}


def _obj(description: str, props: dict[str, Schema], required: tuple[str, ...] = ()) -> Schema:
    shape: Schema = {"type": "object", "description": description, "properties": props}
    if required:
        shape["required"] = list(required)
    return shape


def _list(description: str, item: Schema) -> Schema:
    return {"type": "array", "description": description, "items": item}


_STR, _INT, _NUM, _BOOL = "string", "integer", "number", "boolean"
_STRS = {"type": "array", "items": {"type": "string"}}
_TIMES = {
    "created_at": _p(_STR, "when it was created (UTC, ISO 8601)"),
    "updated_at": _p(_STR, "when it last changed (UTC, ISO 8601)"),
}


def _id(what: str) -> Schema:
    return _p(_STR, f"the {what}'s id")


LESSON = _obj(
    "A lesson with its computed fields.",
    {
        "id": _id("lesson"),
        "content": _p(_STR, "the lesson, one imperative line"),
        "scope": _p(_STR, "global, task:<task id> or project:<project>"),
        "confidence": _p(_NUM, "stored confidence, 0-1"),
        "effective_confidence": _p(_NUM, "confidence after decay at the caller's now"),
        "reinforcements": _p(_INT, "how many times it was reinforced"),
        "tags": {**_STRS, "description": "its tags"},
        "pinned": _p(_BOOL, "pinned lessons do not decay"),
        "forgotten": _p(_BOOL, "decayed away or forgotten (hidden, restorable)"),
        "state": _p(_STR, "live, pinned, forgotten, deleted or superseded"),
        "last_reinforced_at": _p(_STR, "when its decay clock last restarted"),
        "wordings": {**_STRS, "description": "other wordings it absorbed"},
        "superseded_by": _p([_STR, "null"], "the lesson that replaced it"),
        "effect": _p(
            ["object", "null"],
            "for a task lesson: the task's mean score before and after it was written",
        ),
        "contradicts": {**_STRS, "description": "live lessons it negates (show, add)"},
        **_TIMES,
    },
    ("id", "content"),
)
PROPOSED = _p(_BOOL, "true when an agent's write became a proposal waiting for review")
_PROPOSAL_PROPS: dict[str, Schema] = {
    "id": _id("proposal"),
    "kind": _p(_STR, "lesson, card, slot, rule, config or checkpoint"),
    "op": _p(_STR, "add, edit, set, append, replace or restore"),
    "target": _p(
        _STR,
        "the lesson's or rule's scope, the edited record's id, the slot's label, the setting "
        "or the checkpoint",
    ),
    "args": _p("object", "the write's arguments, scrubbed"),
    "status": _p(_STR, "pending, approved, rejected or merged"),
    "proposed_by": _p(_STR, "the agent's audit actor"),
    "change": _p(_STR, "what it would change, in one line"),
    "flags": {**_STRS, "description": "what a reviewer should know (near-duplicate, ...)"},
    "result": _p(_STR, "what the decision did, in one line"),
    **_TIMES,
}
PROPOSAL = _obj("A proposal waiting for (or decided by) a person.", _PROPOSAL_PROPS, ("id",))


def _or_proposed(shape: Schema) -> Schema:
    """A reviewed write's result: the record, or (``proposed: true``) the proposal."""
    props = {**_PROPOSAL_PROPS, **shape["properties"], "proposed": PROPOSED}
    return _obj(
        shape["description"]
        + ' While review is on, an agent\'s write returns the proposal instead ("proposed": '
        "true).",
        props,
        ("id",),
    )


SESSION = _obj(
    "A session: one run of an agent.",
    {
        "id": _id("session"),
        "agent_id": _p(_STR, "the agent that ran it"),
        "project": _p(_STR, "its project"),
        "title": _p(_STR, "its title"),
        "status": _p(_STR, "active or ended"),
        "summary": _p(_STR, "what happened (when ended)"),
        "started_at": _p(_STR, "when it started"),
        "ended_at": _p([_STR, "null"], "when it ended"),
        "implicit": _p(_BOOL, "created by the first use of an agent's own id"),
        "observation_count": _p(_INT, "observations kept"),
        "dropped_observations": _p(_INT, "oldest observations dropped past the cap"),
        **_TIMES,
    },
    ("id",),
)
OBSERVATION = _obj(
    "An observation: something an agent saw or did in a session.",
    {
        "id": _id("observation"),
        "session_id": _p(_STR, "its session"),
        "seq": _p(_INT, "its number in the session"),
        "kind": _p(_STR, "tool, note, error, decision, ..."),
        "content": _p(_STR, "what was seen or done (redacted)"),
        "tags": {**_STRS, "description": "its tags"},
        "after_end": _p(_BOOL, "recorded after its session ended"),
        "dropped": _p(_INT, "older observations dropped to make room (on a write)"),
        **_TIMES,
    },
    ("id",),
)
RULE = _obj(
    "A one-line rule for a task or for every task.",
    {
        "id": _id("rule"),
        "text": _p(_STR, "the rule ([WORKS], [AVOID], [HIGH SCORE …] or manual)"),
        "scope": _p(_STR, "global or task:<task id>"),
        "polarity": _p(_STR, "works, avoid or note"),
        "source": _p(_STR, "derived, consolidated, manual or imported"),
        "active": _p(_BOOL, "whether contexts show it"),
        "outcome": _p(_STR, "on add: added, unchanged or reactivated"),
        **_TIMES,
    },
    ("id",),
)
CARD = _obj(
    "A mistake card, merged across episodes.",
    {
        "id": _id("mistake card"),
        "mistake_type": _p(_STR, "a short class-like label"),
        "task_id": _p(_STR, "the task it happened in"),
        "bad_decision": _p(_STR, "what was done"),
        "correct_decision": _p(_STR, "what should have been done"),
        "lesson": _p(_STR, "the lesson (300 characters at most)"),
        "evidence": _p(_STR, "the evidence (300 characters at most)"),
        "seen_count": _p(_INT, "how many episodes made it"),
        "first_seen_episode": _p(_INT, "index of the first episode"),
        "last_seen_episode": _p(_INT, "index of the latest episode"),
        "merged_from": {**_STRS, "description": "cards merged into it"},
        **_TIMES,
    },
    ("id",),
)
SLOT = _obj(
    "A pinned slot: text that leads every context.",
    {
        "id": _id("slot"),
        "label": _p(_STR, "its label"),
        "content": _p(_STR, "its text"),
        "description": _p(_STR, "what belongs in it"),
        "limit": _p(_INT, "its limit in characters"),
        "chars": _p(_INT, "its size in characters"),
        "over_limit": _p(_BOOL, "bigger than its limit (an import kept it whole)"),
        "read_only": _p(_BOOL, "edits are refused until it is unlocked"),
        "position": _p(_INT, "its place in the context's order (0 first)"),
        "replaced": _p(_INT, "on replace: occurrences replaced"),
        **_TIMES,
    },
    ("id",),
)
WM_KEY = _obj(
    "A working-memory key's entry.",
    {
        "key": _p(_STR, "the key"),
        "value": {"description": "the value as set (strings redacted)"},
        "set_at": _p(_STR, "when it was set"),
        "expires_at": _p([_STR, "null"], "when it disappears (with a TTL)"),
        "ttl_remaining": _p([_NUM, "null"], "seconds left at the caller's now"),
        "scope": _p(
            [_STR, "null"],
            "where it came from: session, or the agent:<A> / project:<P> scope (null: no such "
            "key, for a get with a default or a delete with missing_ok)",
        ),
        "found": _p(_BOOL, "wm get: whether the key is live (false: the value is the default)"),
        "deleted": _p(_BOOL, "wm delete: whether a key was deleted (false with missing_ok)"),
        "using_fallback": _p(_BOOL, "present (true) while kept in process memory"),
    },
    ("key",),
)
WM_TASK = _p(
    ["object", "null"],
    "The session's task state (null when it has none).",
    properties={
        "task_id": _p(_STR, "the task"),
        "description": _p(_STR, "what it is"),
        "status": _p(_STR, "its status"),
        "current_step": _p([_INT, "null"], "the current step"),
        "total_steps": _p([_INT, "null"], "the number of steps"),
        "progress_percent": _p(_NUM, "percent done, 0-100"),
        "progress_given": _p(_BOOL, "progress was given rather than derived"),
    },
)
SCRATCH = _obj(
    "A scratchpad note.",
    {
        "ts": _p(_STR, "when it was written"),
        "text": _p(_STR, "the note"),
        "dropped": _p(_INT, "on add: oldest entries dropped past the capacity"),
    },
)
WM_CHECKPOINT = _obj(
    "A working-memory checkpoint.",
    {
        "id": _id("checkpoint"),
        "session_id": _p(_STR, "its session"),
        "description": _p(_STR, "what it is for"),
        "keys": _p(_INT, "keys it holds"),
        "scratch_entries": _p(_INT, "scratchpad notes it holds"),
        "has_task": _p(_BOOL, "whether it holds a task state"),
        "created_at": _p(_STR, "when it was taken"),
    },
    ("id",),
)
CHECKPOINT = _obj(
    "A store checkpoint: a copy of every table but the audit log.",
    {
        "id": _id("checkpoint (a uuid4)"),
        "description": _p(_STR, "what it is for"),
        "counts": _p("object", "records per table"),
        "automatic": _p(_BOOL, "taken by a restore (restoring it undoes the restore)"),
        "created_at": _p(_STR, "when it was taken"),
    },
    ("id",),
)
ACTION = _obj(
    "A work item.",
    {
        "id": _id("action"),
        "title": _p(_STR, "what to do"),
        "status": _p(_STR, "pending, active, blocked, done or cancelled"),
        "priority": _p(_INT, "higher goes first"),
        "session_id": _p(_STR, "the session it belongs to ('' for none)"),
        "project": _p(_STR, "the project it belongs to ('' for none)"),
        "agent_id": _p(_STR, "the agent that added it"),
        "notes": _list("timestamped notes, oldest first", {"type": "object"}),
        "after": {**_STRS, "description": "the actions it waits for"},
        "waiting_for": {**_STRS, "description": "those not done yet"},
        "workable": _p(_BOOL, "on the frontier: pending or active, every dependency done"),
        "closed_at": _p([_STR, "null"], "when it became done or cancelled"),
        **_TIMES,
    },
    ("id",),
)
PROFILE = _obj(
    "A project's profile.",
    {
        "id": _id("profile"),
        "project": _p(_STR, "the project"),
        "content": _p(_STR, "what the project is"),
        "limit": _p(_INT, "its limit in characters"),
        "chars": _p(_INT, "its size in characters"),
        "over_limit": _p(_BOOL, "longer than its limit"),
        **_TIMES,
    },
    ("id",),
)
LINK = _obj(
    "A link: record `from` stands in relation `kind` to `to`.",
    {
        "id": _id("link"),
        "kind": _p(_STR, "the relation (about, after, derived_from, sighted_in, ...)"),
        "from": _p(_STR, "the record it starts from"),
        "to": _p(_STR, "the record it points to, or task:T, project:P, file:PATH, url:U"),
        "note": _p(_STR, "why"),
        "created": _p(_BOOL, "made by this call (false: it already existed)"),
        **_TIMES,
    },
    ("id",),
)
_END = _obj(
    "One end of a link.",
    {
        "kind": _p(_STR, "its kind"),
        "id": _p(_STR, "its id"),
        "title": _p(_STR, "its title"),
        "exists": _p(_BOOL, "whether it is still in the store"),
    },
)
EPISODE_IDS = _obj(
    "The recorded episodes' ids, in order, and what was read as the episodic library reads it.",
    {
        "ids": {**_STRS, "description": "the new episodes' ids"},
        "warnings": {
            **_STRS,
            "description": "each input read as the episodic library reads it, naming the item "
            "and the field (a missing score taken as 0.0, ...)",
        },
    },
    ("ids",),
)
CRASH = _obj(
    "A crash report, recorded: the failed episode it is counted on.",
    {
        "episode_id": _id("failed episode"),
        "index": _p(_INT, "the episode's number"),
        "task_id": _p(_STR, "the task"),
        "error_type": _p(_STR, "the report's error class"),
        "fingerprint": _p([_STR, "null"], "the report's fingerprint, scrubbed"),
        "count": _p(_INT, "how many reports with this fingerprint came in"),
        "repeated": _p(_BOOL, "the fingerprint was seen before: counted, not recorded again"),
        "first_seen_at": _p(_STR, "when it was first recorded"),
        "last_seen_at": _p(_STR, "when it was last reported"),
    },
    ("episode_id", "count", "repeated"),
)
HIT = _obj(
    "A search hit.",
    {
        "kind": _p(_STR, "lesson, rule, card, episode, observation, slot, wm, session, checkpoint"),
        "id": _p(_STR, "the record's id (get_record reads it whole)"),
        "title": _p(_STR, "the line that shows it"),
        "score": _p(_NUM, "relevance within this query"),
        "filled": _p(_BOOL, "holds no query word (a fill)"),
    },
    ("kind", "id"),
)
AUDIT = _obj(
    "An audit entry.",
    {
        "seq": _p(_INT, "its number in the log"),
        "ts": _p(_STR, "when"),
        "actor": _p(_STR, "who: tui, cli, api, mcp, http (with the agent id)"),
        "action": _p(_STR, "what was done"),
        "table": _p(_STR, "the table it touched"),
        "record_id": _p(_STR, "the record it touched"),
        "summary": _p(_STR, "one line"),
    },
    ("seq",),
)
CONFIG_ROW = _obj(
    "A store setting.",
    {
        "key": _p(_STR, "the setting"),
        "value": _p(_STR, "its value"),
        "default": _p(_STR, "its default"),
        "set": _p(_BOOL, "whether it was set (else the default applies)"),
        "help": _p(_STR, "what it does"),
    },
    ("key",),
)

#: Shape name → JSON Schema. Objects go out as they are; an MCP tool whose shape is
#: not an object wraps its result as ``{"result": …}`` (MCP wants an object).
SHAPES: dict[str, Schema] = {
    "context": _p(
        [_STR, "object"],
        "The context text (format text), or its sections with their sources and what the "
        "budget dropped (format json).",
    ),
    "episode_ids": EPISODE_IDS,
    "forgotten": _obj(
        "What a forget removed for good.",
        {
            "kind": _p(_STR, "session, observation or lesson"),
            "id": _p(_STR, "the session forgotten"),
            "ids": {**_STRS, "description": "the observations or lessons forgotten"},
            "observations": _p(_INT, "observations deleted"),
            "lessons": _p(_INT, "lessons deleted"),
            "wordings_removed": _p(
                _INT, "wordings of the deleted lessons taken out of other lessons' histories"
            ),
            "proposals_blanked": _p(
                _INT, "review proposals that wrote or would edit them, now without their text"
            ),
            "superseded_forgotten": {
                **_STRS,
                "description": "lessons they had replaced, forgotten (hidden, restorable)",
            },
            "working_memory": _p(_BOOL, "the session had working memory, now deleted"),
            "actions": _p(_INT, "actions made in the session, deleted"),
            "links": _p(_INT, "links removed with them"),
            "audit_entries_blanked": _p(_INT, "audit entries whose words became [forgotten]"),
            "quotes_blanked": _p(
                _INT,
                "session summaries and audit entries whose quote of a forgotten observation "
                "(as crystallize writes it) became [forgotten]",
            ),
            "lessons_quoting": {
                **_STRS,
                "description": (
                    "lessons that say a forgotten observation word for word (reflect writes "
                    "some so): records of their own, left as they are; lesson delete takes them"
                ),
            },
            "checkpoints_may_hold": {
                **_STRS,
                "description": "checkpoints taken since, which keep their copies until deleted",
            },
        },
    ),
    "profile": PROFILE,
    "profiles": _list("Project profiles, by project.", PROFILE),
    "profile_write": _or_proposed(PROFILE),
    "action": ACTION,
    "action_write": _or_proposed(ACTION),
    "actions": _list("Actions.", ACTION),
    "link": LINK,
    "links": _list("Links.", LINK),
    "record_links": _obj(
        "A record's links, both ways.",
        {
            **_END["properties"],
            "outgoing": _list(
                "what it links to, oldest first",
                _obj("A link out.", {**LINK["properties"], "target": _END}),
            ),
            "incoming": _list(
                "what links to it, oldest first",
                _obj("A link in.", {**LINK["properties"], "source": _END}),
            ),
        },
        ("id",),
    ),
    "crash": CRASH,
    "observation": OBSERVATION,
    "session": SESSION,
    "sessions": _list("Sessions, newest first.", SESSION),
    "session_detail": _obj(
        "A session with its observations.",
        {
            **SESSION["properties"],
            "observations": _list("its observations, oldest first", OBSERVATION),
        },
        ("id",),
    ),
    "lesson": LESSON,
    "lessons": _list("Lessons, best first.", LESSON),
    "lesson_write": _or_proposed(
        _obj(
            "The saved lesson and what the save did.",
            {
                **LESSON["properties"],
                "action": _p(_STR, "created, reinforced, superseded or kept-both"),
                "duplicate_of": _p([_STR, "null"], "the lesson it reinforced or superseded"),
                "near_duplicate_of": _p(
                    [_STR, "null"], "the similar (not identical) live lesson found, if any"
                ),
                "similarity": _p([_NUM, "null"], "how similar that lesson is (0-100)"),
                "exact": _p(_BOOL, "the same words as that lesson"),
                "starts_forgotten": _p(_BOOL, "saved at or below the forget threshold"),
            },
        )
    ),
    "lesson_edit": _or_proposed(LESSON),
    "rule": RULE,
    "rule_write": _or_proposed(RULE),
    "rules": _list("Rules.", RULE),
    "card": CARD,
    "card_edit": _or_proposed(CARD),
    "cards": _list("Mistake cards, most seen first.", CARD),
    "slot": SLOT,
    "slot_write": _or_proposed(SLOT),
    "slots": _list("Slots in context order.", SLOT),
    "wm_key": WM_KEY,
    "wm_keys": _list("Live keys, sorted.", WM_KEY),
    "wm_task": WM_TASK,
    "wm_key_names": {**_STRS, "description": "Live key names, sorted."},
    "wm_exists": _obj(
        "Whether a key is live.",
        {
            "key": _p(_STR, "the key"),
            "exists": _p(_BOOL, "live in the session"),
            "scope": _p([_STR, "null"], "where it came from (null when it does not exist)"),
        },
    ),
    "wm_values": {
        "type": "object",
        "description": "Every live key's value, by key; `_scopes` maps each inherited key to "
        "its scope, `_using_fallback` is true while kept in process memory.",
    },
    "wm_cleared": _obj(
        "The keys a clear deleted.",
        {
            "session_id": _p([_STR, "null"], "the session (null for a scope)"),
            "scope": _p(_STR, "session, or the scope cleared"),
            "cleared": {**_STRS, "description": "keys"},
        },
    ),
    "scratch_cleared": _obj(
        "How many scratchpad notes went.",
        {"session_id": _p(_STR, "the session"), "cleared": _p(_INT, "notes deleted")},
    ),
    "wm_stats": _obj(
        "What a session's working memory holds.",
        {
            "session_id": _p([_STR, "null"], "the session (null for a scope)"),
            "scope": _p(_STR, "session, or the scope counted"),
            "total_keys": _p(_INT, "user keys, plus the task state and the scratchpad"),
            "user_keys": _p(_INT, "live user keys"),
            "checkpoints": _p(_INT, "working-memory checkpoints"),
            "scratchpad_entries": _p(_INT, "scratchpad notes"),
            "has_task_state": _p(_BOOL, "a task state is set"),
            "ttl_keys": _p(_INT, "live keys with a TTL"),
            "inherited_keys": _p(_INT, "keys seen from a scope and not held by the session"),
            "scope_keys": _p("object", "live keys of each scope the session inherits from"),
            "using_fallback": _p(_BOOL, "answered from process memory, not the store"),
        },
    ),
    "scratch_entry": SCRATCH,
    "scratch_entries": _list("Scratchpad notes, oldest first.", SCRATCH),
    "wm_checkpoint": WM_CHECKPOINT,
    "wm_checkpoints": _list("Working-memory checkpoints, oldest first.", WM_CHECKPOINT),
    "checkpoint": CHECKPOINT,
    "checkpoint_restore": _or_proposed(CHECKPOINT),
    "checkpoints": _list("Store checkpoints, oldest first.", CHECKPOINT),
    "diff": _obj(
        "What changed between a checkpoint and now (or two checkpoints).",
        {
            "from": _p(_STR, "the older side"),
            "to": _p(_STR, "the newer side (now, or a checkpoint)"),
            "tables": _p("object", "per table: added, removed and changed ids"),
        },
    ),
    "consolidation": _obj(
        "What a consolidation added.",
        {
            "source": _p(_STR, "heuristic, external or llm"),
            "engine": _p(_STR, "which did the work: llm, external or heuristic"),
            "added": {**_STRS, "description": "the new global rules"},
            "proposed": {**_STRS, "description": "ids of the rule proposals review holds"},
            "fallback_reason": _p([_STR, "null"], "why the external consolidator was not used"),
        },
    ),
    "reflection": _obj(
        "The lessons a reflection wrote or proposed.",
        {
            "engine": _p(_STR, "llm or heuristic"),
            "fallback_reason": _p([_STR, "null"], "why no model was asked"),
            "session": _p(_STR, "the session's id"),
            "lessons": {
                "type": "array",
                "description": "each lesson: its text, its id (a proposal's while review "
                "holds it) and whether it was proposed",
                "items": _obj(
                    "A reflected lesson.",
                    {
                        "text": _p(_STR, "the lesson's words"),
                        "id": _p(_STR, "the lesson's id, or the proposal's"),
                        "proposed": _p(_BOOL, "waits for review"),
                    },
                ),
            },
        },
    ),
    "crystallization": _obj(
        "The summary a crystallization wrote or proposed.",
        {
            "engine": _p(_STR, "llm or heuristic"),
            "fallback_reason": _p([_STR, "null"], "why no model was asked"),
            "session": _p(_STR, "the session's id"),
            "summary": _p(_STR, "the summary"),
            "proposed": _p(_BOOL, "waits for review"),
            "proposal": _p([_STR, "null"], "the proposal's id while review holds it"),
        },
    ),
    "hits": _list("Search hits, best first.", HIT),
    "record_of_kind": _obj(
        "A record read whole by its id.",
        {
            "kind": _p(_STR, "its kind (as search names it)"),
            "id": _p(_STR, "its id"),
            "record": _p("object", "the record, as the operation that shows its kind returns it"),
        },
        ("kind", "id", "record"),
    ),
    "audit_entries": _list("Audit entries, newest first.", AUDIT),
    "stats": _obj(
        "Counts, per-task scores and rules, mistake and card counts, the top mistake cards.",
        {
            "counts": _p("object", "records per table"),
            "tasks": _p("object", "per task: episodes, mean score (3 decimals), active rules"),
            "rules": _p("object", "active rules: global, and per task in tasks"),
            "mistakes": _p(_INT, "distinct mistakes"),
            "successes": _p(_INT, "distinct successes"),
            "mistake_cards": _p(_INT, "mistake cards"),
            "top_mistake_cards": _list("the top five cards", CARD),
            "total_episodes": _p(_INT, "episodes recorded"),
        },
    ),
    "config_change": _obj(
        "A setting's change.",
        {
            "key": _p(_STR, "the setting"),
            "value": _p(_STR, "its value now"),
            "previous": _p(_STR, "its value before"),
        },
    ),
    "config_write": _or_proposed(
        _obj(
            "A setting's change.",
            {
                "key": _p(_STR, "the setting"),
                "value": _p(_STR, "its value now"),
                "previous": _p(_STR, "its value before"),
                "curator_key": _p(
                    "object",
                    "when turning review on registered a curator: its key file (`file`)",
                ),
            },
        )
    ),
    "curator": _obj(
        "The store's curator key.",
        {
            "file": _p(_STR, "the key file"),
            "made": _p("boolean", "whether the file was made now"),
            "registered_at": _p(_STR, "when the key was registered for the store"),
            "registered_by": _p(_STR, "who registered it"),
        },
    ),
    "agent_token": _obj(
        "A new agent token: shown this once, the store keeps only its digest.",
        {
            "agent": _p(_STR, "the agent it acts as"),
            "token": _p(_STR, "the bearer token"),
            "created_at": _p(_STR, "when it was made"),
        },
    ),
    "agent_tokens": _list(
        "Agent tokens (never the tokens themselves).",
        _obj(
            "An agent token.",
            {"agent": _p(_STR, "its agent"), "created_at": _p(_STR, "when it was made")},
        ),
    ),
    "agent_token_revoked": _obj(
        "What a revoke removed.",
        {"agent": _p(_STR, "the agent"), "revoked": _p(_INT, "how many tokens ended")},
    ),
    "config_value": _obj(
        "A setting's value.", {"key": _p(_STR, "the setting"), "value": _p(_STR, "its value")}
    ),
    "config_rows": _list("Every setting.", CONFIG_ROW),
    "proposal": PROPOSAL,
    "proposals": _list("Proposals, oldest first.", PROPOSAL),
    "findings": _list(
        "Lint findings.",
        _obj(
            "A finding.",
            {
                "kind": _p(_STR, "over-limit, stale, duplicate, contradicting, ..."),
                "records": {**_STRS, "description": "the records it is about"},
                "message": _p(_STR, "what to look at, in one line"),
            },
        ),
    ),
    # The CLI's own commands (the CLI is their only door).
    "import_report": _obj("What an import added, per table.", {}),
    "export": _obj("The whole store as one document.", {}),
    "copy_report": _obj("What a copy copied.", {}),
    "doctor_report": _obj("What doctor checked.", {}),
    "none": {"type": "null", "description": "Nothing (the command serves until stopped)."},
}


def is_object(shape: Schema) -> bool:
    """Whether results of this shape are always JSON objects (MCP takes them as they are)."""
    return shape.get("type") == "object"
