"""``memwork import --format letta``: Letta agent files (v1, v2) via the parser and the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memwork.core.base.errors import InvalidInput
from memwork.core.models.slot import DEFAULT_LIMIT
from memwork.core.privacy import scrub
from memwork.core.services.interop import importer, letta
from memwork.core.services.interop.bundle import Bundle
from tests.conftest import NOW, folder_digest

SAMPLES = Path("/work/shared/samples/letta")
EZRA = SAMPLES / "ezra.af"
MEMGPT = SAMPLES / "memgpt_agent.af"
V1 = Path(__file__).resolve().parents[2] / "data" / "letta" / "v1_support_agent.af"
OVER_LIMIT = ["corrections/ezra-mistakes", "system/active-issues", "system/lettabot"]

needs_samples = pytest.mark.skipif(
    not EZRA.exists() or not MEMGPT.exists(), reason="shared Letta samples not present"
)


def _parse(data: Any) -> Bundle:
    bundle = letta.parse(data, now=NOW, source="test.af")
    importer.validate_bundle(bundle)  # every doc is a complete, valid Slot
    return bundle


def _labels(bundle: Bundle) -> list[str]:
    return [s["label"] for s in bundle.tables.get("slots", [])]


def _block(label: Any, value: Any = "text", **extra: Any) -> dict[str, Any]:
    return {"label": label, "value": value, **extra}


def _v2(*blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    ids = [f"block-{n}" for n in range(len(blocks))]
    return {
        "agents": [{"name": "solo", "id": "agent-0", "block_ids": ids, "system": "Be brief."}],
        "blocks": [{"id": i, **b} for i, b in zip(ids, blocks, strict=True)],
        **extra,
    }


def _write(tmp_path: Path, data: Any, name: str = "agent.af") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# -- the real samples, parser level -----------------------------------------------------
@needs_samples
def test_ezra_every_block_becomes_a_slot_in_file_order() -> None:
    raw = json.loads(EZRA.read_text(encoding="utf-8"))
    assert len(raw["blocks"]) == 56
    bundle = _parse(importer.load_document(EZRA))
    slots = bundle.tables["slots"]
    assert bundle.counts() == {"slots": 56}
    assert _labels(bundle) == [b["label"] for b in raw["blocks"]]
    assert [s["position"] for s in slots] == list(range(56))
    # Path-style labels are kept as they are, even the odd double slash.
    assert "corrections/ezra-mistakes" in _labels(bundle)
    assert "system//references/lettabot" in _labels(bundle)
    assert "renamed_labels" not in bundle.note
    for slot, block in zip(slots, raw["blocks"], strict=True):
        assert slot["limit"] == int(block["limit"])
        assert slot["content"] == scrub(block["value"], personal=False)
        assert slot["description"] == scrub(block["description"] or "", personal=False).strip()
        assert slot["read_only"] is bool(block["read_only"])
        assert slot["created_at"] == slot["updated_at"] == "2026-11-01T12:00:00.000000Z"
        assert slot["id"].startswith("slot_")


@needs_samples
def test_ezra_over_limit_blocks_are_kept_whole_and_listed() -> None:
    raw = json.loads(EZRA.read_text(encoding="utf-8"))
    bundle = _parse(raw)
    assert bundle.note["over_limit"] == OVER_LIMIT
    by_label = {s["label"]: s for s in bundle.tables["slots"]}
    blocks = {b["label"]: b for b in raw["blocks"]}
    for label in OVER_LIMIT:
        assert len(by_label[label]["content"]) > by_label[label]["limit"]
        assert by_label[label]["content"] == scrub(blocks[label]["value"], personal=False)
    # Kept whole: slots are curated, so the contact e-mail in active-issues stays.
    assert by_label["system/active-issues"]["content"] == blocks["system/active-issues"]["value"]
    assert len(by_label["corrections/ezra-mistakes"]["content"]) == 28927


@needs_samples
def test_ezra_note_keeps_the_agent_and_counts_what_was_not_imported() -> None:
    raw = json.loads(EZRA.read_text(encoding="utf-8"))
    note = _parse(raw).note
    (agent,) = note["agents"]
    assert agent["name"] == "ezra-super"
    assert agent["system"] == scrub(raw["agents"][0]["system"])
    assert agent["system"].startswith("## Ezra - Letta Developer Support Agent")
    assert agent["agent_type"] == "letta_v1_agent"
    assert agent["model"] == "claude-opus-4-6"
    assert "git-memory-enabled" in agent["tags"]
    assert len(agent["blocks"]) == 21  # the agent lists 21 of the file's 56 blocks
    assert agent["tool_names"] == ["fetch_webpage", "web_search"]  # its tool_ids, by name
    assert note["not_imported"]["tools"] == 6 and note["not_imported"]["skills"] == 4
    assert note["unattached_blocks"] == 35
    assert note["format_shape"] == "v2"
    assert "ignored_keys" not in note  # every top-level key of ezra is known
    # Secrets and tool environment variables are never copied into the note.
    assert "DISCOURSE_API_KEY" not in json.dumps(note)


@needs_samples
def test_memgpt_agent_double_encoding() -> None:
    raw = json.loads(MEMGPT.read_text(encoding="utf-8"))
    assert isinstance(raw, str)  # the file holds a JSON string
    data = importer.load_document(MEMGPT)
    assert isinstance(data, dict) and letta.looks_like(data)
    assert importer.sniff(data) == "letta"
    bundle = _parse(data)
    assert _labels(bundle) == ["human", "persona"]
    assert all(s["limit"] == 20000 for s in bundle.tables["slots"])
    assert "Chad" in bundle.tables["slots"][0]["content"]
    assert bundle.note["agents"][0]["name"] == "memgpt_agent"
    assert bundle.note["agents"][0]["system"].startswith("<base_instructions>")
    assert bundle.note["not_imported"]["messages"] == 1
    # Called directly with the still-encoded string, the parser unwraps it too.
    assert letta.looks_like(raw)
    assert _labels(_parse(raw)) == ["human", "persona"]


# -- the v1 shape -----------------------------------------------------------------------
def test_v1_sample_maps_every_block() -> None:
    data = importer.load_document(V1)
    assert importer.sniff(data) == "letta"
    bundle = _parse(data)
    slots = {s["label"]: s for s in bundle.tables["slots"]}
    assert list(slots) == ["persona", "human", "tickets", "scratch"]
    assert slots["persona"]["read_only"] is True and slots["persona"]["limit"] == 5000
    assert slots["human"]["limit"] == 2000  # given as the string "2000"
    # Curated: the person's e-mail address stays in the slot.
    assert "priya.s@" in slots["human"]["content"]
    assert slots["tickets"]["limit"] == 200 and len(slots["tickets"]["content"]) > 200
    assert slots["scratch"] == {**slots["scratch"], "content": "", "description": ""}
    assert slots["scratch"]["limit"] == DEFAULT_LIMIT  # no limit in the file
    note = bundle.note
    assert note["format_shape"] == "v1" and note["over_limit"] == ["tickets"]
    (agent,) = note["agents"]
    assert agent["name"] == "juniper-support"
    assert agent["system"].startswith("You are Juniper")
    assert agent["tags"] == ["support", "billing"]
    assert agent["model"] == "gpt-4o-mini"
    assert agent["tool_names"] == ["core_memory_append", "send_message", "zendesk_lookup"]
    assert note["not_imported"] == {"messages": 3, "tools": 3}
    assert note["letta_version"] == "0.6.47"
    assert "tool_exec_environment_variables" in note["ignored_keys"]
    assert "in_context_message_indices" in note["ignored_keys"]
    assert "zd-live" not in json.dumps(note)


def test_v1_core_memory_as_objects() -> None:
    by_label = {
        "core_memory": {
            "persona": {"value": "I am terse.", "limit": 100},
            "human": "Name: Sam",
        },
        "name": "a",
    }
    bundle = _parse(by_label)
    assert _labels(bundle) == ["persona", "human"]
    assert bundle.tables["slots"][1]["content"] == "Name: Sam"
    nested = {"core_memory": {"blocks": [_block("persona", "x", limit="10")]}, "name": "b"}
    assert _parse(nested).tables["slots"][0]["limit"] == 10


# -- hand-made edge cases ---------------------------------------------------------------
def test_limits_as_strings_numbers_or_missing() -> None:
    bundle = _parse(
        _v2(
            _block("a", limit="5000"),
            _block("b", limit=" 300 "),
            _block("c", limit=1500.0),
            _block("d"),
            _block("e", limit=None),
        )
    )
    assert [s["limit"] for s in bundle.tables["slots"]] == [5000, 300, 1500, 2000, 2000]


def test_empty_values_are_empty_slots() -> None:
    bundle = _parse(_v2(_block("empty", ""), _block("null", None), {"label": "missing"}))
    assert [s["content"] for s in bundle.tables["slots"]] == ["", "", ""]


def test_labels_outside_the_rule_are_mapped_and_reported() -> None:
    bundle = _parse(_v2(_block("user notes"), _block("café/menü"), _block("a:b?"), _block("ok")))
    assert _labels(bundle) == ["user_notes", "cafe/menu", "a_b_", "ok"]
    renamed = bundle.note["renamed_labels"]
    assert [(r["from"], r["to"], r["item"]) for r in renamed] == [
        ("user notes", "user_notes", "blocks[1]"),
        ("café/menü", "cafe/menu", "blocks[2]"),
        ("a:b?", "a_b_", "blocks[3]"),
    ]
    long = _parse(_v2(_block("x" * 250)))
    assert _labels(long) == ["x" * 200]


def test_several_agents_prefix_only_clashing_labels() -> None:
    data = {
        "agents": [
            {"name": "alpha", "block_ids": ["b-a", "b-org", "b-n1", "b-n2"], "system": "A"},
            {"name": "beta bot", "block_ids": ["b-b", "b-org"], "system": "B"},
        ],
        "blocks": [
            {"id": "b-a", "label": "persona", "value": "I am alpha."},
            {"id": "b-b", "label": "persona", "value": "I am beta."},
            {"id": "b-org", "label": "org", "value": "Shared by both."},
            {"id": "b-n1", "label": "my notes", "value": "one"},
            {"id": "b-n2", "label": "my_notes", "value": "two"},
            {"id": "b-x", "label": "persona", "value": "Nobody's."},
        ],
    }
    bundle = _parse(data)
    assert _labels(bundle) == [
        "alpha/persona",
        "beta_bot/persona",
        "org",  # one block shared by both agents: one slot, label kept
        "alpha/my_notes",
        "alpha/my_notes-2",
        "unattached/persona",
    ]
    assert [a["name"] for a in bundle.note["agents"]] == ["alpha", "beta bot"]
    assert bundle.note["agents"][1]["blocks"] == ["beta_bot/persona", "org"]
    assert bundle.note["unattached_blocks"] == 1
    assert len(bundle.note["renamed_labels"]) == 5


def test_inline_memory_blocks_of_v2_agents() -> None:
    data = {
        "agents": [{"name": "inline", "memory_blocks": [_block("persona", "hi", limit="50")]}],
    }
    assert letta.looks_like(data)
    bundle = _parse(data)
    assert _labels(bundle) == ["persona"] and bundle.tables["slots"][0]["limit"] == 50


def test_unknown_keys_are_ignored_knowingly() -> None:
    data = _v2(_block("a", tags=["x"], hidden=True, metadata={"k": 1}), x_custom=1, zeta=[1])
    bundle = _parse(data)
    assert _labels(bundle) == ["a"]
    assert bundle.note["ignored_keys"] == ["x_custom", "zeta"]


@pytest.mark.parametrize(
    ("block", "field", "rule"),
    [
        (_block("a", 42), "blocks[3].value", "must be a string"),
        (_block("a", limit="lots"), "blocks[3].limit", "whole number"),
        (_block("a", limit=0), "blocks[3].limit", "at least 1"),
        (_block(None), "blocks[3].label", "non-empty string"),
        (_block("   "), "blocks[3].label", "non-empty string"),
        (_block("a", read_only="yes"), "blocks[3].read_only", "true or false"),
        (_block("a", description=7), "blocks[3].description", "must be a string"),
        ("not a block", "blocks[3]", "must be an object"),
    ],
)
def test_a_broken_block_names_item_and_field(block: Any, field: str, rule: str) -> None:
    data = _v2(_block("one"), _block("two"), {})
    data["blocks"][2] = block
    with pytest.raises(InvalidInput) as caught:
        letta.parse(data, now=NOW, source="x")
    assert caught.value.field == field and rule in caught.value.rule


def test_not_a_letta_file() -> None:
    assert not letta.looks_like({"sessions": []})
    assert not letta.looks_like([1, 2])
    with pytest.raises(InvalidInput, match="document"):
        letta.parse({"sessions": []}, now=NOW)
    with pytest.raises(InvalidInput, match="core_memory"):
        letta.parse({"core_memory": 5}, now=NOW)


# -- through the CLI ------------------------------------------------------------------------
@needs_samples
@pytest.mark.parametrize("fmt", [None, "letta", "auto"])
def test_cli_imports_ezra(cli, fmt: str | None) -> None:  # noqa: ANN001
    args = ("import", str(EZRA)) + (("--format", fmt) if fmt else ())
    done = cli(*args)
    assert done.code == 0, done.err
    assert "(letta)" in done.out and "slots: 56 added" in done.out
    listed = cli("slot", "list", "--json").json()
    assert len(listed) == 56
    assert [s["label"] for s in listed if s["over_limit"]] == OVER_LIMIT
    raw = json.loads(EZRA.read_text(encoding="utf-8"))
    by_label = {s["label"]: s for s in listed}
    for block in raw["blocks"]:
        slot = by_label[block["label"]]
        assert slot["content"] == scrub(block["value"], personal=False)
        assert slot["limit"] == int(block["limit"])
        assert slot["description"] == scrub(block["description"] or "", personal=False).strip()
        assert slot["read_only"] is bool(block["read_only"])
    assert cli("slot", "show", "system/lettabot").out.rstrip("\n") == scrub(
        next(b["value"] for b in raw["blocks"] if b["label"] == "system/lettabot"), personal=False
    ).rstrip("\n")
    # Personal details stay in curated slots (a contact address, local paths the agent needs);
    # the one secret in the file (an API key in system/observations) is still removed.
    blocks = {b["label"]: b["value"] for b in raw["blocks"]}
    changed = [b["label"] for b in raw["blocks"] if by_label[b["label"]]["content"] != b["value"]]
    assert changed == ["system/observations"]
    assert "cameron-says-hi" in blocks["system/observations"]
    assert "cameron-says-hi" not in by_label["system/observations"]["content"]
    for label in ("system/active-issues", "system/letta-platform"):
        assert cli("slot", "show", label).out.rstrip("\n") == blocks[label].rstrip("\n")


@needs_samples
def test_cli_json_report_carries_the_note(cli) -> None:  # noqa: ANN001
    report = cli("import", str(MEMGPT), "--json").json()
    assert report["format"] == "letta" and report["added"] == {"slots": 2}
    assert report["note"]["agents"][0]["name"] == "memgpt_agent"
    assert report["note"]["agents"][0]["system"].startswith("<base_instructions>")
    assert report["clashes"] == [] and report["import_id"].startswith("imp_")


def test_cli_imports_v1_with_auto_and_explicit_format(cli, tmp_path: Path) -> None:  # noqa: ANN001
    done = cli("import", str(V1))
    assert done.code == 0, done.err
    assert "slots: 4 added" in done.out
    listed = cli("slot", "list", "--json").json()
    assert [(s["label"], s["over_limit"]) for s in listed] == [
        ("persona", False),
        ("human", False),
        ("tickets", True),
        ("scratch", False),
    ]
    # The same document under another name, forced to letta: every label clashes.
    copy = _write(tmp_path, json.loads(V1.read_text(encoding="utf-8")), "copy.json")
    again = cli("import", str(copy), "--format", "letta")
    assert again.code == 2 and "4 records already exist" in again.err


def test_cli_broken_item_writes_nothing(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    assert cli("slot", "set", "keep", "existing").code == 0
    before = folder_digest(db)
    data = _v2(_block("one"), _block("two"), _block("three", limit="many"), _block("four"))
    done = cli("import", str(_write(tmp_path, data)))
    assert done.code == 2
    assert done.out == ""
    assert done.err.count("\n") == 1 and "blocks[3].limit" in done.err
    assert folder_digest(db) == before
    assert [s["label"] for s in cli("slot", "list", "--json").json()] == ["keep"]


def test_cli_unknown_format_is_refused(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = _write(tmp_path, {"hello": "world"})
    done = cli("import", str(path))
    assert done.code == 2 and "could not tell the file's format" in done.err
    done = cli("import", str(path), "--format", "letta")
    assert done.code == 2 and "not a Letta agent file" in done.err


class TestReimport:
    """Importing the same file twice: clash by label, then each policy does what it says."""

    @pytest.fixture
    def imported(self, cli, tmp_path: Path) -> Path:  # noqa: ANN001
        data = _v2(
            _block("persona", "I am terse.", limit=100, description="who"),
            _block("notes/today", "first line", limit="50"),
            _block("big", "x" * 30, limit=10),
        )
        path = _write(tmp_path, data)
        assert cli("import", str(path)).code == 0
        # A local edit after the import, to see what each policy does with it.
        assert cli("slot", "set", "persona", "Edited locally.").code == 0
        return path

    @staticmethod
    def _slots(cli) -> dict[str, dict[str, Any]]:  # noqa: ANN001
        return {s["label"]: s for s in cli("slot", "list", "--json").json()}

    def test_without_policy_nothing_is_written(self, cli, db: Path, imported: Path) -> None:  # noqa: ANN001
        before = folder_digest(db)
        done = cli("import", str(imported))
        assert done.code == 2
        assert done.err.count("\n") == 1
        assert "3 records already exist" in done.err and "--on-conflict" in done.err
        assert "slots:persona" in done.err
        assert folder_digest(db) == before

    def test_skip_keeps_what_is_there(self, cli, imported: Path) -> None:  # noqa: ANN001
        ids = {k: v["id"] for k, v in self._slots(cli).items()}
        done = cli("import", str(imported), "--on-conflict", "skip")
        assert done.code == 0, done.err
        assert "slots: 3 skipped" in done.out
        slots = self._slots(cli)
        assert {k: v["id"] for k, v in slots.items()} == ids
        assert slots["persona"]["content"] == "Edited locally."

    def test_replace_puts_the_file_back_under_the_same_ids(self, cli, imported: Path) -> None:  # noqa: ANN001
        ids = {k: v["id"] for k, v in self._slots(cli).items()}
        done = cli("import", str(imported), "--on-conflict", "replace")
        assert done.code == 0, done.err
        assert "3 replaced" in done.out
        slots = self._slots(cli)
        assert {k: v["id"] for k, v in slots.items()} == ids
        assert slots["persona"]["content"] == "I am terse."
        assert slots["big"]["over_limit"] is True and slots["big"]["content"] == "x" * 30

    def test_keep_both_adds_numbered_copies(self, cli, imported: Path) -> None:  # noqa: ANN001
        done = cli("import", str(imported), "--on-conflict", "keep-both")
        assert done.code == 0, done.err
        assert "3 kept both" in done.out
        slots = self._slots(cli)
        assert set(slots) == {
            "persona",
            "persona-2",
            "notes/today",
            "notes/today-2",
            "big",
            "big-2",
        }
        assert slots["persona"]["content"] == "Edited locally."
        assert slots["persona-2"]["content"] == "I am terse."
        assert slots["persona-2"]["id"] != slots["persona"]["id"]
        assert slots["notes/today-2"]["limit"] == 50
