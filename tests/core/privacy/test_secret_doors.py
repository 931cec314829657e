"""The secret corpus through every door and every field an agent fills.

One sample of every rule of the adopted set (``tests/core/privacy/test_secret_rules.py`` runs all of
them through the scrubber in-process) goes through the Python API into each field —
episode summary, mistake and error, lesson, slot, observation, working-memory value,
scratchpad and search query — and a representative subset through the CLI, MCP and each
import format. After each, no secret is in the store's bytes, the export, the context,
search results or the history.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memwork.core.ops.memory import Memory
from tests.conftest import NOW, stored_text
from tests.core.doors.test_mcp_server import call, with_server
from tests.core.privacy.test_secret_rules import expected

#: Every Nth rule goes through the slower doors (CLI processes, an MCP server, imports).
STRIDE = 9


def _corpus() -> list[tuple[str, str, list[str]]]:
    """(rule, sample, its secrets): the first sample of every rule."""
    return [(rid, pairs[0][0], pairs[0][1]) for rid, pairs in sorted(expected().items())]


def _subset() -> list[tuple[str, str, list[str]]]:
    return _corpus()[::STRIDE]


def _chunks(samples: list[str], size: int) -> list[str]:
    """Samples joined into texts of at most ``size`` characters (one a line)."""
    out: list[str] = []
    current = ""
    for sample in samples:
        if current and len(current) + len(sample) + 1 > size:
            out.append(current)
            current = ""
        current = f"{current}\n{sample}" if current else sample
    return [*out, current] if current else out


def _leaks(text: str, corpus: list[tuple[str, str, list[str]]]) -> list[str]:
    return sorted({rid for rid, _, secrets in corpus for s in secrets if s in text})


def _outputs(cli: Any, corpus: list[tuple[str, str, list[str]]]) -> dict[str, str]:
    """Everything a person or an agent can read back, through the CLI."""
    out = {
        "export": cli("export").out,
        "context": cli("context", "--task", "corpus").out,
        "context json": cli("context", "--task", "corpus", "--format", "json").out,
        "history": cli("history", "--limit", "100000", "--json").out,
        "history text": cli("history", "--limit", "100000").out,
        "lessons": cli("lesson", "list", "--all", "--json").out,
        "slots": cli("slot", "list", "--json").out,
        "wm": cli("wm", "--session", "s1", "list", "--json").out,
        "scratch": cli("wm", "--session", "s1", "scratch", "list", "--json").out,
        "session": cli("session", "show", "s1", "--json").out,
    }
    for rid, sample, _ in corpus:
        words = " ".join(sample.split()[:3])[:200] or "corpus"
        out[f"search {rid}"] = cli("search", words, "--json", "--limit", "50").out
    return out


def _no_leaks(db: Path, cli: Any, corpus: list[tuple[str, str, list[str]]]) -> None:
    assert _leaks(stored_text(db), corpus) == [], "store bytes"
    cache = Path(db) / "cache"
    if cache.exists():
        cached = "".join(p.read_text() for p in cache.rglob("*.txt"))
        assert _leaks(cached, corpus) == [], "search cache"
    for what, text in _outputs(cli, corpus).items():
        assert _leaks(text, corpus) == [], what


def _write_everything_api(memory: Memory, corpus: list[tuple[str, str, list[str]]]) -> None:
    samples = [sample for _, sample, _ in corpus]
    memory.start_session(title="corpus")
    for chunk in _chunks(samples, 20_000):
        memory.record_episode(
            {
                "task_id": "corpus",
                "score": 0.2,
                "summary": chunk,
                "mistakes": chunk.split("\n")[:50],
                "errors": [{"error_type": "LeakError", "message": chunk}],
                "mistake_cards": [{"mistake_type": "leak", "evidence": chunk[:300]}],
            }
        )
    for n, chunk in enumerate(_chunks(samples, 3_500)):
        memory.add_lesson(chunk, scope="task:corpus", on_duplicate="keep-both")
        memory.set_slot(f"corpus-{n}", chunk, limit=100_000)
        memory.observe("s1", chunk, kind="tool")
        memory.wm_set("s1", f"note-{n}", chunk)
        memory.wm_set("s1", f"nested-{n}", {"lines": chunk.split("\n")})
        memory.scratch_add("s1", chunk)
    for _, sample, _ in corpus:
        memory.search(sample[:4000])  # a query is never stored or echoed


@pytest.mark.slow
def test_every_rule_through_the_python_api(cli, db: Path) -> None:  # noqa: ANN001
    corpus = _corpus()
    assert len(corpus) >= 200
    _write_everything_api(Memory(db, clock=lambda: NOW), corpus)
    _no_leaks(db, cli, corpus)


@pytest.mark.slow
def test_a_subset_through_the_cli(cli, db: Path) -> None:  # noqa: ANN001
    corpus = _subset()
    samples = [sample for _, sample, _ in corpus]
    assert cli("session", "start", "--title", "corpus").code == 0
    for n, sample in enumerate(samples):
        episode = {
            "task_id": "corpus",
            "score": 0.2,
            "summary": sample,
            "mistakes": [sample],
            "errors": [{"error_type": "LeakError", "message": sample}],
        }
        assert cli("record-episode", stdin=json.dumps(episode)).code == 0
        assert cli("lesson", "add", sample, "--scope", "task:corpus").code == 0
        assert cli("slot", "set", f"corpus-{n}", sample, "--limit", "100000").code == 0
        assert cli("observe", "--session", "s1", sample).code == 0
        assert cli("wm", "--session", "s1", "set", f"note-{n}", sample).code == 0
        assert cli("wm", "--session", "s1", "scratch", "add", sample).code == 0
        searched = cli("search", sample[:4000])
        assert _leaks(searched.out + searched.err, corpus) == []
    _no_leaks(db, cli, corpus)


@pytest.mark.slow
def test_a_subset_through_mcp(cli, db: Path) -> None:  # noqa: ANN001
    corpus = _subset()
    samples = [sample for _, sample, _ in corpus]

    async def body(client: Any) -> list[str]:
        seen = []
        for n, sample in enumerate(samples):
            episode = {
                "task_id": "corpus",
                "score": 0.2,
                "summary": sample,
                "mistakes": [sample],
                "errors": [{"error_type": "LeakError", "message": sample}],
            }
            await call(client, "record_episode", episode=episode)
            await call(client, "add_lesson", text=sample, scope="task:corpus")
            await call(client, "set_slot", label=f"corpus-{n}", text=sample, limit=100000)
            await call(client, "observe", session="s1", text=sample)
            await call(client, "wm_set", session="s1", key=f"note-{n}", value=sample)
            await call(client, "scratch_add", session="s1", text=sample)
            seen.append(json.dumps(await call(client, "search", query=sample[:4000])))
        seen.append(await call(client, "get_context", task="corpus"))
        seen.append(json.dumps(await call(client, "list_lessons", all=True)))
        seen.append(json.dumps(await call(client, "wm_list", session="s1")))
        return seen

    for text in with_server(db, body):
        assert _leaks(text, corpus) == []
    _no_leaks(db, cli, corpus)


def _episodic(samples: list[str]) -> dict[str, Any]:
    return {
        "version": 1,
        "total_episodes": len(samples),
        "last_consolidated_at": 0,
        "global_rules": samples,
        "task_rules": {"corpus": [f"[AVOID] {s}" for s in samples]},
        "episode_log": [
            {
                "timestamp": "2026-11-01T11:00:00Z",
                "task_id": "corpus",
                "score": 0.2,
                "steps": 1,
                "summary": s,
            }
            for s in samples
        ],
        "score_history": {"corpus": [0.2] * len(samples)},
        "mistakes": samples,
        "successes": samples,
        "mistake_cards": [
            {
                "mistake_type": "leak",
                "task_id": "corpus",
                "correct_decision": f"rotate key {n}",
                "evidence": s[:300],
                "lesson": s[:300],
            }
            for n, s in enumerate(samples)
        ],
    }


def _letta(samples: list[str]) -> dict[str, Any]:
    blocks = [
        {"label": f"corpus-{n}", "value": s, "limit": 100000, "description": s[:200]}
        for n, s in enumerate(samples)
    ]
    return {"agents": [{"name": "corpus", "system": "\n".join(samples)}], "blocks": blocks}


def _agentmemory(samples: list[str]) -> dict[str, Any]:
    return {
        "version": "1.0",
        "exportedAt": "2026-11-01T11:00:00Z",
        "sessions": [{"id": "s1", "project": "corpus", "summary": samples[0]}],
        "observations": {
            "s1": [
                {"id": f"o{n}", "type": "tool", "narrative": s, "title": s[:100]}
                for n, s in enumerate(samples)
            ]
        },
        "memories": [{"id": f"m{n}", "content": s} for n, s in enumerate(samples)],
    }


@pytest.mark.parametrize("fmt", ["episodic", "letta", "agentmemory"])
def test_a_subset_through_each_import_format(cli, db: Path, tmp_path: Path, fmt: str) -> None:  # noqa: ANN001
    corpus = _subset()
    samples = [sample for _, sample, _ in corpus]
    document = {"episodic": _episodic, "letta": _letta, "agentmemory": _agentmemory}[fmt](samples)
    source = tmp_path / f"in.{fmt}.json"
    source.write_text(json.dumps(document))
    done = cli("import", str(source), "--format", fmt)
    assert done.code == 0, done.err
    _no_leaks(db, cli, corpus)


def test_a_subset_through_a_memwork_export_written_elsewhere(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    # An export from a store that kept secrets (an older memwork, a hand edit): every
    # text field of it is scrubbed on the way in.
    corpus = _subset()
    samples = [sample for _, sample, _ in corpus]
    assert cli("lesson", "add", "placeholder").code == 0
    document = cli("export").json()
    lesson = document["tables"]["lessons"][0]
    document["tables"]["lessons"] = [
        {**lesson, "id": f"les_{n:026d}", "content": s, "fingerprint": str(n)}
        for n, s in enumerate(samples)
    ]
    document["tables"].pop("audit", None)
    source = tmp_path / "export.json"
    source.write_text(json.dumps(document))
    other = tmp_path / "other"
    from memwork.core.doors.cli.main import main

    assert main(["--db", str(other), "import", str(source)]) == 0
    assert _leaks(stored_text(other), corpus) == []
