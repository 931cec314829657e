"""Isolation between agents at the edges the first walls missed: links, the context's
sources, actions in a session and the HTTP event stream. Agent alice must learn nothing
of bob's records through them, by the CLI, the Python API or the HTTP door (JSON
routes and ``/v1/events``), on a folder and on a Redis store: a record she may not see
answers as an id that does not exist, in the very same words."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client

from memwork import Memory
from memwork.core.base.errors import NotFound
from tests.conftest import curator_args, folder_digest, python_env
from tests.core.ledger.test_isolation import as_agent, populate
from tests.doors import mcp, tool, tool_error
from tests.http_server import Served, client

BOTH_BACKENDS = True

#: Ids no record has, of each kind another agent's record is named by.
MISSING = {"episode": "ep_00000000000000000000", "session": "ses_nosuchsession"}


def setup(cli: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The two agents' records (``populate``), and bob's own link from his episode to the
    shared lesson, with a note in his words."""
    made = populate(cli, monkeypatch)
    bob = made["bob"]
    args = ("link", bob["episode"], made["lesson"], "--note", "bob's elephant note")
    assert as_agent(cli, monkeypatch, "bob", *args).code == 0
    return made


def unknown(text: str, hidden: str, missing: str) -> str:
    """An answer about ``hidden`` worded as the one about ``missing`` would be."""
    return text.replace(hidden, missing)


def test_links_show_make_and_remove_only_what_both_ends_allow_at_the_cli(
    cli: Any, db: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = setup(cli, monkeypatch)
    alice, bob, lesson = made["alice"], made["bob"], made["lesson"]
    run = lambda *a: as_agent(cli, monkeypatch, "alice", *a)  # noqa: E731
    shown = run("--json", "links", lesson)
    assert shown.code == 0, shown.err
    got = shown.json()
    # Her own episode's link is there; bob's incoming link and the person's link to bob's
    # episode are not: neither their ids, nor the note, nor bob's episode id.
    assert [x["target"]["id"] for x in got["outgoing"]] == [alice["episode"]]
    assert got["incoming"] == []
    assert bob["episode"] not in shown.out and "elephant" not in shown.out
    # Bob sees his own link and its note.
    his = as_agent(cli, monkeypatch, "bob", "--json", "links", lesson).json()
    assert [x["note"] for x in his["incoming"]] == ["bob's elephant note"]
    before = folder_digest(db)
    # Removing a link to or from bob's records: not found, as for an id nothing has.
    for source, target in ((lesson, bob["episode"]), (bob["episode"], lesson)):
        refused = run("unlink", source, target)
        source_x, target_x = (
            (s if s != bob["episode"] else MISSING["episode"]) for s in (source, target)
        )
        missing = run("unlink", source_x, target_x)
        assert refused.code == missing.code == 2
        assert unknown(refused.err, bob["episode"], MISSING["episode"]) == missing.err
        assert "link not found" in refused.err
    # Linking to or from bob's records: "record not found", the words of a missing id.
    for hidden in (bob["episode"], bob["session"], f"{bob['session']}/{bob['observation']}"):
        for args in (("link", lesson, hidden), ("link", hidden, lesson)):
            refused = run(*args)
            assert refused.code == 2, (args, refused.out)
            assert refused.err == f"memwork: record not found: {hidden}\n"
    refused = run("link", lesson, bob["episode"])
    missing = run("link", lesson, MISSING["episode"])
    assert unknown(refused.err, bob["episode"], MISSING["episode"]) == missing.err
    assert folder_digest(db) == before
    # Her own records she links as before.
    assert run("link", alice["session"], lesson).code == 0


def test_an_action_in_another_agents_session_is_not_found_at_the_cli(
    cli: Any, db: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = setup(cli, monkeypatch)
    run = lambda *a: as_agent(cli, monkeypatch, "alice", *a)  # noqa: E731
    before = folder_digest(db)
    refused = run("action", "add", "sneak in", "--session", made["bob"]["session"])
    missing = run("action", "add", "sneak in", "--session", MISSING["session"])
    assert refused.code == missing.code == 2
    assert refused.err == f"memwork: session not found: {made['bob']['session']}\n"
    assert unknown(refused.err, made["bob"]["session"], MISSING["session"]) == missing.err
    assert folder_digest(db) == before
    own = run("--json", "action", "add", "mine", "--session", made["alice"]["session"])
    assert own.code == 0 and own.json()["session_id"] == made["alice"]["session"]


def sources(context: dict[str, Any]) -> list[dict[str, Any]]:
    """Every source the JSON context names, over every section's lines."""
    return [ref for s in context["sections"] for line in s["sources"] for ref in line]


def test_the_contexts_sources_name_only_visible_records_at_the_cli(
    cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = setup(cli, monkeypatch)
    for me, other in (("alice", "bob"), ("bob", "alice")):
        args = ("context", "--task", "deploy", "--format", "json")
        shown = as_agent(cli, monkeypatch, me, *args)
        assert shown.code == 0, shown.err
        named = {ref["id"] for ref in sources(json.loads(shown.out))}
        assert made[me]["episode"] in named  # the lesson's link to her own episode
        assert made[other]["episode"] not in shown.out
        assert made[other]["session"] not in shown.out


def test_the_python_api_keeps_links_actions_and_sources_behind_the_wall(
    cli: Any, db: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = setup(cli, monkeypatch)
    bob, lesson = made["bob"], made["lesson"]
    with Memory(db, agent="alice") as alice:
        got = alice.links(lesson)
        assert got["incoming"] == [] and bob["episode"] not in json.dumps(got)
        for source, target in ((bob["episode"], lesson), (lesson, bob["episode"])):
            with pytest.raises(NotFound, match="link not found: "):
                alice.unlink(source, target)
        with pytest.raises(NotFound, match=f"memwork: record not found: {bob['episode']}$"):
            alice.link(lesson, bob["episode"])
        with pytest.raises(NotFound, match=f"memwork: session not found: {bob['session']}$"):
            alice.action_create("sneak in", session=bob["session"])
        context = alice.context("deploy", format="json")
        assert bob["episode"] not in json.dumps(context)
    with Memory(db, agent="bob") as him:
        assert [x["note"] for x in him.links(lesson)["incoming"]] == ["bob's elephant note"]


@pytest.mark.slow
def test_mcp_keeps_links_and_actions_behind_the_wall(
    cli: Any, db: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = setup(cli, monkeypatch)
    bob, lesson = made["bob"], made["lesson"]

    async def body(client: Client) -> dict[str, Any]:
        return {
            "links": await tool(client, "links", id=lesson),
            "unlink": await tool_error(client, "unlink", source=bob["episode"], target=lesson),
            "link": await tool_error(client, "link", source=lesson, target=bob["episode"]),
            "action": await tool_error(
                client, "action_create", title="sneak in", session=bob["session"]
            ),
        }

    got = mcp(db, body, agent="alice")
    assert got["links"]["incoming"] == [] and bob["episode"] not in json.dumps(got["links"])
    assert "link not found" in got["unlink"]
    assert got["link"] == f"memwork: record not found: {bob['episode']}"
    assert got["action"] == f"memwork: session not found: {bob['session']}"


@pytest.fixture
def served(db: Path | str) -> Iterator[Served]:
    server = Served(db, python_env(MEMWORK_NOW="2026-11-01T12:00:00Z", MEMWORK_FSYNC="0"))
    yield server
    code, rest = server.stop()
    assert code == 0, rest


def post(served: Served, name: str, body: dict[str, Any], agent: str) -> httpx2.Response:
    headers = {"X-Memwork-Agent": agent}
    return client().post(f"{served.url}/v1/{name}", json=body, headers=headers, timeout=60)


@pytest.mark.slow
def test_the_http_routes_keep_links_actions_and_sources_behind_the_wall(
    cli: Any, monkeypatch: pytest.MonkeyPatch, served: Served
) -> None:
    made = setup(cli, monkeypatch)
    bob, lesson = made["bob"], made["lesson"]
    shown = post(served, "links", {"id": lesson}, "alice")
    assert shown.status_code == 200 and shown.json()["incoming"] == []
    assert bob["episode"] not in shown.text and "elephant" not in shown.text
    for source, target in ((bob["episode"], lesson), (lesson, bob["episode"])):
        refused = post(served, "unlink", {"source": source, "target": target}, "alice")
        assert refused.status_code == 404 and refused.json()["kind"] == "not_found"
    refused = post(served, "link", {"source": lesson, "target": bob["episode"]}, "alice")
    assert refused.status_code == 404
    assert refused.json()["error"] == f"memwork: record not found: {bob['episode']}"
    body = {"title": "sneak in", "session": bob["session"]}
    refused = post(served, "action_create", body, "alice")
    assert refused.status_code == 404 and "session not found" in refused.text
    context = post(served, "context", {"task": "deploy", "format": "json"}, "alice")
    assert context.status_code == 200 and bob["episode"] not in context.text
    # Bob's own link is still there for him.
    his = post(served, "links", {"id": lesson}, "bob").json()
    assert [x["note"] for x in his["incoming"]] == ["bob's elephant note"]


def read_events(served: Served, agent: str | None, until: str) -> tuple[list[Any], Any]:
    """Open ``/v1/events`` as ``agent`` (None: no agent header); once it is ready, start a
    stream reader thread and return (the commit events read until one names ``until``,
    the thread). The caller writes after this returns and joins the thread."""
    headers = {"X-Memwork-Agent": agent} if agent else {}
    events: list[Any] = []
    ready = threading.Event()

    def reader() -> None:
        with httpx2.stream("GET", f"{served.url}/v1/events", headers=headers, timeout=60) as stream:
            name = ""
            for line in stream.iter_lines():
                if line.startswith("event: "):
                    name = line.removeprefix("event: ")
                elif line.startswith("data: "):
                    if name == "ready":
                        ready.set()
                        continue
                    events.append(json.loads(line.removeprefix("data: ")))
                    if until in line:
                        return

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    assert ready.wait(60), "the event stream never said it was ready"
    return events, thread


@pytest.mark.slow
def test_the_event_stream_carries_only_what_its_reader_may_see(
    cli: Any, monkeypatch: pytest.MonkeyPatch, served: Served
) -> None:
    made = setup(cli, monkeypatch)
    alices, alice_reader = read_events(served, "alice", "giraffe marker")
    operators, operator_reader = read_events(served, None, "giraffe marker")
    # Bob writes first, then alice: had bob's commit reached alice's stream, it would
    # come before her own.
    bob = made["bob"]
    args = ("observe", "--session", bob["session"], "elephant secret")
    assert as_agent(cli, monkeypatch, "bob", *args).code == 0
    args = ("observe", "--session", made["alice"]["session"], "giraffe marker")
    assert as_agent(cli, monkeypatch, "alice", *args).code == 0
    alice_reader.join(60)
    operator_reader.join(60)
    assert not alice_reader.is_alive() and not operator_reader.is_alive()
    seen = [e for event in alices for e in event["entries"]]
    assert "giraffe marker" in json.dumps(seen)
    assert not any(e["actor"].endswith(":bob") for e in seen)
    assert "elephant" not in json.dumps(alices)
    assert all(event["more"] == 0 for event in alices)
    # An operator's stream (no agent id) sees every commit, as it always did.
    everyone = json.dumps(operators)
    assert "elephant secret" in everyone and "giraffe marker" in everyone


@pytest.mark.slow
def test_shared_cards_and_rules_name_only_the_episodes_their_reader_sees(
    cli: Any, db: Path | str, monkeypatch: pytest.MonkeyPatch, served: Served
) -> None:
    """A card and a rule are shared, but the episodes behind them are their agents': each
    agent's lists and ``get`` name only its own (and global) episodes."""
    assert cli("config", "set", "isolation", "agent").code == 0
    episode = {
        "task_id": "deploy",
        "score": 0.95,
        "mistake_cards": [{"mistake_type": "skipped_canary", "bad_decision": "no canary"}],
        "successes": ["ran the canary first"],
    }
    made = {}
    for agent in ("alice", "bob"):
        monkeypatch.setenv("MEMWORK_AGENT", agent)
        done = cli("record-episode", "-", stdin=json.dumps(episode))
        monkeypatch.delenv("MEMWORK_AGENT")
        assert done.code == 0, done.err
        made[agent] = done.out.strip()
    for me, other in (("alice", "bob"), ("bob", "alice")):
        run = lambda *a, me=me: as_agent(cli, monkeypatch, me, *a)  # noqa: E731
        (card,) = run("--json", "card", "list").json()
        (rule,) = run("--json", "rule", "list").json()
        assert card["episode_ids"] == rule["episode_ids"] == [made[me]]
        for record in (card["id"], rule["id"]):
            shown = run("--json", "get", record)
            assert shown.code == 0 and made[me] in shown.out and made[other] not in shown.out
    with Memory(db, agent="alice") as alice:
        assert [c["episode_ids"] for c in alice.list_cards()] == [[made["alice"]]]
    listed = post(served, "list_rules", {}, "bob").json()
    assert [r["episode_ids"] for r in listed] == [[made["bob"]]]


def test_a_callers_doings_with_no_agent_id_on_anothers_records_stay_behind_the_wall(
    cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person at the CLI (no agent id) works on bob's records: alice's history does
    not show those entries (their summaries name bob's session and action),
    bob's does, and the person's doings on shared records stay in view for both."""
    made = setup(cli, monkeypatch)
    bob = made["bob"]
    person = lambda *a: as_agent(cli, monkeypatch, None, *curator_args(), *a)  # noqa: E731
    added = person("--json", "action", "add", "check bob's canary", "--session", bob["session"])
    assert added.code == 0, added.err
    action = added.json()["id"]
    done = person("action", "update", action, "--status", "done")
    assert done.code == 0, done.err
    assert person("--json", "lesson", "add", "Shared: canaries first").code == 0
    for me, sees_bobs in (("alice", False), ("bob", True)):
        shown = as_agent(cli, monkeypatch, me, "--json", "history", "--limit", "500")
        assert shown.code == 0, shown.err
        records = {e["record_id"] for e in shown.json()}
        assert (action in records) is sees_bobs
        assert (bob["session"] in shown.out) is sees_bobs
        assert any("Shared: canaries first" in e["summary"] for e in shown.json())
