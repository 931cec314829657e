"""``--format letta``: Letta agent files (``.af``).

Two shapes are read:

- **v1** (flat): the document *is* one agent, with ``core_memory`` holding its
  memory blocks — a list of ``{label, value, limit, description, read_only, …}``,
  or an object (``{"blocks": [...]}``, ``{label: block}`` or ``{label: text}``).
- **v2**: top-level ``agents`` (each with ``block_ids`` and optionally inline
  ``memory_blocks``), ``blocks``, ``tools``, ``groups``, ``files``, ``sources``,
  ``mcp_servers``, ``skills``, ``metadata``, ``created_at``.

Some files hold the JSON encoded twice; :func:`core.services.interop.importer.load_document`
unwraps that, and :func:`parse` does too when called with the raw string.

Mapping (every block becomes a slot; nothing is dropped):

- ``label`` → ``label``. Characters outside letters, digits and ``_ - . /`` are
  mapped (accents stripped, whitespace and anything else → ``_``, cut to 200
  characters); every renamed label is listed in the note's ``renamed_labels``.
- ``value`` → ``content``, scrubbed and kept whole. A block over its limit stays
  over it (the slot's computed ``over_limit`` flags it; the note lists them).
- ``limit`` (number or numeric string) → ``limit``; missing → 2000.
- ``description`` → ``description`` (scrubbed); ``read_only`` → ``read_only``.
- Position: the file's block order (top-level ``blocks`` first, then inline
  ``memory_blocks`` agent by agent).

Several agents: a block shared by several agents (listed in several
``block_ids``) is one slot. When two *different* blocks carry the same label,
each of them is prefixed with its owning agent's name (``<agent>/<label>``;
``unattached/<label>`` for a block no agent lists), and a ``-2``, ``-3`` suffix
settles what is still equal. Unique labels are never prefixed, so a one-agent
file keeps its labels exactly.

The note keeps, per agent: name, id, type, description, system prompt
(scrubbed), tags, model, tool names and the number of messages; plus how many
tools, messages, files, sources, groups, MCP servers and skills were not
imported, and the top-level keys that were ignored (``ignored_keys``). Tool
environment variables and secrets are never copied.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Any

from ...base import ids
from ...base.clock import iso
from ...base.errors import InvalidInput
from ...domain.slots import check_limit
from ...models.slot import DEFAULT_LIMIT
from ...privacy import scrub
from .bundle import Bundle

#: Top-level keys of a v2 file that the parser reads (``agents``/``blocks``) or
#: counts into the note; any other key is reported in ``ignored_keys``.
V2_KEYS = (
    "agents",
    "blocks",
    "tools",
    "groups",
    "files",
    "sources",
    "mcp_servers",
    "skills",
    "metadata",
    "created_at",
)
#: Top-level keys of a v1 (flat, one agent) file that the parser reads.
V1_KEYS = (
    "core_memory",
    "name",
    "id",
    "agent_id",
    "agent_type",
    "description",
    "system",
    "tags",
    "llm_config",
    "embedding_config",
    "model",
    "tools",
    "messages",
    "version",
    "created_at",
    "updated_at",
)
#: Collections of a v2 file that memwork has no place for: counted in the note.
NOT_IMPORTED = ("tools", "groups", "files", "sources", "mcp_servers", "skills")
LABEL_MAX = 200
_UNSAFE = re.compile(r"[^A-Za-z0-9_\-./]")
_SPACES = re.compile(r"\s+")


# -- sniffing --------------------------------------------------------------------------
def _unwrap(data: Any) -> Any:
    """A JSON string holding the document (double encoding) → the document."""
    import json

    for _ in range(3):
        if not isinstance(data, str):
            break
        try:
            data = json.loads(data)
        except ValueError:
            break
    return data


def looks_like(data: Any) -> bool:
    """Sniff: a Letta agent file (v1 ``core_memory`` or v2 ``agents``/``blocks``)."""
    data = _unwrap(data)
    if not isinstance(data, dict):
        return False
    if "core_memory" in data:
        return True
    agents = data.get("agents")
    if not isinstance(agents, list):
        return False
    if "blocks" in data:
        return True
    return any(isinstance(a, dict) and ("memory_blocks" in a or "block_ids" in a) for a in agents)


# -- helpers shared with other parsers ---------------------------------------------------
def map_label(raw: Any, where: str) -> str:
    """A valid slot label made from ``raw`` (see the module docstring for the mapping).

    ``InvalidInput`` naming ``where`` when nothing usable is left.
    """
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidInput(where, f"must be a non-empty string (got {raw!r})")
    text = unicodedata.normalize("NFKD", raw.strip())
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = _UNSAFE.sub("_", _SPACES.sub("_", text))[:LABEL_MAX]
    return text


def text_field(item: dict[str, Any], key: str, where: str) -> str:
    """A string field that may be missing or null (→ ``""``); anything else is an error."""
    value = item.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"{where}.{key}", f"must be a string (got {type(value).__name__})")
    return value


def flag(value: Any, where: str) -> bool:
    """A boolean that may be missing or null (→ false)."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidInput(where, f"must be true or false (got {value!r})")
    return value


def limit_of(value: Any, where: str) -> int:
    """A slot limit from a number or numeric string; missing → the default."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return DEFAULT_LIMIT
    try:
        return check_limit(value)
    except InvalidInput as exc:
        raise InvalidInput(where, exc.rule) from None


def slot_doc(
    *,
    label: str,
    content: str,
    description: str,
    limit: int,
    read_only: bool,
    position: int,
    stamp: str,
) -> dict[str, Any]:
    """A complete slot document (every field of the model); text is scrubbed here."""
    return {
        # Slots are curated: secrets go, personal details (a contact address) stay.
        "content": scrub(content, personal=False),
        "created_at": stamp,
        "description": scrub(description, personal=False).strip(),
        "id": ids.new_id("slot"),
        "label": label,
        "limit": limit,
        "position": position,
        "read_only": read_only,
        "updated_at": stamp,
    }


def dedupe_labels(entries: list[dict[str, Any]], renamed: list[dict[str, str]]) -> None:
    """Make ``entry["label"]`` unique: owner prefix for shared labels, then ``-n``.

    Each entry has ``label`` (already mapped), ``original`` (the file's label),
    ``where`` (the item's path) and optionally ``owner`` (a label-safe prefix).
    Every entry whose final label differs from its original is appended to
    ``renamed`` with the reasons.
    """
    reasons: dict[int, list[str]] = {}
    for entry in entries:
        if entry["label"] != entry["original"]:
            reasons.setdefault(id(entry), []).append(
                "mapped to the slot label rule (letters, digits, _ - . /; at most 200 characters)"
            )
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry["label"]] = counts.get(entry["label"], 0) + 1
    for entry in entries:
        if counts[entry["label"]] > 1:
            owner = entry.get("owner") or "unattached"
            entry["label"] = f"{owner}/{entry['label']}"[:LABEL_MAX]
            reasons.setdefault(id(entry), []).append(
                "label used by several blocks: prefixed with its agent"
            )
    taken: set[str] = set()
    for entry in entries:
        label = entry["label"]
        if label in taken:
            n = 2
            while _numbered(label, n) in taken:
                n += 1
            label = _numbered(label, n)
            reasons.setdefault(id(entry), []).append("label still repeated: numbered")
        taken.add(label)
        entry["label"] = label
    for entry in entries:
        if entry["label"] != entry["original"]:
            renamed.append(
                {
                    "from": entry["original"],
                    "item": entry["where"],
                    "reason": "; ".join(reasons.get(id(entry), ["cut to 200 characters"])),
                    "to": entry["label"],
                }
            )


def _numbered(label: str, n: int) -> str:
    suffix = f"-{n}"
    return label[: LABEL_MAX - len(suffix)] + suffix


# -- reading blocks ----------------------------------------------------------------------
def _block(item: Any, where: str, *, label: Any = None) -> dict[str, Any]:
    """One block's fields, checked; the label is mapped but not yet de-duplicated."""
    if isinstance(item, str) and label is not None:
        item = {"value": item}  # core_memory given as {label: text}
    if not isinstance(item, dict):
        raise InvalidInput(where, f"must be an object (got {type(item).__name__})")
    raw_label = item.get("label", label)
    mapped = map_label(raw_label, f"{where}.label")
    value = item.get("value", item.get("content"))
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidInput(f"{where}.value", f"must be a string (got {type(value).__name__})")
    return {
        "description": text_field(item, "description", where),
        "label": mapped,
        "letta_id": item.get("id") if isinstance(item.get("id"), str) else None,
        "limit": limit_of(item.get("limit"), f"{where}.limit"),
        "original": raw_label.strip(),
        "read_only": flag(item.get("read_only", item.get("readOnly")), f"{where}.read_only"),
        "value": value,
        "where": where,
    }


def _core_memory_blocks(core: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(core, list):
        return [_block(item, f"{where}[{n}]") for n, item in enumerate(core, start=1)]
    if isinstance(core, dict):
        if isinstance(core.get("blocks"), list):
            return _core_memory_blocks(core["blocks"], f"{where}.blocks")
        return [_block(item, f"{where}.{key}", label=key) for key, item in core.items()]
    if core is None:
        return []
    raise InvalidInput(where, "must be a list of memory blocks (or an object of them)")


def _strings(value: Any) -> list[str]:
    """Tags as Letta writes them: strings, or ``{"tag": ...}`` objects (v1)."""
    out: list[str] = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict):
            item = item.get("tag")
        if isinstance(item, str) and item.strip():
            out.append(scrub(item).strip())
    return out


def _count(value: Any) -> int:
    return len(value) if isinstance(value, list | dict) else 0


def _tool_names(tools: Any) -> dict[str, str]:
    """Tool id (or name) → name, for the tools a file carries."""
    names: dict[str, str] = {}
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            names[str(tool.get("id") or tool["name"])] = tool["name"]
    return names


def _agent_note(
    agent: dict[str, Any], where: str, file_tools: dict[str, str] | None = None
) -> dict[str, Any]:
    llm_config = agent.get("llm_config")
    llm = llm_config if isinstance(llm_config, dict) else {}
    model = agent.get("model") if isinstance(agent.get("model"), str) else None
    tools = set(_tool_names(agent.get("tools")).values())
    known = file_tools or {}
    listed = agent.get("tool_ids")
    tool_ids = listed if isinstance(listed, list) else []
    tools.update(known[t] for t in tool_ids if isinstance(t, str) and t in known)
    return {
        "agent_type": agent.get("agent_type") if isinstance(agent.get("agent_type"), str) else "",
        "blocks": [],
        "description": scrub(text_field(agent, "description", where)).strip(),
        "id": str(agent.get("id") or agent.get("agent_id") or ""),
        "messages": _count(agent.get("messages")),
        "model": model or (llm.get("model") if isinstance(llm.get("model"), str) else "") or "",
        "name": scrub(text_field(agent, "name", where)).strip(),
        "system": scrub(text_field(agent, "system", where)),
        "tags": _strings(agent.get("tags")),
        "tool_names": sorted(tools),
    }


def _owner_prefix(agent: dict[str, Any], number: int) -> str:
    name = agent.get("name")
    if isinstance(name, str) and name.strip():
        return map_label(name, "agent name").replace("/", "_")
    return f"agent-{number}"


# -- parsing ----------------------------------------------------------------------------
def parse(data: Any, *, now: datetime, source: str = "") -> Bundle:
    """Turn a Letta agent file (already JSON-decoded) into a bundle of slots plus a note."""
    data = _unwrap(data)
    if not isinstance(data, dict):
        raise InvalidInput("document", "must be a JSON object (a Letta agent file)")
    if "core_memory" in data:
        blocks, agents, consumed, extra = _parse_v1(data)
    elif isinstance(data.get("agents"), list):
        blocks, agents, consumed, extra = _parse_v2(data)
    else:
        raise InvalidInput("document", "is not a Letta agent file (no core_memory, no agents)")

    renamed: list[dict[str, str]] = []
    dedupe_labels(blocks, renamed)
    stamp = iso(now)
    bundle = Bundle("letta")
    over: list[str] = []
    for position, block in enumerate(blocks):
        doc = slot_doc(
            label=block["label"],
            content=block["value"],
            description=block["description"],
            limit=block["limit"],
            read_only=block["read_only"],
            position=position,
            stamp=stamp,
        )
        if len(doc["content"]) > doc["limit"]:
            over.append(doc["label"])
        bundle.add("slots", doc)

    label_of = {id(b): b["label"] for b in blocks}
    for agent_note, owned in agents:
        agent_note["blocks"] = [label_of[id(b)] for b in owned]
    note: dict[str, Any] = {
        "agents": [a for a, _ in agents],
        "format_shape": "v1" if "core_memory" in data else "v2",
        **extra,
    }
    if source:
        note["source"] = source
    if over:
        note["over_limit"] = over
    if renamed:
        note["renamed_labels"] = renamed
    ignored = sorted(set(data) - set(consumed))
    if ignored:
        note["ignored_keys"] = ignored
    bundle.note = note
    return bundle


AgentEntry = tuple[dict[str, Any], list[dict[str, Any]]]


def _parse_v1(
    data: dict[str, Any],
) -> tuple[list[dict[str, Any]], list[AgentEntry], tuple[str, ...], dict[str, Any]]:
    blocks = _core_memory_blocks(data["core_memory"], "core_memory")
    agent_note = _agent_note(data, "document")
    extra: dict[str, Any] = {
        "not_imported": {
            "messages": _count(data.get("messages")),
            "tools": _count(data.get("tools")),
        }
    }
    for key in ("version", "created_at", "updated_at"):
        if isinstance(data.get(key), str):
            extra[f"letta_{key}"] = data[key]
    return blocks, [(agent_note, blocks)], V1_KEYS, extra


def _parse_v2(
    data: dict[str, Any],
) -> tuple[list[dict[str, Any]], list[AgentEntry], tuple[str, ...], dict[str, Any]]:
    raw_agents = data["agents"]
    raw_blocks = data.get("blocks") or []
    if not isinstance(raw_blocks, list):
        raise InvalidInput("blocks", "must be a list of memory blocks")
    blocks = [_block(item, f"blocks[{n}]") for n, item in enumerate(raw_blocks, start=1)]
    by_id: dict[str, dict[str, Any]] = {}
    for block in blocks:
        if block["letta_id"] is not None:
            by_id.setdefault(block["letta_id"], block)

    agents: list[AgentEntry] = []
    file_tools = _tool_names(data.get("tools"))
    messages = 0
    for number, agent in enumerate(raw_agents, start=1):
        where = f"agents[{number}]"
        if not isinstance(agent, dict):
            raise InvalidInput(where, f"must be an object (got {type(agent).__name__})")
        prefix = _owner_prefix(agent, number)
        owned: list[dict[str, Any]] = []
        block_ids = agent.get("block_ids") or []
        if not isinstance(block_ids, list):
            raise InvalidInput(f"{where}.block_ids", "must be a list of block ids")
        for block_id in block_ids:
            shared = by_id.get(block_id) if isinstance(block_id, str) else None
            if shared is None:
                continue  # a dangling reference: the note's block list shows what was found
            shared.setdefault("owner", prefix)
            owned.append(shared)
        inline = agent.get("memory_blocks") or []
        if not isinstance(inline, list):
            raise InvalidInput(f"{where}.memory_blocks", "must be a list of memory blocks")
        for n, item in enumerate(inline, start=1):
            block = _block(item, f"{where}.memory_blocks[{n}]")
            block["owner"] = prefix
            blocks.append(block)
            owned.append(block)
        messages += _count(agent.get("messages"))
        agents.append((_agent_note(agent, where, file_tools), owned))

    not_imported = {key: _count(data.get(key)) for key in NOT_IMPORTED}
    not_imported["messages"] = messages
    extra: dict[str, Any] = {
        "not_imported": dict(sorted(not_imported.items())),
        "unattached_blocks": sum(1 for b in blocks if "owner" not in b),
    }
    if isinstance(data.get("created_at"), str):
        extra["letta_created_at"] = data["created_at"]
    metadata = data.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("revision_id"), str):
        extra["letta_revision_id"] = metadata["revision_id"]
    return blocks, agents, V2_KEYS, extra
